package reconciler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

// decodeCounter records the ids the reconciler has the store decode.
type decodeCounter struct {
	*sqlite.Store
	decoded []string
}

func (d *decodeCounter) ServersByID(ctx context.Context, ids []string) ([]*lifecycle.Server, error) {
	d.decoded = append(d.decoded, ids...)
	return d.Store.ServersByID(ctx, ids)
}

// TestLoadWorkHeldShardsOnly: a replica holding some of the shards loads,
// and has the store decode, only the servers of those shards.
func TestLoadWorkHeldShardsOnly(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := leaseStore(t, clk)
	ctx := t.Context()
	const shards = 8
	var ks []*Keeper
	for _, h := range []string{"a", "b"} {
		ks = append(ks, NewKeeper(st, clk, nil, LeaseConfig{Host: h, Shards: shards, TTL: 10 * time.Second}, LeaseHooks{}))
	}
	for range 3 {
		for _, k := range ks {
			if err := k.Round(ctx); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(3 * time.Second)
	}
	mine := held(ks[0])
	if len(mine) == 0 || len(mine) == shards {
		t.Fatalf("replica a holds %d of %d shards, want a share", len(mine), shards)
	}
	want := map[string]bool{}
	for i := range 40 {
		s := storetest.FullServer(fmt.Sprintf("srv-%02d", i))
		s.Phase = lifecycle.PhaseDeploying
		if err := st.CreateServer(ctx, s); err != nil {
			t.Fatal(err)
		}
		if mine[store.ShardOf(s.ID, shards)] {
			want[s.ID] = true
		}
	}
	dc := &decodeCounter{Store: st}
	r := &Reconciler{store: dc, leases: ks[0]}
	got, err := r.loadWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("loaded %d servers, want the %d of a's shards", len(got), len(want))
	}
	for _, s := range got {
		if !want[s.ID] {
			t.Errorf("loaded %s of shard %d, not a's", s.ID, store.ShardOf(s.ID, shards))
		}
	}
	if len(dc.decoded) != len(want) {
		t.Fatalf("the store decoded %d servers, want %d", len(dc.decoded), len(want))
	}
}
