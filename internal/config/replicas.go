package config

import "time"

// Replica settings (docs/DESIGN.md §2.10): the replica's identity and how
// the servers are divided among replicas on one database.
const (
	defaultShards   = 64
	defaultLeaseTTL = 10 * time.Second
	maxShards       = 4096
)

// normalizeReplicas fills shards and lease_ttl and checks them (host is
// Normalize's).
func (c *Config) normalizeReplicas(bad func(key, format string, args ...any)) {
	if c.Shards == 0 {
		c.Shards = defaultShards
	}
	if c.Shards < 1 || c.Shards > maxShards {
		bad("shards", "want 1 to %d, got %d", maxShards, c.Shards)
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = defaultLeaseTTL
	}
	if c.LeaseTTL < 100*time.Millisecond {
		bad("lease_ttl", "want at least 100ms, got %s", c.LeaseTTL)
	}
}
