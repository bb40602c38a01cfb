package replicas

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/faulttest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// TestPartitionedReplicaStopsActing: one of three replicas loses its link
// to PostgreSQL (a blackhole: every byte dropped, nothing closed) while it
// still reaches Ironic, in the middle of 90 builds. It sends no change to
// Ironic once its leases' local deadline has passed (at most lease_ttl
// after the partition), the other two take its shards over and finish
// every build and the 10 deletes sent meanwhile, and once the link heals
// it rides through and takes its share again; the history check finds
// nothing lost, resurrected, double-held or leaked.
func TestPartitionedReplicaStopsActing(t *testing.T) {
	dsn := pgtest.DSN(t)
	link := faulttest.New(t, "postgres-replica-0", "127.0.0.1:5432")
	c := newClusterOn(t, ingottest.Binary(t), dsn, 300, 3, 200*time.Millisecond, func(i int, dsn string) string {
		if i == 0 {
			return link.Rewrite(dsn)
		}
		return dsn
	})
	cut := c.reps[0]
	ids := c.createAll("part", 90, 4, c.all)
	c.waitWithin(time.Minute, cut.host+" acting on Ironic", func() bool { return len(cut.proxy.log()) >= 5 })
	partitioned := time.Now()
	link.Blackhole()
	doomed := c.accepted(10)
	c.deleteAll(c.reps[1], doomed)
	kept := without(ids, doomed)
	c.waitActive(c.reps[1], kept)
	c.waitGone(c.reps[1], doomed)
	var before, after int
	for _, call := range cut.proxy.log() {
		switch {
		case call.at.Before(partitioned):
			before++
		case call.at.After(partitioned.Add(leaseTTL)):
			after++
			t.Errorf("%s, partitioned from the database at %s, sent %s %s at +%s (lease_ttl %s)", cut.host,
				partitioned.Format("15:04:05.000"), call.method, call.path, call.at.Sub(partitioned).Round(time.Millisecond), leaseTTL)
		}
	}
	if t.Failed() {
		return
	}
	link.Heal()
	healed := time.Now()
	c.waitBalanced(c.reps)
	c.checkPlacement(kept)
	if !cut.p.Alive() {
		t.Fatalf("%s exited after the partition healed:\n%s", cut.host, cut.p.Tail(20))
	}
	balanced := time.Since(healed)
	verdict := c.checkHistory(c.reps[1])
	t.Logf("%s partitioned from PostgreSQL during 90 builds and %d deletes: %d Ironic changes before, %d after lease_ttl (%s); the others finished every build and delete; healed → balanced again in %s; %s",
		cut.host, len(doomed), before, after, leaseTTL, balanced.Round(10*time.Millisecond), verdict)
}
