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

	// kept is the last Snapshot read, kept while the store's admin
	// revision stays keptRev: every server rendered needs it, and it
	// changes only with an admin's write or a heartbeat.
	mu       sync.Mutex
	kept     Snapshot
	keptRev  int64
	haveKept bool
}

// New returns the service over env, with the services it calls.
func New(env *core.Env) *Service { return &Service{Env: env} }
