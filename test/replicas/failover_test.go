package replicas

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// TestFailoverToStandby: two replicas on a primary PostgreSQL with a
// synchronous streaming standby (two private clusters, pg_basebackup),
// reached by one multi-host DSN with target_session_attrs=read-write. In
// the middle of a burst of creates the primary is killed (immediate) and
// the standby promoted; deletes of 8 servers are sent meanwhile and again
// after. The replicas ride through onto the standby: none exits, requests
// meanwhile get 503, every shard is leased again; every accepted create
// ends ACTIVE on its own node, or deleted, and no create answered 503
// made a server (its retry would make a second: checkPlacement counts
// them); the history check finds nothing lost, resurrected, double-held
// or leaked.
func TestFailoverToStandby(t *testing.T) {
	primary := pgtest.Private(t)
	standby := primary.Standby()
	c := newClusterOn(t, ingottest.Binary(t), pgtest.MultiHost(primary, standby), 200, 2, 200*time.Millisecond, nil)
	var killed, promoted time.Time
	o := c.throughOutage("fail", func() { primary.Kill(); killed = time.Now() }, func() {
		standby.Promote()
		promoted = time.Now()
	})
	t.Logf("primary killed, standby promoted %s later, during %d creates and %d deletes: %d answers 503 (sent again); both replicas rode through onto the standby, every shard leased again %s after the kill; %s",
		promoted.Sub(killed).Round(10*time.Millisecond), len(o.ids), len(o.doomed), c.unavailable.Load(), o.back.Round(10*time.Millisecond), o.verdict)
}
