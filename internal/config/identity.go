package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Auth says who may call the API (README "Configuration reference", auth).
type Auth struct {
	// Strategy is "noauth" (the default: no tokens, the project from
	// X-Auth-Project-Id) or "keystone" (X-Auth-Token validated by Keystone).
	Strategy string `yaml:"strategy"`
	// TokenCacheTTL bounds how long a validated token is trusted without
	// asking Keystone again (never past the token's own expiry).
	TokenCacheTTL time.Duration `yaml:"token_cache_ttl"`
	// AllowInsecureRemote lets noauth listen on a non-loopback address.
	AllowInsecureRemote bool `yaml:"allow_insecure_remote"`
	// PolicyFile overrides rules of the built-in policy (YAML rule: check).
	PolicyFile string   `yaml:"policy_file"`
	Keystone   Keystone `yaml:"keystone"`
	NoAuth     NoAuth   `yaml:"noauth"`
}

// Keystone holds ingot's own service credentials: they validate users'
// tokens and, with ironic.auth: keystone, authenticate ingot to Ironic.
type Keystone struct {
	AuthURL  string `yaml:"auth_url"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// PasswordFile reads Password from a file; INGOT_KEYSTONE_PASSWORD
	// overrides both.
	PasswordFile      string        `yaml:"password_file"`
	ProjectName       string        `yaml:"project_name"`
	UserDomainName    string        `yaml:"user_domain_name"`
	ProjectDomainName string        `yaml:"project_domain_name"`
	Region            string        `yaml:"region"`
	Interface         string        `yaml:"interface"` // catalog interface for Ironic's endpoint
	Timeout           time.Duration `yaml:"timeout"`
}

// NoAuth is who a request is in noauth mode when its headers do not say.
type NoAuth struct {
	ProjectID string   `yaml:"project_id"`
	UserID    string   `yaml:"user_id"`
	Roles     []string `yaml:"roles"`
}

// API configures the HTTP side of the API server.
type API struct {
	// PublicURL is the root links are built from (scheme://host[:port]);
	// empty: the address the request arrived on.
	PublicURL string `yaml:"public_url"`
	// TrustedProxies are the CIDRs whose X-Forwarded-Host/-Proto are believed.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// AllowedHosts are names a request's Host may carry besides addresses,
	// localhost, host, listen's host and PublicURL's (noauth's API and the
	// console refuse any other: DNS rebinding).
	AllowedHosts      []string      `yaml:"allowed_hosts"`
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	ReadTimeout       time.Duration `yaml:"read_timeout"`
	WriteTimeout      time.Duration `yaml:"write_timeout"`
	IdleTimeout       time.Duration `yaml:"idle_timeout"`
	MaxConnections    int           `yaml:"max_connections"`
	// MaxConnectionsPerClient bounds one address's share (0: half of
	// MaxConnections); past it, its idle connections are closed for room.
	MaxConnectionsPerClient int `yaml:"max_connections_per_client"`
	// EnableInstancePassword generates an admin password at a create that
	// gives none and puts it in the answers of create, rescue and rebuild
	// (adminPass), as Nova's [api] enable_instance_password.
	EnableInstancePassword bool `yaml:"enable_instance_password"`
}

// Quotas are the default limits of every project (-1: unlimited); admins
// override them per project through os-quota-sets.
type Quotas struct {
	Instances     int `yaml:"instances"`
	Cores         int `yaml:"cores"`
	RAM           int `yaml:"ram"`
	KeyPairs      int `yaml:"key_pairs"`
	MetadataItems int `yaml:"metadata_items"`
	// ResourceClasses limits the instances of each Ironic resource class.
	ResourceClasses map[string]int `yaml:"resource_classes"`
}

// Noauth defaults: one project and one user, with every role, so that a
// development ingot behaves as before projects existed.
const (
	DefaultProjectID = "ingot"
	DefaultUserID    = "ingot"
)

func identityDefaults(c *Config) {
	c.Auth = Auth{
		Strategy:      "noauth",
		TokenCacheTTL: 5 * time.Minute,
		Keystone:      Keystone{UserDomainName: "Default", ProjectDomainName: "Default", Interface: "public", Timeout: 10 * time.Second},
		NoAuth:        NoAuth{ProjectID: DefaultProjectID, UserID: DefaultUserID, Roles: []string{"admin", "member", "reader"}},
	}
	c.API = API{EnableInstancePassword: true, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second, WriteTimeout: 120 * time.Second,
		IdleTimeout: 120 * time.Second, MaxConnections: 1024}
	// Bare metal is bounded by the nodes; unlike Nova (10 instances, 20
	// cores, 50 GiB) servers are not limited unless the operator says so.
	c.Quotas = Quotas{Instances: -1, Cores: -1, RAM: -1, KeyPairs: 100, MetadataItems: 128}
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// normalizeIdentity validates the auth, api and quotas blocks.
func (c *Config) normalizeIdentity(bad func(key, format string, args ...any)) {
	a := &c.Auth
	switch a.Strategy {
	case "noauth":
		if !a.AllowInsecureRemote && !loopback(c.Listen) {
			bad("auth.strategy", "noauth lets anyone act as any project: refused on the non-loopback address %q (listen); use keystone, listen on 127.0.0.1, or set auth.allow_insecure_remote: true", c.Listen)
		}
	case "keystone":
	default:
		bad("auth.strategy", "want noauth or keystone, got %q", a.Strategy)
	}
	if a.TokenCacheTTL < 0 {
		bad("auth.token_cache_ttl", "must not be negative, got %s", a.TokenCacheTTL)
	}
	if a.Strategy == "keystone" || c.Ironic.Auth == "keystone" {
		k := a.Keystone
		if u, err := url.Parse(k.AuthURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("auth.keystone.auth_url", "want http(s)://host:port/v3, got %q", k.AuthURL)
		}
		for key, v := range map[string]string{"username": k.Username, "password": k.Password, "project_name": k.ProjectName} {
			if v == "" && key == "password" {
				bad("auth.keystone.password", "must not be empty with keystone (or give password_file, or set %s)", EnvKeystonePassword)
			} else if v == "" {
				bad("auth.keystone."+key, "must not be empty with keystone")
			}
		}
		if k.Timeout <= 0 {
			bad("auth.keystone.timeout", "must be a positive duration, got %s", k.Timeout)
		}
	}
	n := &a.NoAuth
	if !idRE.MatchString(n.ProjectID) {
		bad("auth.noauth.project_id", "want 1-64 letters, digits, '_', '.', '-', got %q", n.ProjectID)
	}
	if !idRE.MatchString(n.UserID) {
		bad("auth.noauth.user_id", "want 1-64 letters, digits, '_', '.', '-', got %q", n.UserID)
	}
	if l := c.Ironic.Sim.Listen; c.Ironic.URL == "sim" && l != "" && !loopback(l) {
		bad("ironic.sim.listen", "the simulator, whose /_sim/ admin API can delete nodes, listens on loopback only, got %q", l)
	}
	switch c.Ironic.Auth {
	case "", "noauth", "keystone":
	default:
		bad("ironic.auth", "want noauth or keystone, got %q", c.Ironic.Auth)
	}

	p := &c.API
	if p.PublicURL != "" {
		u, err := url.Parse(p.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			bad("api.public_url", "want scheme://host[:port] without a path, got %q", p.PublicURL)
		}
		p.PublicURL = strings.TrimRight(p.PublicURL, "/")
	}
	for i, cidr := range p.TrustedProxies {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			if _, err := netip.ParseAddr(cidr); err != nil {
				bad(fmt.Sprintf("api.trusted_proxies[%d]", i), "want a CIDR or an address, got %q", cidr)
			}
		}
	}
	for i, h := range p.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/@?#, ") || !validHostname(strings.Trim(h, "[]")) {
			bad(fmt.Sprintf("api.allowed_hosts[%d]", i), "want a host name or an address (no scheme, port or path), got %q", h)
		}
	}
	for k, d := range map[string]time.Duration{"api.read_header_timeout": p.ReadHeaderTimeout, "api.read_timeout": p.ReadTimeout,
		"api.write_timeout": p.WriteTimeout, "api.idle_timeout": p.IdleTimeout} {
		if d <= 0 {
			bad(k, "must be a positive duration, got %s", d)
		}
	}
	if p.MaxConnections < 1 {
		bad("api.max_connections", "must be at least 1, got %d", p.MaxConnections)
	}
	if p.MaxConnectionsPerClient < 0 || p.MaxConnectionsPerClient > p.MaxConnections {
		bad("api.max_connections_per_client", "must be between 0 (half of max_connections) and max_connections (%d), got %d", p.MaxConnections, p.MaxConnectionsPerClient)
	}

	q := c.Quotas
	for k, v := range map[string]int{"instances": q.Instances, "cores": q.Cores, "ram": q.RAM, "key_pairs": q.KeyPairs, "metadata_items": q.MetadataItems} {
		if v < -1 {
			bad("quotas."+k, "want -1 (unlimited) or a limit of 0 or more, got %d", v)
		}
	}
	for rc, v := range q.ResourceClasses {
		if v < -1 || rc == "" {
			bad("quotas.resource_classes."+rc, "want a resource class and -1 or a limit of 0 or more, got %d", v)
		}
	}
}

// validHostname: letters, digits, '-', '.', or an address.
func validHostname(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// TrustedProxyPrefixes returns api.trusted_proxies as prefixes (after Normalize).
func (c *Config) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.API.TrustedProxies {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out
}

// loopback reports whether a listen address only accepts local
// connections: a loopback IP or "localhost" (an empty host means every
// interface).
func loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return true // reported as a bad listen address
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// ConnectionsPerClient is MaxConnectionsPerClient with its default (half
// of MaxConnections) applied.
func (a API) ConnectionsPerClient() int {
	if a.MaxConnectionsPerClient > 0 {
		return a.MaxConnectionsPerClient
	}
	return max(1, a.MaxConnections/2)
}
