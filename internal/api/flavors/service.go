// Package flavors serves /v2.1/flavors: listing and showing, extra specs,
// flavor management and access (flavors live in the store).
package flavors

import (
	"github.com/ingot-dev/ingot/internal/api/admin"
	"github.com/ingot-dev/ingot/internal/api/core"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
	admin *admin.Service
}

// New returns the service over env, with the services it calls.
func New(env *core.Env, admin *admin.Service) *Service { return &Service{Env: env, admin: admin} }
