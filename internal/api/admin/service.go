// Package admin serves the compute admin routes: os-services, os-hosts,
// os-hypervisors, os-aggregates and the availability zones they make.
package admin

import (
	"sync"

	"github.com/ingot-dev/ingot/internal/api/core"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env

	// zones is the last Zones read, kept while the store's admin revision
	// stays zonesRev: every server rendered needs them, and they change
	// only with an admin's write or a heartbeat.
	mu       sync.Mutex
	zones    Zones
	zonesRev int64
	haveZone bool
}

// New returns the service over env, with the services it calls.
func New(env *core.Env) *Service { return &Service{Env: env} }
