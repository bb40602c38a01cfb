// Package admin serves the compute admin routes: os-services, os-hosts,
// os-hypervisors, os-aggregates and the availability zones they make.
package admin

import (
	"github.com/ingot-dev/ingot/internal/api/core"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
}

// New returns the service over env, with the services it calls.
func New(env *core.Env) *Service { return &Service{Env: env} }
