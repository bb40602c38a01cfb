// Package servers serves /v2.1/servers and everything under it: create,
// list, show, update, actions (day-2, rebuild, reset), tags, metadata,
// subresources, server groups, usage and diagnostics.
package servers

import (
	"github.com/ingot-dev/ingot/internal/api/admin"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/flavors"
	"github.com/ingot-dev/ingot/internal/api/lookup"
	"github.com/ingot-dev/ingot/internal/api/quotas"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
	admin   *admin.Service
	flavors *flavors.Service
	lookup  *lookup.Service
	quotas  *quotas.Service
}

// New returns the service over env, with the services it calls.
func New(env *core.Env, admin *admin.Service, flavors *flavors.Service, lookup *lookup.Service, quotas *quotas.Service) *Service {
	return &Service{Env: env, admin: admin, flavors: flavors, lookup: lookup, quotas: quotas}
}
