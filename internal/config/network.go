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
	switch n.Backend {
	case "":
		n.Backend = NetworkEmbedded
	case NetworkEmbedded:
	case NetworkNeutron:
		if c.Auth.Strategy != "keystone" {
			bad("network.backend", "neutron needs Keystone (auth.strategy: keystone and auth.keystone's service credentials): ingot finds Neutron in Keystone's catalog and makes each port in the user's project")
		}
	default:
		bad("network.backend", "want embedded or neutron, got %q", n.Backend)
	}
	if n.Region == "" {
		n.Region = c.Auth.Keystone.Region
	}
	if n.Interface == "" {
		n.Interface = c.Auth.Keystone.Interface
	}
	if n.Timeout < 0 {
		bad("network.timeout", "must not be negative, got %s", n.Timeout)
	}
}
