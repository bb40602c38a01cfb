package identity

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/faulttest"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestKeystoneDown: ingot's link to Keystone (its only one, through a
// fault proxy) goes down — reset (refused at once) and blackholed (silent:
// a validation waits for auth.keystone.timeout). A token validated before
// keeps working until its cache entry ends (auth.token_cache_ttl): a
// create and a show with it are served. A token ingot has not validated is
// answered 503 with Nova's error body, never 500 nor 401 (the token is not
// known bad), and so is a console login; so is the cached token once its
// entry ends. Once the link
// heals both are served again, the server made meanwhile ends ACTIVE and
// is deleted; the history check finds nothing lost or resurrected.
func TestKeystoneDown(t *testing.T) {
	ks := keystonetest.Start(t)
	u, err := url.Parse(ks.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		cut  func(*faulttest.Link)
	}{{"reset", (*faulttest.Link).Reset}, {"blackhole", (*faulttest.Link).Blackhole}} {
		t.Run(mode.name, func(t *testing.T) {
			link := faulttest.New(t, "keystone-"+mode.name, u.Host)
			const ttl = 4 * time.Second
			s := startStack(t, ks, func(c *config.Config) {
				c.Auth.Keystone.AuthURL = link.Rewrite(ks.URL)
				c.Auth.TokenCacheTTL = ttl
				c.Auth.Keystone.Timeout = time.Second
			})
			rec := history.New()
			cached := apitest.New(t, s.url)
			cached.HTTP, cached.Token = rec.Client(30*time.Second), s.toks["member-a"]
			fresh := *cached
			fresh.Token = ks.Token(t, "member-a") // issued by Keystone, never shown to ingot

			validated := time.Now()
			if code := cached.Call("GET", "/v2.1/servers", nil, nil); code != http.StatusOK {
				t.Fatalf("list before the cut: HTTP %d", code)
			}
			mode.cut(link)
			id := cached.Create(map[string]any{"name": "during-" + mode.name, "flavorRef": "1", "imageRef": "debian-12",
				"networks": "auto"})
			if _, code := cached.Get(id); code != http.StatusOK {
				t.Fatalf("show with a cached token, Keystone down: HTTP %d", code)
			}
			if served := time.Since(validated); served > ttl {
				t.Fatalf("the cached token's requests took %s, past the cache TTL %s: the test proves nothing", served, ttl)
			}
			began := time.Now()
			wantUnavailable(t, &fresh, "a token not yet validated")
			refused := time.Since(began)
			if code := consoleLogin(t, s.url); code != http.StatusServiceUnavailable {
				t.Errorf("console login, Keystone down: HTTP %d, want 503", code)
			}
			if code := fresh.Call("POST", "/v2.1/servers", map[string]any{"server": map[string]any{"name": "refused-" + mode.name,
				"flavorRef": "1", "imageRef": "debian-12", "networks": "auto"}}, nil); code != http.StatusServiceUnavailable {
				t.Errorf("create with a token not yet validated, Keystone down: HTTP %d, want 503", code)
			}
			poll.Until(t, ttl+10*time.Second, "the cached token's entry ending", func() (bool, string) {
				var out map[string]json.RawMessage
				code := cached.Call("GET", "/v2.1/servers", nil, &out)
				if code != http.StatusOK && code != http.StatusServiceUnavailable {
					t.Fatalf("cached token, Keystone down: HTTP %d %v, want 200 then 503", code, out)
				}
				return code == http.StatusServiceUnavailable, fmt.Sprint(code)
			})
			ended := time.Since(validated)
			if ended < ttl {
				t.Errorf("the cached token was refused %s after its validation, before the cache TTL %s", ended, ttl)
			}
			wantUnavailable(t, cached, "a token whose cache entry ended")
			link.Heal()
			for _, c := range []*apitest.Client{cached, &fresh} {
				poll.Until(t, 15*time.Second, "served again after the heal", func() (bool, string) {
					code := c.Call("GET", "/v2.1/servers", nil, nil)
					return code == http.StatusOK, fmt.Sprint(code)
				})
			}
			if code := consoleLogin(t, s.url); code != http.StatusSeeOther {
				t.Errorf("console login after the heal: HTTP %d, want 303", code)
			}
			cached.WaitStatus(id, "ACTIVE", time.Minute)
			cached.Delete(id)
			cached.WaitGone(id, time.Minute)
			servers, err := history.Servers(cached.HTTP, s.url, cached.Token)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := history.SimNodes(s.hc, s.app.IronicURL)
			if err != nil {
				t.Fatal(err)
			}
			v := rec.Require(t, history.Final{At: time.Now(), Servers: servers, Nodes: nodes}, history.Bounds{})
			t.Logf("Keystone %s: the cached token served (a create and a show) until its entry ended %s after validation (TTL %s); a new token 503 in %s; after the heal both served, the server ACTIVE, then deleted; %s",
				mode.name, ended.Round(10*time.Millisecond), ttl, refused.Round(time.Millisecond), v)
		})
	}
}

// wantUnavailable: a list with c's token is answered 503 with Nova's body.
func wantUnavailable(t *testing.T, c *apitest.Client, what string) {
	t.Helper()
	var out map[string]struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	code := c.Call("GET", "/v2.1/servers", nil, &out)
	if code != http.StatusServiceUnavailable || len(out) != 1 {
		t.Fatalf("%s, Keystone down: HTTP %d %v, want 503 with one fault member", what, code, out)
	}
	for key, body := range out {
		if body.Code != 503 || body.Message == "" {
			t.Errorf("%s, Keystone down: %s %+v, want Nova's fault body", what, key, body)
		}
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleLogin logs member-a in through the console's form, as a browser
// does; the status of the form's post (303 when logged in).
func consoleLogin(t *testing.T, root string) int {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(root + "/ui/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfRE.FindSubmatch(body)
	if m == nil {
		t.Fatalf("console login form (%d): no CSRF token\n%.1000s", resp.StatusCode, body)
	}
	form := url.Values{"csrf": {string(m[1])}, "username": {"member-a"}, "password": {keystonetest.Password},
		"project": {"a"}, "domain": {"Default"}, "next": {"/ui/servers"}}
	req, _ := http.NewRequest(http.MethodPost, root+"/ui/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", root) // as a browser sends it
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
