package config

import "time"

// ImageBackend chooses where images come from: the images list of this
// file (the default) or the cloud's Glance, found in Keystone's catalog
// with auth.keystone's service credentials and read with the user's token.
type ImageBackend struct {
	// Backend is "embedded" (default) or "glance".
	Backend string `yaml:"backend"`
	// Region and Interface choose Glance's catalog endpoint (default:
	// auth.keystone's region and interface).
	Region    string `yaml:"region"`
	Interface string `yaml:"interface"`
	// Timeout bounds each Glance call (default 30s).
	Timeout time.Duration `yaml:"timeout"`
}

// Backends of image.backend.
const (
	ImageEmbedded = "embedded"
	ImageGlance   = "glance"
)

// normalizeImage validates image.*; Glance is reached through Keystone
// only (its catalog, and the user's token Glance checks visibility with).
func (c *Config) normalizeImage(bad func(key, format string, args ...any)) {
	im := &c.Image
	c.normalizeBackend(bad, "image", ImageEmbedded, ImageGlance,
		"ingot finds Glance in Keystone's catalog and reads each image with the user's token",
		&im.Backend, &im.Region, &im.Interface, im.Timeout)
}
