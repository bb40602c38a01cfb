package replicas

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// TestPostgresRestartRideThrough: PostgreSQL (a private server) restarted
// in the middle of a burst of creates sent to two replicas, with deletes
// of 8 of them sent while it is down and again once it is back. The
// replicas ride through: none exits; while the database is away the API
// answers 503 (retryable, counted) and never loses a 202; each replica
// takes its owner lock and its leases again once the server is back;
// every accepted create ends ACTIVE on its own node, or deleted; the
// history check finds nothing lost, resurrected, double-held or leaked.
func TestPostgresRestartRideThrough(t *testing.T) {
	pg := pgtest.Private(t)
	c := newClusterOn(t, ingottest.Binary(t), pg.DSN, 200, 2, 200*time.Millisecond, nil)
	var stopped time.Time
	o := c.throughOutage("ride", func() { pg.Stop(); stopped = time.Now() }, func() {
		time.Sleep(3*time.Second - time.Since(stopped)) // the outage being tested
		pg.Start()
	})
	t.Logf("PostgreSQL restarted (3 s down) during %d creates and %d deletes: %d answers 503 (sent again); both replicas served on, every shard leased again %s after the restart began; %s",
		len(o.ids), len(o.doomed), c.unavailable.Load(), o.back.Round(10*time.Millisecond), o.verdict)
}
