package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// BenchLoadShards measures the reconciler's per-tick load of a replica
// among several, at busy servers all needing work and every record changed
// since the last tick (a burst: each one is decoded): "every shard" is
// what a replica read before the shard column (all of them, filtering
// afterwards), "22 of 64 shards" what one of three replicas reads now.
// "full load" is ServersNeedingWork, the path of a store without
// store.WorkLister.
func BenchLoadShards(b *testing.B, st store.Store, busy int) {
	wl, ok := st.(store.WorkLister)
	if !ok {
		b.Skip("not a store.WorkLister")
	}
	ctx := b.Context()
	for i := range busy {
		s := FullServer(fmt.Sprintf("load-%05d", i))
		s.Phase = lifecycle.PhaseDeploying
		if err := st.CreateServer(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	held := store.Shards{N: 64}
	for sh := range 22 {
		held.Held = append(held.Held, sh)
	}
	load := func(b *testing.B, sh store.Shards) {
		var n int
		for b.Loop() {
			vs, err := wl.NeedsWorkVersions(ctx, sh)
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]string, len(vs))
			for i, v := range vs {
				ids[i] = v.ID
			}
			got, err := wl.ServersByID(ctx, ids)
			if err != nil {
				b.Fatal(err)
			}
			n = len(got)
		}
		b.ReportMetric(float64(n), "servers/tick")
	}
	b.Run("full load", func(b *testing.B) {
		var n int
		for b.Loop() {
			got, err := st.ServersNeedingWork(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n = len(got)
		}
		b.ReportMetric(float64(n), "servers/tick")
	})
	b.Run("every shard", func(b *testing.B) { load(b, store.Shards{}) })
	b.Run("22 of 64 shards", func(b *testing.B) { load(b, held) })
}

// CheckMigrated checks a store just migrated from an older schema: the
// servers needing work are want, unchanged, and each one's stored shard
// hash (read by hash) is store.ShardHash of its id.
func CheckMigrated(t *testing.T, st store.Store, want []*lifecycle.Server, hash func(id string) (int64, error)) {
	t.Helper()
	got, err := st.ServersNeedingWork(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d servers after the migration, want %d", len(got), len(want))
	}
	for i := range got {
		if !EqualServers(got[i], want[i]) {
			t.Fatalf("server changed by the migration:\n got %+v\nwant %+v", got[i], want[i])
		}
		h, err := hash(got[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if h != int64(store.ShardHash(got[i].ID)) {
			t.Errorf("server %s: shard_hash %d, want %d", got[i].ID, h, store.ShardHash(got[i].ID))
		}
	}
}

// BenchSaveNotifying is SaveServer of ss (seeded, 10,000 rows) with
// notifications on: each save renames its server, so the notifier (Nova's
// builder in the stores' benchmarks) makes one instance.update, read
// before and inserted with the save.
func BenchSaveNotifying(b *testing.B, st store.Store, ss []*lifecycle.Server, n store.Notifier) {
	st.(store.Outbox).SetNotifier(n)
	defer st.(store.Outbox).SetNotifier(nil)
	i := 0
	for b.Loop() {
		s := ss[i%len(ss)]
		s.Name = fmt.Sprintf("srv-%d", i)
		s.UpdatedAt = T0.Add(time.Duration(i) * time.Millisecond)
		if err := st.SaveServer(b.Context(), s); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchPortsOn gives each of ss one port and measures PortsOn over a page
// of 50 of them (the detailed list's second query); measure, called once
// the ports are in, returns what ends the measurement.
func BenchPortsOn(b *testing.B, st store.Store, ss []*lifecycle.Server, measure func() func()) {
	ids := make([]string, 0, 50)
	for i, s := range ss {
		if err := st.CreatePort(b.Context(), store.Port{ID: fmt.Sprintf("port-%05d", i), ServerID: s.ID,
			NetworkID: "net", IP: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1),
			MAC: fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256)}); err != nil {
			b.Fatal(err)
		}
		if i%(len(ss)/cap(ids)) == 0 && len(ids) < cap(ids) {
			ids = append(ids, s.ID)
		}
	}
	defer measure()()
	for b.Loop() {
		ports, err := st.PortsOn(b.Context(), ids)
		if err != nil || len(ports) != len(ids) {
			b.Fatal(len(ports), err)
		}
	}
}
