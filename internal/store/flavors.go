package store

import (
	"context"
	"time"
)

// Flavor is a flavor as the compute API manages it (Nova's flavors table).
type Flavor struct {
	ID          string
	Name        string
	VCPUs       int
	RAMMB       int
	DiskGB      int
	SwapMB      int
	EphemeralGB int
	RxTxFactor  float64
	IsPublic    bool
	Disabled    bool
	Description *string // nil shows null
	ExtraSpecs  map[string]string
	// ResourceClass is the Ironic resource class of a configured flavor;
	// "" for one an admin created, whose class is its
	// resources:CUSTOM_<CLASS>=1 extra spec.
	ResourceClass string
	// Seeded: the configuration file defines this flavor; it is upserted
	// at every start and the API does not change or delete it.
	Seeded    bool
	CreatedAt time.Time
}

// Flavors keeps the flavors and the projects that may use private ones.
type Flavors interface {
	// SeedFlavors makes the configured flavors what fs says (inserted or
	// replaced by id, Seeded set, their access list untouched) and turns
	// every other seeded flavor into an ordinary one (Seeded false), in
	// one transaction. ErrExists when one's name is another flavor's.
	SeedFlavors(ctx context.Context, fs []Flavor) error
	// CreateFlavor inserts f (Seeded false). ErrExists when the id or the
	// name is taken.
	CreateFlavor(ctx context.Context, f Flavor) error
	// GetFlavor returns one flavor by id. ErrNotFound when unknown.
	GetFlavor(ctx context.Context, id string) (Flavor, error)
	// ListFlavors lists every flavor ordered by id; with projectID set,
	// only the public ones and the private ones projectID has access to.
	ListFlavors(ctx context.Context, projectID string) ([]Flavor, error)
	// UpdateFlavor applies mutate to the stored flavor in one transaction
	// and writes back its description, extra specs and resource class
	// (nothing else of a flavor changes after create). An error from mutate is returned as
	// is, nothing written. ErrNotFound when unknown.
	UpdateFlavor(ctx context.Context, id string, mutate func(*Flavor) error) (Flavor, error)
	// DeleteFlavor removes a flavor and its access list. ErrNotFound when
	// unknown. Servers keep their copy of what they were built with.
	DeleteFlavor(ctx context.Context, id string) error
	// FlavorAccess lists the projects with access to a flavor, sorted.
	// ErrNotFound when the flavor is unknown.
	FlavorAccess(ctx context.Context, id string) ([]string, error)
	// AddFlavorAccess grants projectID access. ErrNotFound for an unknown
	// flavor, ErrExists when it has access already.
	AddFlavorAccess(ctx context.Context, id, projectID string) error
	// RemoveFlavorAccess revokes it. ErrNotFound for an unknown flavor or
	// a project without access.
	RemoveFlavorAccess(ctx context.Context, id, projectID string) error
}
