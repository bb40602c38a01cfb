// Package hostcheck decides whether a request's Host names this server,
// the defence against DNS rebinding: a page of another site points its own
// name at this server's address and becomes same-origin with it, so a
// browser sends it whatever the server answers to ambiently (noauth's API,
// the console's session cookie). The rebinding page's Host is its own
// name, which is never one this server was told it answers to.
package hostcheck

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Allowlist is the names a Host may carry. An address (any IP literal)
// and localhost are always allowed: a browser sends an address as Host
// only when it connected to that address itself, with no name to rebind.
// The zero value allows those only. Safe for concurrent use.
type Allowlist struct {
	names   map[string]bool
	proxies []netip.Prefix
}

// New allows names (host, host:port or scheme://host[:port]; case and a
// trailing dot ignored) besides addresses and localhost. From a peer in
// trustedProxies, X-Forwarded-Host is checked instead of Host: it is the
// name the browser used.
func New(trustedProxies []netip.Prefix, names ...string) *Allowlist {
	a := &Allowlist{names: map[string]bool{}, proxies: trustedProxies}
	for _, n := range names {
		if strings.Contains(n, "://") {
			if u, err := url.Parse(n); err == nil {
				n = u.Host
			}
		}
		if h := Hostname(n); h != "" && !isAddr(h) {
			a.names[h] = true
		}
	}
	return a
}

// Allowed reports whether r's Host (or its trusted proxy's
// X-Forwarded-Host) is an address, localhost or an allowed name. A request
// without a Host (HTTP/1.0; never a browser's) passes.
func (a *Allowlist) Allowed(r *http.Request) bool {
	host := r.Host
	if fwd := r.Header.Get("X-Forwarded-Host"); fwd != "" && a.fromProxy(r) {
		host, _, _ = strings.Cut(fwd, ",")
	}
	return a.AllowedHost(strings.TrimSpace(host))
}

// AllowedHost is Allowed for a Host value (host[:port]).
func (a *Allowlist) AllowedHost(hostport string) bool {
	h := Hostname(hostport)
	return hostport == "" || h == "localhost" || isAddr(h) || a.names[h]
}

func (a *Allowlist) fromProxy(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range a.proxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// Hostname is the host of host[:port] or [v6]:port, lower-case, without
// brackets or a trailing dot.
func Hostname(hostport string) string {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

func isAddr(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}
