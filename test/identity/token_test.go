package identity

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// waitStatus polls GET path with token until it answers want (deadline).
func waitStatus(t *testing.T, s *stack, token, path string, want int, within time.Duration) {
	t.Helper()
	poll.Until(t, within, fmt.Sprintf("GET %s answering %d", path, want), func() (bool, string) {
		req, _ := http.NewRequest("GET", s.url+path, nil)
		req.Header.Set("X-Auth-Token", token)
		resp, err := s.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == want, resp.Status
	})
}

// TestTokens: a missing, malformed or unknown token is 401 in
// keystonemiddleware's shape; a token revoked in Keystone is refused once
// the cache TTL has passed; an expired token is refused at its expiry; a
// token is validated once per TTL however many requests carry it.
func TestTokens(t *testing.T) {
	ks := keystonetest.StartWith(t, keystonetest.Options{TokenExpiration: 4 * time.Second})
	t.Logf("Keystone set up in %s", ks.SetupTime.Round(time.Millisecond))
	const ttl = 1500 * time.Millisecond
	s := startStack(t, ks, func(c *config.Config) { c.Auth.TokenCacheTTL = ttl })

	t.Run("bad", func(t *testing.T) {
		for name, tok := range map[string]string{"none": "", "garbage": "garbage", "long": strings.Repeat("x", 9000),
			"forged fernet": "gAAAAABnot-a-real-token-at-all-0123456789abcdef"} {
			req, _ := http.NewRequest("GET", s.url+"/v2.1/servers", nil)
			if tok != "" {
				req.Header.Set("X-Auth-Token", tok)
			}
			resp, err := s.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Error struct {
					Code    int
					Message string
				}
			}
			r := reply{status: resp.StatusCode}
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			resp.Body.Close()
			r.body = buf[:n]
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s token: %d %s", name, r.status, r.body)
				continue
			}
			r.decode(t, &body)
			if body.Error.Code != 401 || body.Error.Message == "" || !strings.Contains(resp.Header.Get("WWW-Authenticate"), ks.URL) {
				t.Errorf("%s token: body %s, WWW-Authenticate %q", name, r.body, resp.Header.Get("WWW-Authenticate"))
			}
		}
		// The version documents need no token.
		s.must("", "GET", "/v2.1/", nil, 200)
	})

	t.Run("revoked", func(t *testing.T) {
		tok := ks.Token(t, "member-a")
		waitStatus(t, s, tok, "/v2.1/servers", 200, 5*time.Second)
		revoked := time.Now()
		ks.Revoke(t, tok)
		waitStatus(t, s, tok, "/v2.1/servers", 401, ttl+5*time.Second)
		took := time.Since(revoked)
		if took > ttl+2*time.Second {
			t.Errorf("revoked token refused after %s; the cache TTL is %s", took, ttl)
		}
		t.Logf("revoked token refused %s after the revocation (cache TTL %s)", took.Round(time.Millisecond), ttl)
	})

	t.Run("expired", func(t *testing.T) {
		s2 := startStack(t, ks, nil) // the default 5-minute TTL: expiry, not the TTL, ends the entry
		tok := ks.Token(t, "reader-a")
		issued := time.Now()
		waitStatus(t, s2, tok, "/v2.1/servers", 200, 5*time.Second)
		waitStatus(t, s2, tok, "/v2.1/servers", 401, 15*time.Second)
		t.Logf("token refused %s after issue (Keystone token expiration 4 s)", time.Since(issued).Round(time.Millisecond))
	})

	t.Run("calls per 1000 requests", func(t *testing.T) {
		s3 := startStack(t, ks, func(c *config.Config) { c.Auth.TokenCacheTTL = time.Minute })
		users := []string{"admin", "member-a", "reader-a", "member-b", "reader-b"}
		toks := map[string]string{}
		for _, u := range users {
			toks[u] = ks.Token(t, u)
		}
		before := s3.app.Keystone.Calls()
		var wg sync.WaitGroup
		errs := make(chan string, 1000)
		start := time.Now()
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < 1000; i += 8 {
					req, _ := http.NewRequest("GET", s3.url+"/v2.1/servers", nil)
					req.Header.Set("X-Auth-Token", toks[users[i%len(users)]])
					resp, err := s3.hc.Do(req)
					if err != nil {
						errs <- err.Error()
						continue
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errs <- resp.Status
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		calls := s3.app.Keystone.Calls() - before
		if calls > int64(len(users)) {
			t.Errorf("%d Keystone calls for 1000 requests with %d tokens, want at most %d", calls, len(users), len(users))
		}
		t.Logf("Keystone calls per 1,000 requests (5 tokens, 8 concurrent clients, cache TTL 1 min): %d; 1000 requests in %s",
			calls, time.Since(start).Round(time.Millisecond))
	})
}
