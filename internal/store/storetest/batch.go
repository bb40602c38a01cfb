package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// RunOptional checks the optional interfaces a store may implement
// (store.BatchSaver, store.WorkLister); each part skips when the store
// does not implement it.
func RunOptional(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("BatchSaver", func(t *testing.T) { testBatchSaver(t, open(t)) })
	t.Run("GroupCommit", func(t *testing.T) { testGroupCommit(t, open(t)) })
	t.Run("GroupCommitFence", func(t *testing.T) { testGroupCommitFence(t, open(t)) })
	t.Run("WorkLister", func(t *testing.T) { testWorkLister(t, open(t)) })
	t.Run("WorkListerShards", func(t *testing.T) { testWorkListerShards(t, open(t)) })
}

func testBatchSaver(t *testing.T, st store.Store) {
	bs, ok := st.(store.BatchSaver)
	if !ok {
		t.Skip("not a store.BatchSaver")
	}
	ctx := t.Context()
	a, b, c := FullServer("a"), FullServer("b"), FullServer("c")
	for _, s := range []*lifecycle.Server{a, b, c} {
		if err := st.CreateServer(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	stale := b.Clone() // b is then changed under the batch: its save must conflict alone
	if err := st.RequestDelete(ctx, "b", "req-del-b", T0); err != nil {
		t.Fatal(err)
	}
	next := func(s *lifecycle.Server) *lifecycle.Server {
		n := s.Clone()
		n.Phase, n.NodeID, n.DeployRequested, n.PortsAllocated = lifecycle.PhaseError, "", false, false
		return n
	}
	na, nb, nc := next(a), next(stale), next(c)
	errs := bs.SaveServers(ctx, []store.Save{{Server: na}, {Server: nb}, {Server: nc}})
	if len(errs) != 3 || errs[0] != nil || !errors.Is(errs[1], store.ErrConflict) || errs[2] != nil {
		t.Fatalf("SaveServers errors %v, want nil, ErrConflict, nil", errs)
	}
	if na.Version != a.Version+1 || nb.Version != stale.Version || nc.Version != c.Version+1 {
		t.Fatalf("versions after the batch: %d %d %d", na.Version, nb.Version, nc.Version)
	}
	for _, want := range []*lifecycle.Server{na, nc} {
		got, err := st.GetServer(ctx, want.ID)
		if err != nil || got.Phase != lifecycle.PhaseError || got.Version != want.Version {
			t.Fatalf("%s after the batch: %+v, %v", want.ID, got, err)
		}
	}
	if got, _ := st.GetServer(ctx, "b"); got.Phase != b.Phase || got.Desired != lifecycle.DesiredDeleted {
		t.Fatalf("the conflicting save wrote: %+v", got)
	}
}

func testWorkLister(t *testing.T, st store.Store) {
	wl, ok := st.(store.WorkLister)
	if !ok {
		t.Skip("not a store.WorkLister")
	}
	ctx := t.Context()
	for _, id := range []string{"w2", "w1", "w3"} {
		if err := st.CreateServer(ctx, FullServer(id)); err != nil {
			t.Fatal(err)
		}
	}
	done, err := st.GetServer(ctx, "w3") // a new version
	if err != nil {
		t.Fatal(err)
	}
	done.Phase = lifecycle.PhaseVolumes
	if err := st.SaveServer(ctx, done); err != nil {
		t.Fatal(err)
	}
	want, err := st.ServersNeedingWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := wl.NeedsWorkVersions(ctx, store.Shards{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, v := range vs {
		if i >= len(want) || v.ID != want[i].ID || v.Version != want[i].Version {
			t.Fatalf("NeedsWorkVersions %v, want the ids and versions of ServersNeedingWork", vs)
		}
		ids = append(ids, v.ID)
	}
	if len(vs) != len(want) || len(vs) < 2 {
		t.Fatalf("NeedsWorkVersions %v, want the ids and versions of ServersNeedingWork", vs)
	}
	got, err := wl.ServersByID(ctx, append(ids, "unknown"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ServersByID differs from ServersNeedingWork:\n got %+v\nwant %+v", got, want)
	}
}

// testWorkListerShards: NeedsWorkVersions under a shard selection lists
// exactly the servers needing work whose ShardOf is held, under any shard
// count (the stored hash serves every count).
func testWorkListerShards(t *testing.T, st store.Store) {
	wl, ok := st.(store.WorkLister)
	if !ok {
		t.Skip("not a store.WorkLister")
	}
	ctx := t.Context()
	var all []string
	for i := range 40 {
		id := fmt.Sprintf("sh-%02d", i)
		if err := st.CreateServer(ctx, FullServer(id)); err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
	}
	for _, sel := range []store.Shards{{N: 4, Held: []int{1, 3}}, {N: 7, Held: []int{0}}, {N: 64, Held: []int{5, 9, 33}},
		{N: 4}, {N: 1, Held: []int{0}}} {
		var want []string
		for _, id := range all {
			if sel.Has(id) {
				want = append(want, id)
			}
		}
		vs, err := wl.NeedsWorkVersions(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("NeedsWorkVersions(%+v) = %v, want %v", sel, got, want)
		}
	}
}
