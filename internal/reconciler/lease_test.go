package reconciler

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

func leaseStore(t *testing.T, clk clock.Clock) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ingot.db"), sqlite.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func held(k *Keeper) map[int]bool {
	out := map[int]bool{}
	for _, l := range k.Status().Held {
		out[l.Shard] = true
	}
	return out
}

// TestKeeperBalance: three replicas end up with every shard held by exactly
// one of them, none holding more than ceil(shards/live); a replica leaving
// gracefully hands its shards over without waiting for an expiry.
func TestKeeperBalance(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := leaseStore(t, clk)
	cfg := func(h string) LeaseConfig { return LeaseConfig{Host: h, Shards: 8, TTL: 10 * time.Second} }
	var ks []*Keeper
	for _, h := range []string{"a", "b", "c"} {
		ks = append(ks, NewKeeper(st, clk, nil, cfg(h), LeaseHooks{}))
	}
	ctx := t.Context()
	if err := ks[0].Round(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(held(ks[0])); n != 8 {
		t.Fatalf("a lone replica holds %d of 8 shards at its first round", n)
	}
	for range 3 { // a few renewal rounds
		clk.Advance(3 * time.Second)
		for _, k := range ks {
			if err := k.Round(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	owner := map[int]string{}
	for _, k := range ks {
		h := held(k)
		if len(h) > store.Share(8, 3) {
			t.Errorf("%s holds %d shards, more than its share %d", k.cfg.Host, len(h), store.Share(8, 3))
		}
		for sh := range h {
			if o, dup := owner[sh]; dup {
				t.Errorf("shard %d held by %s and %s", sh, o, k.cfg.Host)
			}
			owner[sh] = k.cfg.Host
		}
	}
	if len(owner) != 8 {
		t.Fatalf("shards held: %v, want all 8", owner)
	}

	if err := ks[2].Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range ks[:2] {
		if err := k.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := len(held(ks[0])), len(held(ks[1])); a+b != 8 {
		t.Fatalf("after c left: a holds %d, b %d; want all 8 between them at once", a, b)
	}
}

// TestKeeperGuard: an Ironic change goes out only under a lease valid with
// margin; past the local deadline (a pause) it is refused before it is sent,
// and a shard with a call under way is not given back for balance.
func TestKeeperGuard(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := leaseStore(t, clk)
	k := NewKeeper(st, clk, nil, LeaseConfig{Host: "a", Shards: 2, TTL: 10 * time.Second}, LeaseHooks{})
	ctx := t.Context()
	if err := k.Round(ctx); err != nil {
		t.Fatal(err)
	}
	f, ok := k.Fence("server-2") // shard 1: the one balance would give back first
	if !ok {
		t.Fatal("no fence for a server of a held shard")
	}
	sent := 0
	g := guardedIronic{k: k}
	call := func(context.Context) error { sent++; return nil }
	fctx := store.WithFence(ctx, f)
	if err := g.do(fctx, call); err != nil || sent != 1 {
		t.Fatalf("call under a valid lease: %v (sent %d)", err, sent)
	}
	if err := g.do(ctx, call); !errors.Is(err, ErrLeaseLost) || sent != 1 {
		t.Fatalf("call with no fence: %v (sent %d)", err, sent)
	}

	// A call under way keeps its shard from being given back.
	_, done, err := k.begin(fctx)
	if err != nil {
		t.Fatal(err)
	}
	b := NewKeeper(st, clk, nil, LeaseConfig{Host: "b", Shards: 2, TTL: 10 * time.Second}, LeaseHooks{})
	if err := b.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if !held(k)[f.Shard] {
		t.Fatalf("shard %d given back with a call under way", f.Shard)
	}
	done()

	// Paused past the deadline (renewal + TTL - margin = 7.5 s): refused.
	clk.Advance(8 * time.Second)
	if _, ok := k.Fence("server-2"); ok {
		t.Fatal("fence handed out past the local deadline")
	}
	if err := g.do(fctx, call); !errors.Is(err, ErrLeaseLost) || sent != 1 {
		t.Fatalf("call past the local deadline: %v (sent %d)", err, sent)
	}
	// The database still shows the lease for 2 s more: the margin.
	ls, err := st.ListLeases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l := ls[f.Shard]; l.Holder != "a" || !clk.Now().Before(l.ExpiresAt) {
		t.Fatalf("lease %+v: the local deadline should end before the database's expiry", l)
	}
}
