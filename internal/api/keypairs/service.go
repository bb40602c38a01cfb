// Package keypairs serves /v2.1/os-keypairs: import, generation, listing
// and deletion of SSH and x509 keypairs.
package keypairs

import (
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/quotas"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
	quotas *quotas.Service
}

// New returns the service over env, with the services it calls.
func New(env *core.Env, quotas *quotas.Service) *Service { return &Service{Env: env, quotas: quotas} }
