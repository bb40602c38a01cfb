package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/policy"
)

// Sessions. With Keystone the session is the user's token, kept in an
// HttpOnly, SameSite=Strict cookie (Secure over https) and sent to the API
// as X-Auth-Token; nothing about it is stored on the server. In noauth the
// session is a random cookie that only anchors the CSRF token.
//
// CSRF: every POST must carry the session's token (an HMAC of the session
// under a key made at start, so a restart asks for a reload) and an Origin,
// or failing that a Referer, of this server. SameSite=Strict already keeps
// the cookie off cross-site requests; the token and the Origin check hold
// without it (noauth has no credential to withhold).
const (
	tokenCookie   = "ingot_token"
	sessionCookie = "ingot_session"
	loginCookie   = "ingot_login" // anchors the login form's CSRF token
	csrfField     = "csrf"
)

// reqCtx is one page request with who asks.
type reqCtx struct {
	w     http.ResponseWriter
	r     *http.Request
	ident auth.Identity
	token string // the Keystone token ("" in noauth)
	csrf  string
	api   *apiClient
}

type pageFunc func(rc *reqCtx) error

// page wraps a page: resolve the session (or send the user to the login
// form), check CSRF on POST, render errors.
func (c *Console) page(pattern string, h pageFunc) {
	c.handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		rc, ok := c.session(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodPost {
			if err := c.checkPost(r, rc.csrf); err != nil {
				c.fail(rc, http.StatusForbidden, err.Error())
				return
			}
		}
		if err := h(rc); err != nil {
			c.fail(rc, statusOf(err), err.Error())
		}
	})
}

// session resolves who asks. false: the answer was sent (a redirect to the
// login form, or an error).
func (c *Console) session(w http.ResponseWriter, r *http.Request) (*reqCtx, bool) {
	rc := &reqCtx{w: w, r: r}
	h := http.Header{}
	var sid string
	if c.cfg.Keystone != nil {
		ck, err := r.Cookie(tokenCookie)
		if err != nil || ck.Value == "" {
			c.toLogin(w, r, "")
			return nil, false
		}
		rc.token, sid = ck.Value, ck.Value
		h.Set("X-Auth-Token", rc.token)
	} else {
		ck, err := r.Cookie(sessionCookie)
		if err == nil && len(ck.Value) >= 22 {
			sid = ck.Value
		} else {
			sid = randomToken()
			http.SetCookie(w, c.cookie(r, sessionCookie, sid, time.Time{}))
		}
	}
	id, err := c.cfg.Auth.Authenticate(r.Context(), h)
	switch {
	case err == nil:
	case errors.Is(err, auth.ErrUnauthenticated):
		c.clearCookie(w, r, tokenCookie)
		c.toLogin(w, r, "Your session has ended; please log in again.")
		return nil, false
	case errors.Is(err, auth.ErrNotProjectScoped):
		c.clearCookie(w, r, tokenCookie)
		c.toLogin(w, r, "ingot requires a project-scoped login.")
		return nil, false
	default:
		c.log.Error("console: authentication unavailable", "err", err)
		http.Error(w, "The identity service is unavailable; try again later.", http.StatusServiceUnavailable)
		return nil, false
	}
	rc.ident = id
	rc.csrf = c.mac("csrf:" + sid)
	rc.api = &apiClient{h: c.cfg.API, ctx: r.Context(), token: rc.token, remote: r.RemoteAddr}
	return rc, true
}

// toLogin sends a GET to the login form (coming back to it afterwards);
// anything else gets a 401.
func (c *Console) toLogin(w http.ResponseWriter, r *http.Request, msg string) {
	if r.Method != http.MethodGet || r.Header.Get(refreshHeader) != "" {
		http.Error(w, "Log in first.", http.StatusUnauthorized)
		return
	}
	q := url.Values{"next": {r.URL.RequestURI()}}
	if msg != "" {
		q.Set("msg", msg)
	}
	http.Redirect(w, r, "/ui/login?"+q.Encode(), http.StatusSeeOther)
}

func (c *Console) cookie(r *http.Request, name, value string, expires time.Time) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/ui/", Expires: expires, HttpOnly: true,
		Secure: c.secure(r), SameSite: http.SameSiteStrictMode}
}

func (c *Console) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	ck := c.cookie(r, name, "", time.Unix(1, 0))
	ck.MaxAge = -1
	http.SetCookie(w, ck)
}

func (c *Console) mac(s string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(s))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

var (
	errCSRF   = errors.New("The form has expired or did not come from this console (CSRF token mismatch); reload the page and try again.")
	errOrigin = errors.New("The request did not come from this console (its Origin is another site's, or missing).")
)

// checkPost verifies a POST's CSRF token and origin.
func (c *Console) checkPost(r *http.Request, want string) error {
	if err := c.checkOrigin(r); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	got := r.PostFormValue(csrfField)
	if got == "" || !hmac.Equal([]byte(got), []byte(want)) {
		return errCSRF
	}
	return nil
}

// checkOrigin: the Origin (or, without one, the Referer) must name this
// server as the browser reached it, or the public URL.
func (c *Console) checkOrigin(r *http.Request) error {
	src := r.Header.Get("Origin")
	if src == "" || src == "null" {
		src = r.Header.Get("Referer")
	}
	if src == "" {
		return errOrigin
	}
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return errOrigin
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if strings.EqualFold(u.Host, r.Host) && u.Scheme == scheme {
		return nil
	}
	if p, err := url.Parse(c.cfg.PublicURL); err == nil && p.Host != "" && strings.EqualFold(u.Host, p.Host) && u.Scheme == p.Scheme {
		return nil
	}
	return errOrigin
}

// loginPage is the login form's data.
type loginPage struct {
	Layout
	Next, Msg, Error   string
	User, Project      string
	Domain, LoginToken string
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Keystone == nil {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	c.renderLogin(w, r, loginPage{Next: safeNext(r.URL.Query().Get("next")), Msg: r.URL.Query().Get("msg"),
		Domain: c.cfg.Keystone.Domain}, http.StatusOK)
}

func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, p loginPage, status int) {
	anchor := randomToken()
	if ck, err := r.Cookie(loginCookie); err == nil && len(ck.Value) >= 22 {
		anchor = ck.Value
	} else {
		http.SetCookie(w, c.cookie(r, loginCookie, anchor, time.Time{}))
	}
	p.LoginToken = c.mac("login:" + anchor)
	p.Layout = Layout{Title: "Log in", Refresh: 0}
	c.render(w, r, status, "login", &p)
}

// login obtains a project-scoped token from Keystone with the form's
// password and keeps it in the session cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Keystone == nil {
		http.NotFound(w, r)
		return
	}
	anchor := ""
	if ck, err := r.Cookie(loginCookie); err == nil {
		anchor = ck.Value
	}
	if err := c.checkPost(r, c.mac("login:"+anchor)); err != nil || anchor == "" {
		if err == nil {
			err = errCSRF
		}
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	k := c.cfg.Keystone
	p := loginPage{Next: safeNext(r.PostFormValue("next")), User: strings.TrimSpace(r.PostFormValue("username")),
		Project: strings.TrimSpace(r.PostFormValue("project")), Domain: strings.TrimSpace(r.PostFormValue("domain"))}
	if p.Domain == "" {
		p.Domain = k.Domain
	}
	password := r.PostFormValue("password")
	if p.User == "" || password == "" || p.Project == "" {
		p.Error = "User, password and project are all required."
		c.renderLogin(w, r, p, http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), k.Timeout)
	defer cancel()
	tok, err := c.issueToken(ctx, p.User, password, p.Project, p.Domain)
	if err != nil {
		p.Error = err.Error()
		status := http.StatusUnauthorized
		if !errors.Is(err, errBadLogin) {
			status = http.StatusServiceUnavailable
		}
		c.renderLogin(w, r, p, status)
		return
	}
	// The API's authenticator validates it (and caches the answer): a
	// token the API would refuse never becomes a session.
	id, err := c.cfg.Auth.Authenticate(r.Context(), http.Header{"X-Auth-Token": {tok}})
	if err != nil {
		p.Error = "Keystone issued a token the API does not accept: " + err.Error()
		c.renderLogin(w, r, p, http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, c.cookie(r, tokenCookie, tok, id.ExpiresAt))
	c.clearCookie(w, r, loginCookie)
	c.log.Info("console: login", "user", id.UserName, "project", id.ProjectName)
	http.Redirect(w, r, p.Next, http.StatusSeeOther)
}

var errBadLogin = errors.New("Invalid user, password or project.")

// issueToken is POST /v3/auth/tokens with the password, scoped to the project.
func (c *Console) issueToken(ctx context.Context, user, password, project, domain string) (string, error) {
	pc, err := openstack.NewClient(c.cfg.Keystone.AuthURL)
	if err != nil {
		return "", err
	}
	pc.HTTPClient = http.Client{Timeout: c.cfg.Keystone.Timeout}
	idc, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		return "", err
	}
	res := tokens.Create(ctx, idc, &tokens.AuthOptions{Username: user, Password: password, DomainName: domain,
		Scope: tokens.Scope{ProjectName: project, DomainName: domain}})
	if res.Err != nil {
		if gophercloud.ResponseCodeIs(res.Err, http.StatusUnauthorized) || gophercloud.ResponseCodeIs(res.Err, http.StatusNotFound) ||
			gophercloud.ResponseCodeIs(res.Err, http.StatusBadRequest) {
			return "", errBadLogin
		}
		c.log.Error("console: keystone login", "err", res.Err)
		return "", errors.New("The identity service is unavailable; try again later.")
	}
	return res.ExtractTokenID()
}

// logout forgets the session and revokes the token in Keystone (best
// effort: the API's token cache may trust it until its TTL passes).
func (c *Console) logout(rc *reqCtx) error {
	c.clearCookie(rc.w, rc.r, tokenCookie)
	if c.cfg.Keystone != nil && rc.token != "" {
		ctx, cancel := context.WithTimeout(rc.r.Context(), c.cfg.Keystone.Timeout)
		defer cancel()
		if err := c.revoke(ctx, rc.token); err != nil {
			c.log.Warn("console: token revocation", "err", err)
		}
	}
	http.Redirect(rc.w, rc.r, "/ui/login?msg="+url.QueryEscape("You are logged out."), http.StatusSeeOther)
	return nil
}

func (c *Console) revoke(ctx context.Context, tok string) error {
	pc, err := openstack.NewClient(c.cfg.Keystone.AuthURL)
	if err != nil {
		return err
	}
	pc.HTTPClient = http.Client{Timeout: c.cfg.Keystone.Timeout}
	pc.SetToken(tok)
	idc, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		return err
	}
	return tokens.Revoke(ctx, idc, tok).Err
}

// safeNext keeps a post-login redirect inside the console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/ui/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/ui/"
	}
	return next
}

// can reports whether the user passes rule on their own project, to decide
// which links to offer (the API still decides the request).
func (rc *reqCtx) can(p *policy.Enforcer, rule string, projectID, userID string) bool {
	creds := policy.Creds{ProjectID: rc.ident.ProjectID, UserID: rc.ident.UserID, DomainID: rc.ident.DomainID, Roles: rc.ident.Roles}
	return p.Allowed(rule, creds, policy.Target{"project_id": projectID, "user_id": userID})
}
