package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/policy"
)

// Every route is registered with how it is guarded (Route): public routes
// (version documents, health, metrics) answer anyone; every other route
// authenticates the caller in wrap and its handler must decide with
// r.authorize. A handler that answers 2xx without having called authorize
// answers 500 instead (statusWriter), so a new route cannot leak by
// forgetting its policy check.

// Route is one registered endpoint, for tests that walk every route.
type Route struct {
	Pattern string // "METHOD /path/{var}"
	Public  bool   // no authentication, no policy
}

// Routes lists the registered endpoints, in registration order.
func (s *Env) Routes() []Route { return append([]Route(nil), s.RouteList...) }

// Forbidden is a 403 in Nova's shape.
func Forbidden(format string, a ...any) error {
	return &APIError{Status: http.StatusForbidden, Message: fmt.Sprintf(format, a...)}
}

// Target is what a policy rule is checked against.
func Target(projectID, userID string) policy.Target {
	return policy.Target{"project_id": projectID, "user_id": userID}
}

// Own is the caller's own project and user: the target of lists and creates.
func (r *Request) Own() policy.Target { return Target(r.Ident.ProjectID, r.Ident.UserID) }

// Can reports whether the caller passes rule on t (no error, no record).
func (r *Request) Can(rule string, t policy.Target) bool {
	return r.pol.Allowed(rule, r.creds(), t)
}

// Authorize checks rule on t and records that the route decided; it
// answers Nova's 403 when the caller may not.
func (r *Request) Authorize(rule string, t policy.Target) error {
	r.Authorized = true
	if r.Can(rule, t) {
		return nil
	}
	r.denied = rule
	return Forbidden("Policy doesn't allow %s to be performed.", rule)
}

// Sees reports whether the caller may see a resource of projectID at all:
// its own project's, or every project's for an admin (Nova's
// context.is_admin). What it may do with it is the route's rule.
func (r *Request) Sees(projectID string) bool {
	return projectID == r.Ident.ProjectID || r.Can(policy.ContextIsAdmin, r.Own())
}

func (r *Request) creds() policy.Creds {
	return policy.Creds{ProjectID: r.Ident.ProjectID, UserID: r.Ident.UserID, DomainID: r.Ident.DomainID, Roles: r.Ident.Roles}
}

// authenticate resolves the caller, answering as keystonemiddleware does
// in front of Nova: 401 for no, a bad or an expired token.
func (s *Env) authenticate(w http.ResponseWriter, r *Request) bool {
	id, err := s.Cfg.Auth.Authenticate(r.Context(), r.Header)
	switch {
	case err == nil:
		r.Ident = id
		return true
	case errors.Is(err, auth.ErrUnauthenticated):
		r.authFailure = authFailureClass(s.Cfg.Auth, r.Header)
		if s.Cfg.AuthURL != "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Keystone uri=%q", s.Cfg.AuthURL))
		}
		WriteJSON(w, http.StatusUnauthorized, keystoneError{Error: keystoneErrorBody{
			Code: http.StatusUnauthorized, Message: "The request you have made requires authentication.", Title: "Unauthorized"}})
	case errors.Is(err, auth.ErrNotProjectScoped):
		r.authFailure = "token not project-scoped"
		writeError(w, http.StatusForbidden, "ingot requires a project-scoped token.")
	default:
		s.Log.Error("api: authentication unavailable", "request_id", r.ID, "err", err)
		writeError(w, http.StatusServiceUnavailable, "The identity service is unavailable; try again later.")
	}
	return false
}

// authFailureClass is why a caller was not authenticated, for the audit
// line: a class, never the token.
func authFailureClass(a auth.Authenticator, h http.Header) string {
	switch {
	case isNoAuth(a):
		return "malformed noauth headers"
	case h.Get("X-Auth-Token") == "":
		return "no token"
	}
	return "token rejected (unknown, revoked or expired)"
}

func isNoAuth(a auth.Authenticator) bool {
	switch a.(type) {
	case auth.NoAuth, *auth.NoAuth:
		return true
	}
	return false
}

// jsonBody refuses a request body that is not JSON (Nova's 415): a form
// or text/plain POST from a web page of another origin needs no CORS
// preflight, so it must not act.
func jsonBody(r *http.Request) error {
	if r.ContentLength == 0 || (r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch) {
		return nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))) {
		return nil
	}
	return &APIError{Status: http.StatusUnsupportedMediaType, Message: "Unsupported Content-Type"}
}

type baseKey struct{}

// publicBase is the scheme://host links are built from: the configured
// public URL, else the address the connection arrived on (never the Host
// header, which the client writes); X-Forwarded-Host/-Proto only from a
// trusted proxy.
func (s *Env) publicBase(r *http.Request) string {
	scheme, host := "http", ""
	if r.TLS != nil {
		scheme = "https"
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		host = a.String()
	}
	if s.Cfg.PublicURL != "" {
		scheme, host, _ = strings.Cut(s.Cfg.PublicURL, "://")
	}
	if s.fromTrustedProxy(r) {
		if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
			scheme = p
		}
		if h := r.Header.Get("X-Forwarded-Host"); h != "" && validHost(h) {
			host = h
		}
	}
	if host == "" {
		host = "localhost"
	}
	return scheme + "://" + host
}

func (s *Env) fromTrustedProxy(r *http.Request) bool {
	if len(s.Cfg.TrustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range s.Cfg.TrustedProxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// validHost accepts host[:port] made of the characters of a DNS name or an
// address, so a forwarded header cannot inject into a link.
func validHost(h string) bool {
	if len(h) > 255 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-:[]", c)) {
			return false
		}
	}
	return true
}

// BaseURL is the request's public root (see publicBase).
func BaseURL(r *http.Request) string {
	if b, ok := r.Context().Value(baseKey{}).(string); ok {
		return b
	}
	return "http://localhost"
}

func withBase(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseKey{}, base)
}

// unguarded is logged when a non-public handler answered without a policy check.
func (s *Env) unguarded(r *Request) {
	s.Log.Error("api: route answered without a policy check; refused", slog.String("request_id", r.ID),
		slog.String("method", r.Method), slog.String("path", r.URL.Path))
}

// OwnRule guards a handler whose target is the caller's own project (a
// list, a catalogue read): rule is checked before h runs.
func OwnRule(rule string, h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *Request) error {
		if err := r.Authorize(rule, r.Own()); err != nil {
			return err
		}
		return h(w, r)
	}
}

// keystoneError is the 401 body in Keystone's shape, which clients read
// to know they must authenticate.
type keystoneError struct {
	Error keystoneErrorBody `json:"error"`
}

type keystoneErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Title   string `json:"title"`
}
