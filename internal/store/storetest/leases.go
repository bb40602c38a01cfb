package storetest

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// The lease tests judge expiry by the store's own clock (the database's):
// a lease claimed with a TTL of blinkTTL has expired once the test has slept
// twice that, and one of an hour has not, whatever the load. (A claim lists
// what it holds at its own instant, so even a short lease is listed; a
// database may keep times to the microsecond only.)
const (
	longTTL  = time.Hour
	blinkTTL = 20 * time.Millisecond
)

func blink() { time.Sleep(2 * blinkTTL) }

func leasesOf(t *testing.T, st store.Store) store.Leases {
	t.Helper()
	ls, ok := st.(store.Leases)
	if !ok {
		t.Fatalf("%T does not implement store.Leases", st)
	}
	return ls
}

func mustClaim(t *testing.T, ls store.Leases, c store.Claim) store.Claimed {
	t.Helper()
	got, err := ls.ClaimLeases(ctx(t), c)
	if err != nil {
		t.Fatalf("ClaimLeases(%+v): %v", c, err)
	}
	return got
}

func shardsOf(ls []store.Lease) []int {
	out := make([]int, len(ls))
	for i, l := range ls {
		out[i] = l.Shard
	}
	return out
}

func requireHeld(t *testing.T, what string, got store.Claimed, host string, n int, epoch int64) {
	t.Helper()
	if len(got.Held) != n {
		t.Fatalf("%s: holds shards %v, want %d of them", what, shardsOf(got.Held), n)
	}
	for _, l := range got.Held {
		if l.Holder != host || l.Epoch != epoch {
			t.Fatalf("%s: lease %+v, want holder %s epoch %d", what, l, host, epoch)
		}
	}
}

// testLeaseClaim: a lone replica takes every shard at once; a second one
// counts as live, so each may hold half, but nobody's unexpired lease is
// taken from it: the first gives up half (ReleaseLeases), the second takes
// those with a new epoch. Renewal keeps the epoch and moves the expiry on.
func testLeaseClaim(t *testing.T, st store.Store) {
	ls := leasesOf(t, st)
	a := mustClaim(t, ls, store.Claim{Host: "a", Shards: 8, TTL: longTTL})
	requireHeld(t, "a alone", a, "a", 8, 1)
	if a.Live != 1 {
		t.Fatalf("live = %d, want 1", a.Live)
	}
	b := mustClaim(t, ls, store.Claim{Host: "b", Shards: 8, TTL: longTTL})
	requireHeld(t, "b while a holds all", b, "b", 0, 0)
	if b.Live != 2 {
		t.Fatalf("live = %d, want 2", b.Live)
	}
	a2 := mustClaim(t, ls, store.Claim{Host: "a", Shards: 8, TTL: longTTL})
	requireHeld(t, "a renewed", a2, "a", 8, 1)
	if a2.Held[0].ExpiresAt.Before(a.Held[0].ExpiresAt) {
		t.Fatalf("renewal moved the expiry back: %v then %v", a.Held[0].ExpiresAt, a2.Held[0].ExpiresAt)
	}
	if err := ls.ReleaseLeases(ctx(t), "a", []int{4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	b = mustClaim(t, ls, store.Claim{Host: "b", Shards: 8, TTL: longTTL})
	requireHeld(t, "b after a's release", b, "b", 4, 2)
	if got := shardsOf(b.Held); got[0] != 4 || got[3] != 7 {
		t.Fatalf("b holds %v, want 4..7", got)
	}
	a3 := mustClaim(t, ls, store.Claim{Host: "a", Shards: 8, TTL: longTTL})
	requireHeld(t, "a keeps its half", a3, "a", 4, 1)

	all, err := ls.ListLeases(ctx(t))
	if err != nil || len(all) != 8 {
		t.Fatalf("ListLeases = %+v, %v", all, err)
	}
	for i, l := range all {
		want := "a"
		if i >= 4 {
			want = "b"
		}
		if l.Shard != i || l.Holder != want {
			t.Fatalf("lease %d = %+v, want holder %s", i, l, want)
		}
	}
}

// testLeaseExpiry: an expired lease is taken by another replica with
// epoch+1; leaving for good (ReleaseLeases nil) also drops the heartbeat,
// so the one left takes every shard; TakeOwn takes a host's own leases back
// with a new epoch.
func testLeaseExpiry(t *testing.T, st store.Store) {
	ls := leasesOf(t, st)
	requireHeld(t, "a", mustClaim(t, ls, store.Claim{Host: "a", Shards: 2, TTL: blinkTTL}), "a", 2, 1)
	blink()
	b := mustClaim(t, ls, store.Claim{Host: "b", Shards: 2, TTL: longTTL})
	// a's heartbeat is within b's TTL: two live replicas, one shard each.
	requireHeld(t, "b takes over", b, "b", 1, 2)
	if b.Live != 2 {
		t.Fatalf("live = %d, want 2", b.Live)
	}
	a := mustClaim(t, ls, store.Claim{Host: "a", Shards: 2, TTL: longTTL})
	requireHeld(t, "a takes its expired lease again", a, "a", 1, 2)

	if err := ls.ReleaseLeases(ctx(t), "a", nil); err != nil {
		t.Fatal(err)
	}
	b = mustClaim(t, ls, store.Claim{Host: "b", Shards: 2, TTL: longTTL})
	if b.Live != 1 || len(b.Held) != 2 {
		t.Fatalf("after a left: live %d, b holds %v; want 1 and both", b.Live, shardsOf(b.Held))
	}
	own := mustClaim(t, ls, store.Claim{Host: "b", Shards: 2, TTL: longTTL, TakeOwn: true})
	for i, l := range own.Held {
		if l.Epoch != b.Held[i].Epoch+1 {
			t.Fatalf("TakeOwn: %+v, want epoch %d", l, b.Held[i].Epoch+1)
		}
	}
}

// testLeaseFence: a write under a fence passes while its lease holds and is
// refused with ErrFenced, writing nothing, once the lease expired or went to
// another holder; a write without a fence (the API's) always passes.
func testLeaseFence(t *testing.T, st store.Store) {
	ls := leasesOf(t, st)
	s := mustCreate(t, st, MinimalServer("s1", T0))
	sh := store.ShardOf(s.ID, 1) // one shard: b takes it over whatever the balance
	a := mustClaim(t, ls, store.Claim{Host: "a", Shards: 1, TTL: longTTL})
	fa := store.Fence{Shard: sh, Holder: "a", Epoch: a.Held[sh].Epoch}
	s.Phase = lifecycle.PhaseReserving
	s.NodeID = "node-1"
	if err := st.SaveServer(store.WithFence(ctx(t), fa), s); err != nil {
		t.Fatalf("SaveServer under a held lease: %v", err)
	}
	if err := st.CreatePort(store.WithFence(ctx(t), fa), store.Port{ID: "p1", ServerID: s.ID, NetworkID: "n",
		IP: "10.0.0.2", CreatedAt: T0}); err != nil {
		t.Fatalf("CreatePort under a held lease: %v", err)
	}

	// A stale epoch of the same holder (a restart took its leases back).
	own := mustClaim(t, ls, store.Claim{Host: "a", Shards: 1, TTL: blinkTTL, TakeOwn: true})
	stale := *s
	stale.Phase = lifecycle.PhaseNetworking
	wantErr(t, "SaveServer at an old epoch", st.SaveServer(store.WithFence(ctx(t), fa), &stale), store.ErrFenced)

	// Expired, nobody took it yet.
	blink()
	fa = store.Fence{Shard: sh, Holder: "a", Epoch: own.Held[sh].Epoch}
	wantErr(t, "SaveServer after expiry", st.SaveServer(store.WithFence(ctx(t), fa), &stale), store.ErrFenced)

	// Taken by b: a's fence is refused on every write, b's passes.
	b := mustClaim(t, ls, store.Claim{Host: "b", Shards: 1, TTL: longTTL})
	var fb store.Fence
	for _, l := range b.Held {
		if l.Shard == sh {
			fb = store.Fence{Shard: sh, Holder: "b", Epoch: l.Epoch}
		}
	}
	if fb.Holder == "" {
		t.Fatalf("b did not take shard %d: %+v", sh, b)
	}
	if fb.Epoch != fa.Epoch+1 {
		t.Fatalf("takeover epoch %d, want %d", fb.Epoch, fa.Epoch+1)
	}
	fctx := store.WithFence(ctx(t), fa)
	wantErr(t, "SaveServer by the old holder", st.SaveServer(fctx, &stale), store.ErrFenced)
	wantErr(t, "SetPortVIF by the old holder", st.SetPortVIF(fctx, "p1", "node-1"), store.ErrFenced)
	wantErr(t, "BindPort by the old holder", st.BindPort(fctx, "p1", "node-1", "fa:16:3e:00:00:01", store.Binding{}), store.ErrFenced)
	wantErr(t, "DeletePort by the old holder", st.DeletePort(fctx, "p1"), store.ErrFenced)
	got := mustGet(t, st, s.ID)
	if got.Phase != lifecycle.PhaseReserving || got.Version != s.Version {
		t.Fatalf("a fenced write changed the server: %s v%d, want reserving v%d", got.Phase, got.Version, s.Version)
	}
	if p, err := st.GetPort(ctx(t), "p1"); err != nil || p.VIFNode != "" {
		t.Fatalf("a fenced write changed the port: %+v, %v", p, err)
	}
	if err := st.SaveServer(store.WithFence(ctx(t), fb), &stale); err != nil {
		t.Fatalf("SaveServer by the new holder: %v", err)
	}
	if err := st.RequestDelete(ctx(t), s.ID, "req-del", T0); err != nil {
		t.Fatalf("RequestDelete without a fence: %v", err)
	}
}
