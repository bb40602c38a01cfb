// Package lookup serves the Glance- and Neutron-shaped look-ups the
// OpenStack CLI makes on the compute endpoint (images, networks, ports) and
// Nova's os-networks proxy.
package lookup

import (
	"github.com/ingot-dev/ingot/internal/api/core"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
}

// New returns the service over env, with the services it calls.
func New(env *core.Env) *Service { return &Service{Env: env} }
