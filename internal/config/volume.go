package config

import (
	"net"
	"net/url"
	"strings"
	"time"
)

// Volume backends.
const (
	// VolumeEmbedded is ingot's own volume registry: bookkeeping of
	// volumes whose iSCSI targets someone else serves (volume.embedded).
	VolumeEmbedded = "embedded"
	// VolumeCinder keeps the volumes in the cloud's Cinder (found in
	// Keystone's catalog) and attaches them as Nova does for bare metal.
	VolumeCinder = "cinder"
)

// Volume chooses where volumes live (the volume: section).
type Volume struct {
	// Backend is embedded (the default) or cinder.
	Backend string `yaml:"backend"`
	// Cinder configures the cinder backend.
	Cinder Cinder `yaml:"cinder"`
	// Embedded configures the embedded registry.
	Embedded EmbeddedVolumes `yaml:"embedded"`
}

// EmbeddedVolumes describes the iSCSI targets the embedded registry's
// volumes are served at. ingot serves none itself: each volume is a
// record naming <iqn_prefix>:volume-<id>, LUN 0 at portal, which an
// operator's target server (e.g. tgt or LIO on a storage host) must
// export for a node to boot from or mount it.
type EmbeddedVolumes struct {
	// Portal is the targets' iSCSI portal, host:port (default
	// 127.0.0.1:3260, which only a target on each node itself would serve).
	Portal string `yaml:"portal"`
	// IQNPrefix prefixes the targets' IQNs (default iqn.2026-11.io.ingot).
	IQNPrefix string `yaml:"iqn_prefix"`
	// RecordsOnly: there is no target server; volumes are records (for
	// trying the API, or tests), and a server asking for one is refused
	// with 400 rather than given a target nothing serves.
	RecordsOnly bool `yaml:"records_only"`
}

// Cinder says how ingot reaches the cloud's block-storage service. ingot
// authenticates with auth.keystone's service credentials (a user with the
// roles admin and service, as Nova's): its calls carry that token as
// X-Service-Token too, so Cinder treats them as the compute service's.
type Cinder struct {
	// URL is the block-storage API root (http://host:8776/v3); empty or
	// "catalog" finds it in the catalog (block-storage, else volumev3) in
	// auth.keystone's region and interface.
	URL string `yaml:"url"`
	// Timeout bounds one call (default 30 s).
	Timeout time.Duration `yaml:"timeout"`
}

// UsesCinder reports whether volumes live in Cinder.
func (c *Config) UsesCinder() bool { return c.Volume.Backend == VolumeCinder }

func (c *Config) normalizeVolume(bad func(key, format string, args ...any)) {
	v := &c.Volume
	switch v.Backend {
	case "":
		v.Backend = VolumeEmbedded
	case VolumeEmbedded:
	case VolumeCinder:
		if c.Auth.Strategy != "keystone" {
			// Cinder's volumes belong to Keystone projects: only a token
			// says whose a request's volumes are.
			bad("volume.backend", "cinder needs auth.strategy: keystone (volumes belong to the caller's Keystone project)")
		}
	default:
		bad("volume.backend", "want embedded or cinder, got %q", v.Backend)
	}
	if e := v.Embedded; e.Portal != "" {
		if _, port, err := net.SplitHostPort(e.Portal); err != nil || port == "" {
			bad("volume.embedded.portal", "want host:port, got %q", e.Portal)
		}
	}
	if p := v.Embedded.IQNPrefix; p != "" && (!strings.HasPrefix(p, "iqn.") || strings.ContainsAny(p, " \t:")) {
		bad("volume.embedded.iqn_prefix", "want an IQN prefix such as iqn.2026-01.com.example (no ':'), got %q", p)
	}
	if v.Cinder.URL == "catalog" {
		v.Cinder.URL = ""
	}
	if v.Cinder.URL != "" {
		if u, err := url.Parse(v.Cinder.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("volume.cinder.url", "want http(s)://host:port/v3 or \"catalog\", got %q", v.Cinder.URL)
		}
	}
	if v.Cinder.Timeout == 0 {
		v.Cinder.Timeout = 30 * time.Second
	}
	if v.Cinder.Timeout < 0 {
		bad("volume.cinder.timeout", "must be a positive duration, got %s", v.Cinder.Timeout)
	}
}
