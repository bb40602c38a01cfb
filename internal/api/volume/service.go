// Package volume serves the Cinder-shaped /volume/v3 routes and the views
// of a volume the compute routes share.
package volume

import (
	"github.com/ingot-dev/ingot/internal/api/core"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
}

// New returns the service over env, with the services it calls.
func New(env *core.Env) *Service { return &Service{Env: env} }
