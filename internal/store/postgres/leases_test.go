package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store"
)

// TestPausedWriterDoesNotHoldTheTakeover: a replica stopped in the middle
// of a fenced write keeps its lease row locked FOR SHARE; the takeover
// skips locked rows, so without the idle-in-transaction timeout that shard
// would never move to a live replica while the writer stays stopped.
func TestPausedWriterDoesNotHoldTheTakeover(t *testing.T) {
	st := openFresh(t)
	ctx := t.Context()
	const shards, ttl = 2, time.Second
	a, err := st.ClaimLeases(ctx, store.Claim{Host: "a", Shards: shards, TTL: ttl, TakeOwn: true})
	if err != nil || len(a.Held) != shards {
		t.Fatalf("a claims: %+v, %v", a, err)
	}
	// The paused writer: a transaction that read its fence and then stopped.
	tx, err := st.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	l := a.Held[0]
	var one int
	if err := tx.QueryRow(ctx, pqFence, l.Shard, l.Holder, l.Epoch).Scan(&one); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// The stopped writer's lock must not keep a shard from the takeover.
	poll.Until(t, 30*time.Second, "b holding every shard", func() (bool, string) {
		b, err := st.ClaimLeases(ctx, store.Claim{Host: "b", Shards: shards, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		return len(b.Held) == shards, fmt.Sprintf("b holds %d of %d shards after %s", len(b.Held), shards, time.Since(start))
	})
	t.Logf("b holds every shard %s after the writer stopped", time.Since(start).Round(100*time.Millisecond))
	if err := tx.Commit(ctx); err == nil {
		t.Errorf("the stopped writer's transaction committed after its session should have ended")
	}
}
