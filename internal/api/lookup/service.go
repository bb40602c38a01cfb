// Package lookup serves the Glance- and Neutron-shaped look-ups the
// OpenStack CLI makes on the compute endpoint (images, networks, ports),
// Nova's image and os-networks proxies and the image metadata proxy.
package lookup

import (
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/store"
)

// Limits reads a project's quota limits (quotas.Service.ProjectLimits).
type Limits func(r *core.Request, project string) (store.Limits, error)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
	limits Limits
}

// New returns the service over env, with the quota limits it checks image
// metadata against.
func New(env *core.Env, limits Limits) *Service { return &Service{Env: env, limits: limits} }
