package config

import (
	"strings"
	"testing"
	"time"
)

func TestIdentityDefaults(t *testing.T) {
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.Strategy != "noauth" || c.Auth.TokenCacheTTL != 5*time.Minute || c.Auth.NoAuth.ProjectID != "ingot" ||
		c.API.ReadTimeout != time.Minute || c.API.MaxConnections != 1024 || c.Quotas.Instances != -1 || c.Quotas.KeyPairs != 100 {
		t.Fatalf("defaults: %+v %+v %+v", c.Auth, c.API, c.Quotas)
	}
}

func TestKeystoneExample(t *testing.T) {
	c, err := Parse([]byte(`
auth:
  strategy: keystone
  token_cache_ttl: 5m
  keystone:
    auth_url: http://127.0.0.1:5000/v3
    username: ingot
    password: secret
    project_name: service
    user_domain_name: Default
    project_domain_name: Default
listen: 0.0.0.0:8774
api:
  public_url: https://compute.example:8774/
  trusted_proxies: [10.0.0.0/8, 192.0.2.1]
  allowed_hosts: [compute.internal, "::1"]
quotas: {instances: 10, resource_classes: {gold: 2}}
ironic: {url: catalog, auth: keystone}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.API.PublicURL != "https://compute.example:8774" || len(c.TrustedProxyPrefixes()) != 2 || len(c.API.AllowedHosts) != 2 || c.Quotas.ResourceClasses["gold"] != 2 {
		t.Fatalf("parsed %+v %+v", c.API, c.Quotas)
	}
}

func TestIdentityErrorsNameTheKey(t *testing.T) {
	for _, tt := range []struct{ yaml, key string }{
		{"auth: {strategy: ldap}", "auth.strategy"},
		{"listen: 0.0.0.0:8774", "auth.strategy"},
		{"auth: {strategy: keystone}", "auth.keystone.auth_url"},
		{"auth: {strategy: keystone, keystone: {auth_url: http://k/v3}}", "auth.keystone.password"},
		{"auth: {token_cache_ttl: -1s}", "auth.token_cache_ttl"},
		{"auth: {noauth: {project_id: 'a b'}}", "auth.noauth.project_id"},
		{"api: {public_url: 'http://h/v2.1'}", "api.public_url"},
		{"api: {trusted_proxies: [nope]}", "api.trusted_proxies[0]"},
		{"api: {allowed_hosts: [ok.example, 'http://x.example']}", "api.allowed_hosts[1]"},
		{"api: {allowed_hosts: ['x.example:8774']}", "api.allowed_hosts[0]"},
		{"api: {read_timeout: 0s}", "api.read_timeout"},
		{"api: {max_connections: 0}", "api.max_connections"},
		{"quotas: {instances: -2}", "quotas.instances"},
		{"ironic: {auth: basic}", "ironic.auth"},
		{"ironic: {url: catalog}", "ironic.url"},
		{"ironic: {url: sim, sim: {listen: '0.0.0.0:1'}}", "ironic.sim.listen"},
	} {
		_, err := Parse([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%q: error %v does not name %s", tt.yaml, err, tt.key)
		}
	}
	// Allowed on purpose.
	if _, err := Parse([]byte("listen: 0.0.0.0:8774\nauth: {allow_insecure_remote: true}\n")); err != nil {
		t.Errorf("allow_insecure_remote: %v", err)
	}
}
