package replicas

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// TestPostgresRestartRideThrough: PostgreSQL (a private server) restarted
// in the middle of a burst of creates sent to two replicas. The replicas
// ride through: none exits; while the database is away the API answers
// 503 (retryable, counted) and never loses a 202; each replica takes its
// owner lock and its leases again once the server is back; every accepted
// create ends ACTIVE on its own node.
func TestPostgresRestartRideThrough(t *testing.T) {
	pg := pgtest.Private(t)
	c := newClusterOn(t, ingottest.Binary(t), pg.DSN, 200, 2, 200*time.Millisecond, nil)
	c.retryUnavailable = true
	idsc := make(chan []string)
	go func() { idsc <- c.createAll("ride", 80, 4, c.all) }()
	c.waitWithin(time.Minute, "a third of the creates in the database", func() bool { return len(c.rows()) >= 25 })
	began := time.Now()
	pg.Restart(3 * time.Second)
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
	c.waitActive(c.reps[0], ids)
	c.checkPlacement(ids)
	for _, r := range c.reps {
		if !r.p.Alive() {
			t.Fatalf("%s exited", r.host)
		}
	}
	t.Logf("PostgreSQL restarted (3 s down) during %d creates: %d answers 503 (sent again), none lost, all ACTIVE; both replicas served on, every shard leased again %s after the restart began",
		len(ids), c.unavailable.Load(), back.Round(10*time.Millisecond))
}
