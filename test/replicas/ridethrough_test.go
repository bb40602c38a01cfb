package replicas

import (
	"net/http"
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
	c.retryUnavailable = true
	idsc := make(chan []string)
	go func() { idsc <- c.createAll("ride", 80, 4, c.all) }()
	c.waitWithin(time.Minute, "a third of the creates in the database", func() bool { return len(c.rows()) >= 25 })
	doomed := c.accepted(8)
	began := time.Now()
	pg.Stop()
	for _, id := range doomed {
		if code := c.deleteOnce(c.reps[1], id); code != http.StatusServiceUnavailable && code != 0 {
			t.Errorf("delete of %s with the database stopped: HTTP %d, want 503", id, code)
		}
	}
	time.Sleep(3*time.Second - time.Since(began)) // the outage being tested
	pg.Start()
	c.deleteAll(c.reps[1], doomed)
	c.waitWithin(2*time.Minute, "both replicas serving with every shard leased again", func() bool {
		for _, r := range c.reps {
			if !r.p.Alive() {
				t.Fatalf("%s exited after the database restart:\n%s", r.host, r.p.Tail(20))
			}
		}
		return len(holders(c.reps)) == shards
	})
	back := time.Since(began)
	ids := <-idsc
	if t.Failed() {
		return
	}
	kept := without(ids, doomed)
	c.waitActive(c.reps[0], kept)
	c.waitGone(c.reps[0], doomed)
	c.checkPlacement(kept)
	for _, r := range c.reps {
		if !r.p.Alive() {
			t.Fatalf("%s exited", r.host)
		}
	}
	verdict := c.checkHistory(c.reps[0])
	t.Logf("PostgreSQL restarted (3 s down) during %d creates and %d deletes: %d answers 503 (sent again); both replicas served on, every shard leased again %s after the restart began; %s",
		len(ids), len(doomed), c.unavailable.Load(), back.Round(10*time.Millisecond), verdict)
}
