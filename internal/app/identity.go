package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/hostcheck"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// identity is what the API needs to know who asks and what they may do.
type identity struct {
	authn    auth.Authenticator
	keystone *auth.Keystone // nil in noauth
	policy   *policy.Enforcer
	authURL  string
}

// newIdentity builds the authenticator (authenticating ingot's service
// user with Keystone when it is used: for the API or for Ironic) and the
// policy. A warning is logged at every start of a noauth ingot listening
// beyond loopback.
func newIdentity(ctx context.Context, cfg config.Config, clk clock.Clock, log *slog.Logger) (*identity, error) {
	pol, err := policy.Load(cfg.Auth.PolicyFile)
	if err != nil {
		return nil, err
	}
	id := &identity{policy: pol}
	if cfg.Auth.Strategy == "keystone" || cfg.Ironic.Auth == "keystone" {
		k := cfg.Auth.Keystone
		ks, err := auth.NewKeystone(ctx, auth.KeystoneOptions{
			AuthURL: k.AuthURL, Username: k.Username, Password: k.Password, ProjectName: k.ProjectName,
			UserDomainName: k.UserDomainName, ProjectDomainName: k.ProjectDomainName,
			CacheTTL: cfg.Auth.TokenCacheTTL, Timeout: k.Timeout, Clock: clk, Logger: log,
		})
		if err != nil {
			return nil, err
		}
		id.keystone = ks
	}
	switch cfg.Auth.Strategy {
	case "keystone":
		id.authn, id.authURL = id.keystone, strings.TrimSuffix(cfg.Auth.Keystone.AuthURL, "/")
	default:
		n := cfg.Auth.NoAuth
		id.authn = auth.NoAuth{ProjectID: n.ProjectID, UserID: n.UserID, Roles: n.Roles}
		if cfg.Auth.AllowInsecureRemote && !loopbackListen(cfg.Listen) {
			log.Warn("auth.strategy is noauth on a non-loopback address: anyone who reaches "+cfg.Listen+
				" may act as any project, admin included (auth.allow_insecure_remote is set)", "listen", cfg.Listen)
		}
	}
	log.Info("identity", "auth", id.describe(), "token_cache_ttl", cfg.Auth.TokenCacheTTL, "policy_file", cfg.Auth.PolicyFile)
	return id, nil
}

// QuotaLimits are the configured default quotas.
func QuotaLimits(cfg config.Config) store.Limits {
	q := cfg.Quotas
	l := store.Limits{store.ResInstances: q.Instances, store.ResCores: q.Cores, store.ResRAM: q.RAM,
		store.ResKeyPairs: q.KeyPairs, store.ResMetadataItems: q.MetadataItems}
	for rc, v := range q.ResourceClasses {
		l[store.ClassPrefix+rc] = v
	}
	return l
}

// hostLists are the Host allow-lists (internal/hostcheck): the console's
// always (its session cookie is ambient), the API's in noauth only, where
// a request needs no credential a rebinding page would lack. With
// Keystone every call carries a token in a header no page of another
// site can make the browser send, so the API answers any Host.
type hostLists struct{ api, console *hostcheck.Allowlist }

func allowedHosts(cfg config.Config) hostLists {
	listen, _, _ := net.SplitHostPort(cfg.Listen)
	// host is this replica's name (default the machine's), which a page of
	// another site cannot own.
	names := append([]string{listen, cfg.API.PublicURL, cfg.Host}, cfg.API.AllowedHosts...)
	l := hostcheck.New(cfg.TrustedProxyPrefixes(), names...)
	if cfg.Auth.Strategy == "keystone" {
		return hostLists{console: l}
	}
	return hostLists{api: l, console: l}
}

func loopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// newHTTPServer is the API's server with the configured timeouts: a slow
// body or an idle keep-alive cannot hold a connection forever.
func newHTTPServer(cfg config.Config, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.API.ReadHeaderTimeout,
		ReadTimeout:       cfg.API.ReadTimeout,
		WriteTimeout:      cfg.API.WriteTimeout,
		IdleTimeout:       cfg.API.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// describe names the auth strategy for the start-up log line.
func (id *identity) describe() string {
	if id.keystone != nil && id.authURL != "" {
		return fmt.Sprintf("keystone (%s)", id.authURL)
	}
	return "noauth"
}

// ironicConfig is the Ironic client's configuration; with ironic.auth:
// keystone every call carries ingot's service token (renewed when it
// expires), and url "catalog" takes Ironic's endpoint from the catalog.
func ironicConfig(cfg config.Config, url string, id *identity, observe func(string, error, time.Duration)) ironic.Config {
	c := ironic.Config{URL: url, Microversion: cfg.Ironic.Microversion, Timeout: cfg.Ironic.Timeout, Observer: observe}
	if cfg.Ironic.Auth == "keystone" && id.keystone != nil {
		c.Provider = id.keystone.Provider()
		c.Endpoint = gophercloud.EndpointOpts{Region: cfg.Auth.Keystone.Region,
			Availability: gophercloud.Availability(cfg.Auth.Keystone.Interface)}
	}
	return c
}
