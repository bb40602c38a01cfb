package reconciler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/scheduler"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// rig is a reconciler on a real SQLite store and the Ironic simulator, on
// one manual clock. Every Ironic call moves the clock by cost (Ironic's
// latency, deterministically), so a tick's length on that clock is exact.
type rig struct {
	t    *testing.T
	clk  *clock.Manual
	sim  *ironicsim.Sim
	st   *sqlite.Store
	rec  *reconciler.Reconciler
	nets network.Networks
	cost time.Duration

	// onList, when set, runs after the simulator answered a bulk list
	// (the answer is made: what happens now is not in it).
	onList func()

	mu       sync.Mutex
	calls    []string // "METHOD path?query" of every Ironic call
	reserves []string // instance of every reservation attempted
	n        int
}

// transport serves the simulator in the calling goroutine, charging cost.
type transport struct{ r *rig }

func (tr transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := tr.r
	r.mu.Lock()
	r.calls = append(r.calls, req.Method+" "+req.URL.Path+"?"+req.URL.RawQuery)
	if req.Method == http.MethodPatch && req.Body != nil {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var ops []struct {
			Op, Path string
			Value    any
		}
		if json.Unmarshal(body, &ops) == nil {
			for _, o := range ops {
				if o.Op == "add" && o.Path == "/instance_uuid" {
					r.reserves = append(r.reserves, fmt.Sprint(o.Value))
				}
			}
		}
	}
	r.mu.Unlock()
	r.clk.Advance(r.cost)
	rec := httptest.NewRecorder()
	r.sim.Handler().ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	if r.onList != nil && req.Method == http.MethodGet && req.URL.Path == "/v1/nodes" && req.URL.Query().Has("associated") {
		r.onList()
	}
	return resp, nil
}

func newRig(t *testing.T, nodes int, cost time.Duration, cfg reconciler.Config) *rig {
	t.Helper()
	return newRigOver(t, nodes, cost, cfg, nil)
}

// newRigOver is newRig with the reconciler's store wrapped by wrap (when
// not nil); the rig's own reads go to the store itself.
func newRigOver(t *testing.T, nodes int, cost time.Duration, cfg reconciler.Config, wrap func(store.Store) store.Store) *rig {
	t.Helper()
	r := &rig{t: t, clk: clock.NewManual(t0), cost: cost}
	r.sim = ironicsim.New(ironicsim.Options{Clock: r.clk, DeployTime: 10 * time.Second, UndeployTime: 5 * time.Second, Seed: 1})
	r.sim.AddNodes(nodes, ironicsim.NodeSpec{ResourceClass: "bm", Ports: 1})
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r.st = st
	ic, err := ironic.New(ironic.Config{URL: "http://ironic.test", HTTPClient: &http.Client{Transport: transport{r}}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r.nets = network.Networks{{ID: "3c1f0d6e-8a52-4c47-9d1e-7f1b2a9c0d11", Name: "prov", CIDR: netip.MustParsePrefix("10.0.0.0/16")}}
	if cfg.Workers == 0 {
		cfg.Workers = 1 // one at a time: the order, and so the test, is deterministic
	}
	if cfg.Interval == 0 {
		cfg.Interval = 2 * time.Second
	}
	var used store.Store = st
	if wrap != nil {
		used = wrap(st)
	}
	r.rec = reconciler.New(reconciler.Deps{
		Store: used, Ironic: ic, Scheduler: scheduler.New(ic, r.clk, scheduler.Options{Networks: r.nets}),
		IPAM: network.NewIPAM(used, r.nets), Networks: r.nets, Clock: r.clk, Logger: slog.New(slog.DiscardHandler),
	}, cfg)
	return r
}

// create accepts n builds, ids in creation order (sortable: s000, s001 …).
func (r *rig) create(n int) []string {
	r.t.Helper()
	ids := createBuilds(r.t, r.st, r.nets[0].ID, "8000", r.n, n, r.clk.Now())
	r.n += n
	return ids
}

// createBuilds records n builds on network netID, their ids numbered from
// first under the id group group (one per harness, so they never meet).
func createBuilds(t *testing.T, st store.Store, netID, group string, first, n int, now time.Time) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("00000000-0000-4000-%s-%012d", group, first+i)
		s := &lifecycle.Server{
			ID: id, Name: id[len(id)-4:], ProjectID: "p", UserID: "u",
			Spec: lifecycle.Spec{FlavorID: "f", ImageID: "i", ResourceClass: "bm", ImageSource: "http://images/debian.qcow2",
				RootGB: 10, Networks: []string{netID}},
			Desired: lifecycle.DesiredActive, Phase: lifecycle.PhasePending,
			CreatedAt: now, UpdatedAt: now, PhaseSince: now, Deadline: now.Add(time.Hour), CreateRequestID: "req-" + id,
		}
		if err := st.CreateServer(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// tick runs one full tick and returns its stats and its length on the clock.
func (r *rig) tick() (reconciler.TickStats, time.Duration) {
	r.t.Helper()
	start := r.clk.Now()
	st, err := r.rec.Tick(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return st, r.clk.Now().Sub(start)
}

func (r *rig) server(id string) *lifecycle.Server {
	r.t.Helper()
	s, err := r.st.GetServer(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// settle ticks, a second apart, until id needs no more work.
func (r *rig) settle(id string) *lifecycle.Server {
	r.t.Helper()
	for range 400 {
		r.tick()
		r.clk.Advance(time.Second)
		if s := r.server(id); !s.NeedsWork() {
			return s
		}
	}
	r.t.Fatalf("never settled: %s", r.server(id).Phase)
	return nil
}

// phases counts servers by phase.
func (r *rig) phases(ids []string) map[lifecycle.Phase]int {
	m := map[lifecycle.Phase]int{}
	for _, id := range ids {
		m[r.server(id).Phase]++
	}
	return m
}

// takeCalls returns the Ironic calls since the last take, sorted.
func (r *rig) takeCalls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	sort.Strings(c)
	return c
}
