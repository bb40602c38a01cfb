package config

import "time"

// NetworkBackend chooses where servers' ports live: the embedded IPAM over
// networks (the default) or the cloud's Neutron, found in Keystone's
// catalog with auth.keystone's service credentials.
type NetworkBackend struct {
	// Backend is "embedded" (default) or "neutron".
	Backend string `yaml:"backend"`
	// Region and Interface choose Neutron's catalog endpoint (default:
	// auth.keystone's region and interface).
	Region    string `yaml:"region"`
	Interface string `yaml:"interface"`
	// DeviceOwner of the ports ingot makes (default compute:nova, Nova's
	// for its default availability zone).
	DeviceOwner string `yaml:"device_owner"`
	// Timeout bounds each Neutron call (default 30s).
	Timeout time.Duration `yaml:"timeout"`
}

// Backends of network.backend.
const (
	NetworkEmbedded = "embedded"
	NetworkNeutron  = "neutron"
)

// normalizeNetwork validates network.*; Neutron is reached through
// Keystone only.
func (c *Config) normalizeNetwork(bad func(key, format string, args ...any)) {
	n := &c.Network
	c.normalizeBackend(bad, "network", NetworkEmbedded, NetworkNeutron,
		"ingot finds Neutron in Keystone's catalog and makes each port in the user's project",
		&n.Backend, &n.Region, &n.Interface, n.Timeout)
}

// normalizeBackend validates a service's backend key (section.backend):
// embedded by default, or cloud, which needs Keystone (why says what for);
// the cloud service's region and interface default to auth.keystone's,
// and its timeout must not be negative.
func (c *Config) normalizeBackend(bad func(key, format string, args ...any), section, embedded, cloud, why string,
	backend, region, iface *string, timeout time.Duration) {
	switch *backend {
	case "":
		*backend = embedded
	case embedded:
	case cloud:
		if c.Auth.Strategy != "keystone" {
			bad(section+".backend", "%s needs Keystone (auth.strategy: keystone and auth.keystone's service credentials): %s", cloud, why)
		}
	default:
		bad(section+".backend", "want %s or %s, got %q", embedded, cloud, *backend)
	}
	if *region == "" {
		*region = c.Auth.Keystone.Region
	}
	if *iface == "" {
		*iface = c.Auth.Keystone.Interface
	}
	if timeout < 0 {
		bad(section+".timeout", "must not be negative, got %s", timeout)
	}
}
