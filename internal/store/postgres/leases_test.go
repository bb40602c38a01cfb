package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store"
)

// TestPausedWriterDoesNotHoldTheTakeover: a replica stopped in the middle
// of a fenced write keeps its lease row locked FOR KEY SHARE; the takeover
// skips locked rows, so without the idle-in-transaction timeout that shard
// would never move to a live replica while the writer stays stopped.
func TestPausedWriterDoesNotHoldTheTakeover(t *testing.T) {
	const shards, ttl = 2, time.Second
	st, _, tx := writerInFlight(t, shards, ttl) // then stopped
	ctx := t.Context()
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

// writerInFlight opens a fresh store, has host "a" take all its shards
// for ttl, and starts a fenced write on the first: a transaction that has
// read its lease row as CheckFence does and not yet committed.
func writerInFlight(t *testing.T, shards int, ttl time.Duration) (*Store, store.Claimed, pgx.Tx) {
	t.Helper()
	st := openFresh(t)
	a, err := st.ClaimLeases(t.Context(), store.Claim{Host: "a", Shards: shards, TTL: ttl, TakeOwn: true})
	if err != nil || len(a.Held) != shards {
		t.Fatalf("a claims: %+v, %v", a, err)
	}
	tx, err := st.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(t.Context())) })
	l := a.Held[0]
	var one int
	if err := tx.QueryRow(t.Context(), pqFence, l.Shard, l.Holder, l.Epoch).Scan(&one); err != nil {
		t.Fatal(err)
	}
	return st, a, tx
}

// claimed is what a claim run by claimWaits ended with.
type claimed struct {
	store.Claimed
	err error
}

// claimWaits runs c on st and reports, once it is known, whether the claim
// had to wait on a row lock (seen in pg_stat_activity) before it ended.
func claimWaits(t *testing.T, st *Store, c store.Claim) (waited bool, done <-chan claimed) {
	t.Helper()
	out := make(chan claimed, 1)
	go func() {
		got, err := st.ClaimLeases(t.Context(), c)
		out <- claimed{got, err}
	}()
	var ended claimed
	finished := false
	poll.Until(t, 10*time.Second, "the claim ending or waiting on a lock", func() (bool, string) {
		select {
		case ended = <-out:
			finished = true
			return true, ""
		default:
		}
		var n int
		err := st.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE leases%'`).Scan(&n)
		return err == nil && n > 0, fmt.Sprintf("%d waiting (%v)", n, err)
	})
	if finished {
		out <- ended
	}
	return !finished, out
}

// TestRenewalDoesNotWaitForFencedWrites: a renewal only extends the expiry,
// so it neither waits for the holder's own writes in flight nor holds up
// the next ones (a fence read FOR SHARE made every renewal queue behind the
// writes, and the writes behind it, even to deadlock).
func TestRenewalDoesNotWaitForFencedWrites(t *testing.T) {
	const shards, ttl = 2, 30 * time.Second
	st, a, tx := writerInFlight(t, shards, ttl)
	waited, done := claimWaits(t, st, store.Claim{Host: "a", Shards: shards, TTL: ttl})
	if waited {
		t.Fatal("the renewal waits for a fenced write of its own holder")
	}
	if got := <-done; got.err != nil || len(got.Held) != shards || got.Held[0].Epoch != a.Held[0].Epoch {
		t.Fatalf("renewal: %+v, want both shards at epoch %d", got, a.Held[0].Epoch)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatalf("the fenced write fails after a renewal: %v", err)
	}
}

// TestRestartedHolderWaitsForItsOldWrite: a holder that comes back takes
// its own leases at a new epoch; a write of its earlier life still in
// flight commits first (it was checked under the old epoch), and the new
// epoch follows it.
func TestRestartedHolderWaitsForItsOldWrite(t *testing.T) {
	const shards, ttl = 2, 30 * time.Second
	st, a, tx := writerInFlight(t, shards, ttl)
	waited, done := claimWaits(t, st, store.Claim{Host: "a", Shards: shards, TTL: ttl, TakeOwn: true})
	if !waited {
		t.Fatal("the restarted holder moved to a new epoch under a write of its earlier life")
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatalf("the old write: %v", err)
	}
	if got := <-done; got.err != nil || len(got.Held) != shards || got.Held[0].Epoch != a.Held[0].Epoch+1 {
		t.Fatalf("take own: %+v, want both shards at epoch %d", got, a.Held[0].Epoch+1)
	}
}
