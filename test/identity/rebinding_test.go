package identity

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/config"
)

// doHost sends one request as user with the given Host and extra headers.
func (s *stack) doHost(user, host, method, path string, body any, hdr map[string]string) reply {
	s.t.Helper()
	return s.doWith(user, method, path, body, func(req *http.Request) {
		req.Host = host
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
	})
}

func (s *stack) port() string { return s.url[strings.LastIndex(s.url, ":"):] }

func keypairBody(t *testing.T, name string) map[string]any {
	return map[string]any{"keypair": map[string]any{"name": name, "public_key": ed25519Key(t)}}
}

// TestDNSRebinding: in noauth, a page of another site that points its
// own name at a loopback ingot (Host and Origin evil.example) is answered
// 421 on every API route, so it can neither create a keypair nor read
// os-hypervisors; loopback names, addresses, the listen, public_url and
// replica hosts and api.allowed_hosts are answered; behind a trusted proxy the
// forwarded host is the one checked.
func TestDNSRebinding(t *testing.T) {
	s := startStack(t, nil, func(c *config.Config) {
		c.API.PublicURL = "https://compute.example"
		c.API.AllowedHosts = []string{"ingot.internal"}
	})
	evil := "evil.example" + s.port()
	origin := map[string]string{"Origin": "http://" + evil}
	r := s.doHost("member-a", evil, "POST", "/v2.1/os-keypairs", keypairBody(t, "rebound"), origin)
	if r.status != http.StatusMisdirectedRequest || !strings.Contains(string(r.body), `"computeFault":{"code":421`) {
		t.Fatalf("keypair create with Host %s: %d %s, want a Nova-shaped 421", evil, r.status, r.body)
	}
	for _, p := range []string{"/v2.1/os-hypervisors", "/", "/v2.1/", "/image/v2/images", "/network/v2.0/networks",
		"/volume/v3/" + s.project("a") + "/volumes", "/ingot/v1/nodes", "/ui/"} {
		if r := s.doHost("admin", evil, "GET", p, nil, origin); r.status != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host %s: %d %.200s, want 421", p, evil, r.status, r.body)
		}
	}
	if r := s.doHost("admin", "EVIL.example.", "DELETE", "/v2.1/os-keypairs/rebound", nil, nil); r.status != http.StatusMisdirectedRequest {
		t.Errorf("keypair delete with Host EVIL.example.: %d", r.status)
	}
	if r := s.doHost("", evil, "GET", "/healthz", nil, nil); r.status != 200 {
		t.Errorf("/healthz with Host %s: %d, want 200 (probes name what they like)", evil, r.status)
	}
	var list struct{ Keypairs []any }
	s.must("member-a", "GET", "/v2.1/os-keypairs", nil, 200).decode(t, &list)
	if len(list.Keypairs) != 0 {
		t.Fatalf("keypairs after the rebinding page's create: %v", list.Keypairs)
	}
	for i, host := range []string{"localhost" + s.port(), "127.0.0.1" + s.port(), "[::1]" + s.port(), "127.0.0.2",
		"compute.example", "ingot.internal" + s.port(), "LocalHost.", "ingot-matrix" + s.port()} {
		name := "ok" + string(rune('a'+i))
		if r := s.doHost("member-a", host, "POST", "/v2.1/os-keypairs", keypairBody(t, name), nil); r.status != 200 && r.status != 201 {
			t.Errorf("keypair create with Host %s: %d %s", host, r.status, r.body)
		}
	}

	p := startStack(t, nil, func(c *config.Config) {
		c.API.TrustedProxies = []string{"127.0.0.1/32"}
		c.API.AllowedHosts = []string{"compute.example"}
	})
	fwd := func(h string) map[string]string {
		return map[string]string{"X-Forwarded-Host": h, "X-Forwarded-Proto": "https"}
	}
	if r := p.doHost("member-a", "127.0.0.1"+p.port(), "POST", "/v2.1/os-keypairs", keypairBody(t, "proxied-evil"), fwd("evil.example")); r.status != http.StatusMisdirectedRequest {
		t.Errorf("from the trusted proxy, X-Forwarded-Host evil.example: %d, want 421", r.status)
	}
	if r := p.doHost("member-a", "backend.internal", "POST", "/v2.1/os-keypairs", keypairBody(t, "proxied"), fwd("compute.example:443")); r.status != 200 && r.status != 201 {
		t.Errorf("from the trusted proxy, X-Forwarded-Host compute.example: %d %s", r.status, r.body)
	}
}
