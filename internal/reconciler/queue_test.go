package reconciler_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/scheduler"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

// live is a reconciler run by Run on the wall clock, over the simulator
// behind HTTP (its fault injection delays calls for real).
type live struct {
	t    *testing.T
	sim  *ironicsim.Sim
	st   *sqlite.Store
	rec  *reconciler.Reconciler
	nets network.Networks
	n    int
	full atomic.Int64 // full ticks so far
}

func newLive(t *testing.T, nodes int, cfg reconciler.Config) *live {
	t.Helper()
	l := &live{t: t}
	l.sim = ironicsim.New(ironicsim.Options{DeployTime: 200 * time.Millisecond, UndeployTime: 100 * time.Millisecond, Seed: 1})
	l.sim.AddNodes(nodes, ironicsim.NodeSpec{ResourceClass: "bm", Ports: 1})
	srv := httptest.NewServer(l.sim.Handler())
	t.Cleanup(srv.Close)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	l.st = st
	ic, err := ironic.New(ironic.Config{URL: srv.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	l.nets = network.Networks{{ID: "3c1f0d6e-8a52-4c47-9d1e-7f1b2a9c0d11", Name: "prov", CIDR: netip.MustParsePrefix("10.0.0.0/16")}}
	l.rec = reconciler.New(reconciler.Deps{
		Store: st, Ironic: ic, Scheduler: scheduler.New(ic, clock.Real{}, scheduler.Options{Networks: l.nets}),
		IPAM: network.NewIPAM(st, l.nets), Networks: l.nets, Logger: slog.New(slog.DiscardHandler),
		Hooks: reconciler.Hooks{Tick: func(time.Duration, int) { l.full.Add(1) }},
	}, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.rec.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

func (l *live) create(n int) []string {
	l.t.Helper()
	ids := createBuilds(l.t, l.st, l.nets[0].ID, "9000", l.n, n, time.Now())
	l.n += n
	l.rec.Kick()
	return ids
}

func (l *live) server(id string) *lifecycle.Server {
	l.t.Helper()
	s, err := l.st.GetServer(context.Background(), id)
	if err != nil {
		l.t.Fatal(err)
	}
	return s
}

// until polls cond every 20 ms for up to d.
func (l *live) until(what string, d time.Duration, cond func() bool) {
	l.t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			l.t.Fatalf("timed out after %s waiting for %s", d, what)
		}
	}
}

// A deploy request that Ironic takes 8 s to answer holds only its own
// server: the other build of the same tick is seen deployed and powered on
// (fast ticks, power-on, ACTIVE) while that request is still unanswered.
// With a tick barrier, nothing else is looked at until the slow call returns.
func TestSlowCallDelaysOnlyItsServer(t *testing.T) {
	l := newLive(t, 2, reconciler.Config{Interval: time.Second, FastInterval: 100 * time.Millisecond, Workers: 4})
	if err := l.sim.InjectFault(ironicsim.Fault{Method: "PUT", Path: "/v1/nodes/{node}/states/provision",
		Kind: ironicsim.FaultLatency, Latency: 8 * time.Second, Count: 1}); err != nil {
		t.Fatal(err)
	}
	ids := l.create(2)
	var fast, slow string
	l.until("one build ACTIVE", 20*time.Second, func() bool {
		for i, id := range ids {
			if l.server(id).Phase == lifecycle.PhaseActive {
				fast, slow = id, ids[1-i]
				return true
			}
		}
		return false
	})
	s := l.server(slow)
	n, ok := l.sim.Node(s.NodeID)
	if !ok {
		t.Fatalf("the slow build %s has no node (%s)", slow, s.Phase)
	}
	if n.ProvisionState != "available" {
		t.Fatalf("%s is ACTIVE only after the slow deploy request was answered (its node is %s): it waited for it", fast, n.ProvisionState)
	}
	l.until("the slow build ACTIVE too", 30*time.Second, func() bool { return l.server(slow).Phase == lifecycle.PhaseActive })
}

// A build woken by its create (as the API's kick does) goes all the way
// with no full tick after the first: its steps run as its work item, and
// once it waits on Ironic the loop's next fast tick comes at the fast
// interval, not at the poll interval planned before (an hour here).
func TestWakeNeedsNoTick(t *testing.T) {
	l := newLive(t, 1, reconciler.Config{Interval: time.Hour, FastInterval: 100 * time.Millisecond, Workers: 4})
	l.until("the first full tick", 10*time.Second, func() bool { return l.full.Load() == 1 })
	ids := createBuilds(t, l.st, l.nets[0].ID, "9000", 0, 1, time.Now())
	l.rec.Wake(ids...)
	l.until("the build ACTIVE", 20*time.Second, func() bool { return l.server(ids[0]).Phase == lifecycle.PhaseActive })
	if n := l.full.Load(); n != 1 {
		t.Fatalf("%d full ticks, want only the first", n)
	}
}

// One server whose node is notified without pause (a flapping BMC, a
// runaway script) costs one look per NotifyDebounce, not one per
// notification, and holds one worker at a time: twenty builds started
// meanwhile all reach ACTIVE at the usual pace. Without the debounce the
// noisy server's item runs back to back, thousands of looks a second.
func TestNoisyServerIsDebounced(t *testing.T) {
	l := newLive(t, 0, reconciler.Config{Interval: time.Second, FastInterval: 100 * time.Millisecond, Workers: 4})
	l.sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: "bm", Ports: 1, DeployTime: time.Hour})
	noisy := l.create(1)[0]
	l.until("the noisy build deploying", 20*time.Second, func() bool { return l.server(noisy).Phase == lifecycle.PhaseDeploying })
	node := l.server(noisy).NodeID
	l.sim.AddNodes(20, ironicsim.NodeSpec{ResourceClass: "bm", Ports: 1})

	ctx, stop := context.WithCancel(context.Background())
	noise := make(chan int)
	go func() {
		n := 0
		for ctx.Err() == nil {
			l.rec.Notified(node, nil, reconciler.ChangeState) // no payload: every one wakes
			n++
		}
		noise <- n
	}()
	l.sim.ResetCounts()
	start := time.Now()
	ids := l.create(20)
	l.until("the twenty builds ACTIVE", 30*time.Second, func() bool {
		for _, id := range ids {
			if l.server(id).Phase != lifecycle.PhaseActive {
				return false
			}
		}
		return true
	})
	took := time.Since(start)
	stop()
	sent := <-noise
	looks := l.sim.Counts()["GET /v1/nodes/{node}"]
	limit := int(took/reconciler.DefaultNotifyDebounce) + 20*4
	t.Logf("%d notifications of one node in %s: %d looks at single nodes (at most %d allowed); twenty builds ACTIVE meanwhile",
		sent, took.Round(time.Millisecond), looks, limit)
	if looks > limit {
		t.Fatalf("%d looks at single nodes in %s under %d notifications of one node, want at most %d (one per debounce)", looks, took, sent, limit)
	}
	if s := l.server(noisy); s.Phase != lifecycle.PhaseDeploying {
		t.Fatalf("the noisy build is %s, want still deploying", s.Phase)
	}
}
