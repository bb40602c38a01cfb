package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store"
)

// heldStore counts the store's write transactions and holds the first one
// until released, so that the saves made meanwhile queue behind it.
type heldStore struct {
	store.Batch
	release chan struct{}
	first   sync.Once
	held    atomic.Bool
	singles atomic.Int32
	batches atomic.Int32
	largest atomic.Int32
}

func (h *heldStore) hold() { h.first.Do(func() { h.held.Store(true); <-h.release }) }

func (h *heldStore) SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error {
	h.hold()
	h.singles.Add(1)
	return h.Batch.SaveServer(ctx, s, events...)
}

func (h *heldStore) SaveServers(ctx context.Context, saves []store.Save) []error {
	h.hold()
	h.batches.Add(1)
	if n := int32(len(saves)); n > h.largest.Load() {
		h.largest.Store(n)
	}
	return h.Batch.SaveServers(ctx, saves)
}

// testGroupCommit: saves made while a commit is under way share the next
// transaction, and each keeps SaveServer's contract (a stale one conflicts
// alone, Version moves only on success).
func testGroupCommit(t *testing.T, st store.Store) {
	b, ok := st.(store.Batch)
	if !ok {
		t.Skip("not a store.Batch")
	}
	ctx := t.Context()
	const n = 12
	var servers []*lifecycle.Server
	for i := range n {
		s := FullServer(fmt.Sprintf("gc-%02d", i))
		if err := st.CreateServer(ctx, s); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	// The last one is changed under the saves: its save must conflict.
	stale := servers[n-1].Clone()
	if err := st.RequestDelete(ctx, stale.ID, "req-del-gc", T0); err != nil {
		t.Fatal(err)
	}
	servers[n-1] = stale
	h := &heldStore{Batch: b, release: make(chan struct{})}
	g := store.NewGroupCommit(h)
	nexts := make([]*lifecycle.Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range servers {
		next := s.Clone()
		next.Phase, next.NodeID, next.DeployRequested, next.PortsAllocated = lifecycle.PhaseError, "", false, false
		nexts[i] = next
		wg.Go(func() { errs[i] = g.SaveServer(ctx, next, lifecycle.Event{Name: "gc", Start: T0}) })
		if i == 0 {
			waitFor(t, "the first save to start its commit", h.held.Load)
		}
	}
	waitFor(t, "the other saves to queue", func() bool { return g.Waiting() == n-1 })
	close(h.release)
	wg.Wait()
	if s, bt, l := h.singles.Load(), h.batches.Load(), h.largest.Load(); s != 1 || bt != 1 || l != n-1 {
		t.Fatalf("%d single commits and %d batches (largest %d), want 1 and 1 of %d", s, bt, l, n-1)
	}
	for i, next := range nexts {
		want := servers[i].Version + 1
		if i == n-1 {
			if !errors.Is(errs[i], store.ErrConflict) || next.Version != servers[i].Version {
				t.Fatalf("the stale save: %v, version %d", errs[i], next.Version)
			}
			continue
		}
		if errs[i] != nil || next.Version != want {
			t.Fatalf("save %d: %v, version %d want %d", i, errs[i], next.Version, want)
		}
		got, err := st.GetServer(ctx, next.ID)
		if err != nil || got.Phase != lifecycle.PhaseError || got.Version != want {
			t.Fatalf("%s after the group commit: %+v, %v", next.ID, got, err)
		}
	}
}

// testGroupCommitFence: the save that commits a batch carries a fence no
// longer held; it alone is refused, the others of its batch are written.
func testGroupCommitFence(t *testing.T, st store.Store) {
	b, ok := st.(store.Batch)
	if !ok {
		t.Skip("not a store.Batch")
	}
	ls := leasesOf(t, st)
	ctx := t.Context()
	var servers []*lifecycle.Server
	for i := range 4 {
		servers = append(servers, mustCreate(t, st, MinimalServer(fmt.Sprintf("gf-%d", i), T0)))
	}
	sh := store.ShardOf(servers[1].ID, 1)
	a := mustClaim(t, ls, store.Claim{Host: "a", Shards: 1, TTL: longTTL})
	stale := store.Fence{Shard: sh, Holder: "a", Epoch: a.Held[sh].Epoch}
	mustClaim(t, ls, store.Claim{Host: "a", Shards: 1, TTL: longTTL, TakeOwn: true}) // a new epoch: stale is stale
	h := &heldStore{Batch: b, release: make(chan struct{})}
	g := store.NewGroupCommit(h)
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		next := s.Clone()
		next.Phase, next.NodeID = lifecycle.PhaseError, ""
		sctx := ctx
		if i == 1 {
			sctx = store.WithFence(ctx, stale) // first in the queue: it commits the batch
		}
		wg.Go(func() { errs[i] = g.SaveServer(sctx, next) })
		switch i {
		case 0:
			waitFor(t, "the first save to start its commit", h.held.Load)
		case 1:
			waitFor(t, "the fenced save to queue first", func() bool { return g.Waiting() == 1 })
		}
	}
	waitFor(t, "the other saves to queue", func() bool { return g.Waiting() == len(servers)-1 })
	close(h.release)
	wg.Wait()
	for i, err := range errs {
		if i == 1 {
			if !errors.Is(err, store.ErrFenced) {
				t.Errorf("the stale-fenced save: %v, want ErrFenced", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("save %d of the batch: %v (the committing save's fence failed it)", i, err)
		}
	}
}

// waitFor is poll.Until for a bare condition.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 10*time.Second, what, func() (bool, string) { return cond(), "" })
}
