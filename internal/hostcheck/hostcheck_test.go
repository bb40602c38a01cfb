package hostcheck

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestAllowed(t *testing.T) {
	proxy := netip.MustParsePrefix("10.0.0.0/8")
	a := New([]netip.Prefix{proxy}, "https://Compute.Example:8774", "ingot.internal", "127.0.0.1", "")
	for _, c := range []struct {
		host, remote, fwd string
		want              bool
	}{
		{"localhost:8774", "127.0.0.1:1", "", true},
		{"127.0.0.1:8774", "127.0.0.1:1", "", true},
		{"[::1]:8774", "[::1]:1", "", true},
		{"192.0.2.7", "127.0.0.1:1", "", true},
		{"compute.example", "127.0.0.1:1", "", true},
		{"COMPUTE.example.:443", "127.0.0.1:1", "", true},
		{"ingot.internal:8774", "127.0.0.1:1", "", true},
		{"", "127.0.0.1:1", "", true},
		{"evil.example", "127.0.0.1:1", "", false},
		{"evil.example:8774", "127.0.0.1:1", "", false},
		{"localhost.evil.example", "127.0.0.1:1", "", false},
		{"127.0.0.1.evil.example", "127.0.0.1:1", "", false},
		// The forwarded host counts from a trusted proxy only.
		{"backend", "10.1.2.3:1", "compute.example", true},
		{"127.0.0.1", "10.1.2.3:1", "evil.example, compute.example", false},
		{"127.0.0.1", "192.0.2.1:1", "evil.example", true},
	} {
		r := &http.Request{Host: c.host, RemoteAddr: c.remote, Header: http.Header{}}
		if c.fwd != "" {
			r.Header.Set("X-Forwarded-Host", c.fwd)
		}
		if got := a.Allowed(r); got != c.want {
			t.Errorf("Host %q from %s (forwarded %q): %v, want %v", c.host, c.remote, c.fwd, got, c.want)
		}
	}
	if (&Allowlist{}).AllowedHost("evil.example") || !(&Allowlist{}).AllowedHost("localhost") {
		t.Error("the zero Allowlist")
	}
}
