package ironictest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// SimOptions configures a simulated Ironic.
type SimOptions struct {
	// CallbackTimeout for custom-agent deploys (default DefaultCallbackTimeout,
	// like StartReal).
	CallbackTimeout time.Duration
	// DeployTime is how long a Fast deploy stays "deploying" (locked);
	// UndeployTime how long an undeploy stays "deleting". Default: over at
	// the next read.
	DeployTime, UndeployTime time.Duration
	// Clock drives the simulator (default the wall clock). With a
	// *clock.Manual nothing moves until the test advances it (the helpers
	// that wait, like WaitProvisionState, poll on the wall clock: advance
	// the manual clock first).
	Clock clock.Clock
	// Seed makes the simulator's UUIDs reproducible (0: seeded from the time).
	Seed int64
	// Middleware, if set, wraps the simulator's handler: a test can break
	// the simulator on purpose, or watch the traffic.
	Middleware func(http.Handler) http.Handler
}

// StartSim starts a simulated Ironic behind an httptest server, closed when
// the test ends. Env.Sim gives its Go API (fault injection, Restart, Counts).
func StartSim(t testing.TB, opts SimOptions) *Env {
	t.Helper()
	if opts.CallbackTimeout <= 0 {
		opts.CallbackTimeout = DefaultCallbackTimeout
	}
	sim := ironicsim.New(ironicsim.Options{
		Clock:           opts.Clock,
		DeployTime:      opts.DeployTime,
		UndeployTime:    opts.UndeployTime,
		CallbackTimeout: opts.CallbackTimeout,
		Seed:            opts.Seed,
	})
	var h http.Handler = sim.Handler()
	if opts.Middleware != nil {
		h = opts.Middleware(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Env{
		URL:             srv.URL,
		CallbackTimeout: opts.CallbackTimeout,
		DeployDelay:     opts.DeployTime / 2,
		Sim:             sim,
		hc:              srv.Client(),
	}
}

func (e *Env) restartSim(t testing.TB) {
	t.Helper()
	e.Sim.Restart()
}
