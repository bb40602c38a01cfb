package config

import (
	"os"
	"time"
)

// Replica settings (docs/DESIGN.md §2.10): the replica's identity and how
// the servers are divided among replicas on one database.
const (
	defaultShards   = 64
	defaultLeaseTTL = 10 * time.Second
	maxShards       = 4096
)

// normalizeReplicas fills host, shards and lease_ttl and checks them.
func (c *Config) normalizeReplicas(bad func(key, format string, args ...any)) {
	if c.Host == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "ingot"
		}
		c.Host = h
	}
	if len(c.Host) > 255 {
		bad("host", "at most 255 characters, got %d", len(c.Host))
	}
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
