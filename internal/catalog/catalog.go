// Package catalog holds the flavors and images an operator configured. It is
// read-only after start-up.
package catalog

import (
	"strings"
)

// Flavor maps a Nova flavor to an Ironic resource class.
type Flavor struct {
	ID            string
	Name          string
	ResourceClass string // Ironic resource class, e.g. "baremetal"
	VCPUs         int
	RAMMB         int
	DiskGB        int // becomes instance_info root_gb
	Description   string
	Traits        []string // required traits (extra_specs trait:X=required), sorted
	// ForbiddenTraits are traits the node must not have (trait:X=forbidden), sorted.
	ForbiddenTraits []string
	// Capabilities must match the node's properties.capabilities
	// (capabilities:K=V); they also go into instance_info.capabilities.
	Capabilities map[string]string
}

// Image is a deployable image.
type Image struct {
	ID       string // UUID
	Name     string
	URL      string // image_source given to Ironic
	Checksum string // optional image_checksum
	MinDisk  int
	OSDistro string
}

// Catalog is the set of flavors and images, looked up by id or name.
type Catalog struct {
	Flavors []Flavor
	Images  []Image
}

// Flavor finds a flavor by id, then by exact name.
func (c *Catalog) Flavor(ref string) (Flavor, bool) {
	for _, f := range c.Flavors {
		if f.ID == ref {
			return f, true
		}
	}
	for _, f := range c.Flavors {
		if f.Name == ref {
			return f, true
		}
	}
	return Flavor{}, false
}

// Image finds an image by id (case-insensitive, as UUIDs are), then by exact name.
func (c *Catalog) Image(ref string) (Image, bool) {
	for _, i := range c.Images {
		if strings.EqualFold(i.ID, ref) {
			return i, true
		}
	}
	for _, i := range c.Images {
		if i.Name == ref {
			return i, true
		}
	}
	return Image{}, false
}
