package config

import (
	"strings"
	"testing"
)

// TestNetworkBackend: embedded by default (serve --dev unchanged), neutron
// only behind Keystone, with Neutron's catalog endpoint defaulting to
// auth.keystone's region and interface.
func TestNetworkBackend(t *testing.T) {
	c, err := Parse(nil)
	if err != nil || c.Network.Backend != NetworkEmbedded {
		t.Fatalf("default backend %q, %v; want embedded", c.Network.Backend, err)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"network: {backend: neutron}", "neutron needs Keystone"},
		{"network: {backend: glance}", "want embedded or neutron"},
	} {
		if _, err := Parse([]byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), "network.backend") ||
			!strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want network.backend: …%s", tt.yaml, err, tt.want)
		}
	}
	c, err = Parse([]byte(`auth:
  strategy: keystone
  keystone: {auth_url: "http://k:5000/v3", username: ingot, password: p, project_name: service, region: RegionTwo, interface: internal}
network: {backend: neutron}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Network.Backend != NetworkNeutron || c.Network.Region != "RegionTwo" || c.Network.Interface != "internal" {
		t.Errorf("network %+v: want neutron in RegionTwo, internal", c.Network)
	}
}
