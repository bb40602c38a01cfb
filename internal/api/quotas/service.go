// Package quotas serves os-quota-sets, os-quota-class-sets and /limits, and
// reads each project's limits for the other services.
package quotas

import (
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/volume"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
	volume *volume.Service
}

// New returns the service over env, with the services it calls.
func New(env *core.Env, volume *volume.Service) *Service { return &Service{Env: env, volume: volume} }
