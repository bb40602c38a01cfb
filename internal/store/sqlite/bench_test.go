package sqlite

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/novanotify"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

const benchRows = 10000

// seed creates n servers; the first busy of them are building (need
// work), the rest active. Returns them as stored.
func seed(b *testing.B, n, busy int) (*Store, []*lifecycle.Server) {
	b.Helper()
	st, err := Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	out := make([]*lifecycle.Server, n)
	for i := range n {
		s := storetest.FullServer(fmt.Sprintf("srv-%05d", i))
		s.CreatedAt = storetest.T0.Add(time.Duration(i) * time.Millisecond)
		s.Phase = lifecycle.PhaseDeploying
		if i >= busy {
			s.Phase = lifecycle.PhaseActive
			s.Fault = nil
			s.OpDone = s.OpGen // no day-2 operation pending: an idle server
		}
		if err := st.CreateServer(b.Context(), s); err != nil {
			b.Fatal(err)
		}
		out[i] = s
	}
	return st, out
}

func step(s *lifecycle.Server, n int) lifecycle.Event {
	s.UpdatedAt = storetest.T0.Add(time.Duration(n) * time.Millisecond)
	s.PhaseSince = s.UpdatedAt
	return lifecycle.Event{RequestID: s.CreateRequestID, Action: lifecycle.ActionCreate, Name: "deploy",
		Node: s.NodeID, Result: lifecycle.ResultSuccess, Start: s.UpdatedAt, Finish: s.UpdatedAt}
}

// BenchmarkSaveServer: one compare-and-swap write plus one event, over
// 10,000 rows.
func BenchmarkSaveServer(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		st, ss := seed(b, benchRows, benchRows)
		i := 0
		defer cpuPerOp(b)()
		for b.Loop() {
			s := ss[i%len(ss)]
			if err := st.SaveServer(b.Context(), s, step(s, i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("notifying", func(b *testing.B) {
		st, ss := seed(b, benchRows, benchRows)
		defer cpuPerOp(b)()
		storetest.BenchSaveNotifying(b, st, ss, novanotify.Builder{Host: "h", PublisherID: "nova-compute:h"}.Notices)
	})
	b.Run("parallel", func(b *testing.B) {
		st, ss := seed(b, benchRows, benchRows)
		var workers atomic.Int64
		b.ResetTimer()
		defer cpuPerOp(b)()
		b.RunParallel(func(pb *testing.PB) {
			// Each goroutine owns the servers congruent to its number, so no conflicts.
			w := int(workers.Add(1) - 1)
			i := w
			for pb.Next() {
				s := ss[i%len(ss)]
				if err := st.SaveServer(b.Context(), s, step(s, i)); err != nil {
					b.Error(err)
					return
				}
				i += 64
			}
		})
	})
}

// BenchmarkServersNeedingWork: the reconciler's per-tick load, over 10,000 rows.
func BenchmarkServersNeedingWork(b *testing.B) {
	for _, busy := range []int{benchRows, benchRows / 10} {
		b.Run(fmt.Sprintf("%d_of_%d", busy, benchRows), func(b *testing.B) {
			st, _ := seed(b, benchRows, busy)
			defer cpuPerOp(b)()
			for b.Loop() {
				ss, err := st.ServersNeedingWork(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				if len(ss) != busy {
					b.Fatalf("%d servers, want %d", len(ss), busy)
				}
			}
		})
	}
}

// BenchmarkListServers: API pages over 10,000 rows (a page deep in the
// list, and a status filter).
func BenchmarkListServers(b *testing.B) {
	st, ss := seed(b, benchRows, benchRows/2)
	for _, tc := range []struct {
		name string
		opts store.ListOptions
	}{
		{"page100_deep", store.ListOptions{Limit: 100, Marker: ss[9000].ID}},
		{"page1000", store.ListOptions{}},
		{"status_ACTIVE_page100", store.ListOptions{Status: "ACTIVE", Limit: 100}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				if _, err := st.ListServers(b.Context(), tc.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("get", func(b *testing.B) {
		i := 0
		defer cpuPerOp(b)()
		for b.Loop() {
			if _, err := st.GetServer(b.Context(), ss[i%len(ss)].ID); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkLoadShards: a replica's per-tick load at 10,000 busy servers,
// every shard against the 22 of 64 it holds (storetest.BenchLoadShards).
func BenchmarkLoadShards(b *testing.B) {
	st, err := Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	storetest.BenchLoadShards(b, st, benchRows)
}

// BenchmarkPortsOn: the ports of a page of 50 servers among 1,000 with one
// port each (the detailed list's second query).
func BenchmarkPortsOn(b *testing.B) {
	st, ss := seed(b, 1000, 0)
	storetest.BenchPortsOn(b, st, ss, func() func() { return cpuPerOp(b) })
}
