package neutronports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/neutronports"
	"github.com/ingot-dev/ingot/internal/neutronsim"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/scheduler"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// project owns the builds; the service token is ingot's (admin).
const project = "project-a"

// rig is the reconciler with the Neutron backend on a real SQLite store,
// the Ironic simulator (VIFs stored as on the flat interface) and the
// Neutron simulator, on one manual clock. Both services are served in the
// calling goroutine, and every call is counted.
type rig struct {
	t       *testing.T
	clk     *clock.Manual
	ironic  *ironicsim.Sim
	neutron *neutronsim.Sim
	nc      *neutron.Client
	st      store.Store
	rec     *reconciler.Reconciler
	netID   string

	mu    sync.Mutex
	calls map[string][]string // service -> "METHOD /path" of every call
	// drives are the config drives of the deploys, by node.
	drives map[string]map[string]any
	n      int
}

type serve struct {
	r       *rig
	service string
	h       http.Handler
}

func (s serve) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	s.r.record(s.service, req, body)
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

func (r *rig) record(service string, req *http.Request, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[service] = append(r.calls[service], req.Method+" "+req.URL.Path)
	if service == "ironic" && strings.HasSuffix(req.URL.Path, "/states/provision") {
		var b struct {
			Target      string         `json:"target"`
			ConfigDrive map[string]any `json:"configdrive"`
		}
		if json.Unmarshal(body, &b) == nil && b.Target == "active" {
			node := strings.Split(req.URL.Path, "/")[3]
			r.drives[node] = b.ConfigDrive
		}
	}
}

type rigOptions struct {
	nodes int
	// wrap, when set, stands between the backend and the store.
	wrap func(store.Store) store.Store
	// steps bounds the steps of a server per tick (default the loop's).
	steps int
	// step hears every step point of the loop.
	step func(point string)
	// neutron, when set, stands between ingot and the Neutron simulator.
	neutron func(http.Handler) http.Handler
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	r := &rig{t: t, clk: clock.NewManual(t0), calls: map[string][]string{}, drives: map[string]map[string]any{}}
	r.ironic = ironicsim.New(ironicsim.Options{Clock: r.clk, DeployTime: 10 * time.Second, UndeployTime: 5 * time.Second,
		Seed: 1, VIFMode: ironicsim.VIFModeStore})
	r.ironic.AddNodes(o.nodes, ironicsim.NodeSpec{ResourceClass: "bm", Ports: 1, PhysicalNetwork: "physnet1"})
	r.neutron = neutronsim.New(neutronsim.Options{Now: r.clk.Now, Identify: func(tok string) (neutronsim.Identity, bool) {
		return neutronsim.Identity{ProjectID: "project-service", Admin: true}, tok == "tok-ingot"
	}})
	r.netID = r.neutron.AddNetwork(neutronsim.NetworkSpec{Name: "tenant", Shared: true, Physnet: "physnet1", MTU: 9000})
	if _, err := r.neutron.AddSubnet(neutronsim.SubnetSpec{NetworkID: r.netID, CIDR: "192.0.2.0/24", Gateway: "192.0.2.1",
		DNS: []string{"192.0.2.53"}, Routes: []neutronsim.Route{{Destination: "198.51.100.0/24", NextHop: "192.0.2.254"}}}); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r.st = st
	var nh http.Handler = r.neutron
	if o.neutron != nil {
		nh = o.neutron(nh)
	}
	pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Transport: serve{r, "neutron", nh}}}
	pc.SetToken("tok-ingot")
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: "http://neutron.test/", ResourceBase: "http://neutron.test/v2.0/", Type: "network"}
	r.nc = neutron.New(sc, time.Minute)
	ic, err := ironic.New(ironic.Config{URL: "http://ironic.test", HTTPClient: &http.Client{Transport: serve{r, "ironic", r.ironic.Handler()}}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	backendStore := store.Store(st)
	if o.wrap != nil {
		backendStore = o.wrap(st)
	}
	r.rec = reconciler.New(reconciler.Deps{
		Store: st, Ironic: ic, Scheduler: scheduler.New(ic, r.clk, scheduler.Options{}),
		Ports: neutronports.New(backendStore, r.nc, neutronports.Options{Step: o.step, Now: r.clk.Now}), Clock: r.clk, Logger: slog.New(slog.DiscardHandler),
		Hooks: reconciler.Hooks{Step: o.step},
	}, reconciler.Config{Workers: 1, Interval: 2 * time.Second, StepsPerTick: o.steps})
	return r
}

// create records a build on the rig's network with the spec's extras.
func (r *rig) create(edit func(*lifecycle.Spec)) string {
	r.t.Helper()
	now := r.clk.Now()
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", r.n)
	r.n++
	s := &lifecycle.Server{
		ID: id, Name: "n" + id[len(id)-3:], ProjectID: project, UserID: "u",
		Spec: lifecycle.Spec{FlavorID: "f", ImageID: "i", ResourceClass: "bm", ImageSource: "http://images/debian.qcow2",
			RootGB: 10, Networks: []string{r.netID}},
		Desired: lifecycle.DesiredActive, Phase: lifecycle.PhasePending,
		CreatedAt: now, UpdatedAt: now, PhaseSince: now, Deadline: now.Add(time.Hour), CreateRequestID: "req-" + id,
	}
	if edit != nil {
		edit(&s.Spec)
	}
	if err := r.st.CreateServer(context.Background(), s); err != nil {
		r.t.Fatal(err)
	}
	return id
}

func (r *rig) server(id string) *lifecycle.Server {
	r.t.Helper()
	s, err := r.st.GetServer(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// tick runs one full tick, then lets a second pass.
func (r *rig) tick() {
	r.t.Helper()
	if _, err := r.rec.Tick(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.clk.Advance(time.Second)
}

// until ticks until cond holds (at most 200 ticks of simulated time).
func (r *rig) until(what string, cond func() bool) {
	r.t.Helper()
	for range 200 {
		if cond() {
			return
		}
		r.tick()
	}
	r.t.Fatalf("%s: not reached after 200 ticks", what)
}

// settled: the server needs no more work (ACTIVE, ERROR with nothing held,
// or deleted and cleaned up).
func (r *rig) settled(id string) func() bool {
	return func() bool { return !r.server(id).NeedsWork() }
}

func (r *rig) phase(id string) lifecycle.Phase { return r.server(id).Phase }

func (r *rig) requestDelete(id string) {
	r.t.Helper()
	if err := r.st.RequestDelete(context.Background(), id, "req-del-"+id, r.clk.Now()); err != nil {
		r.t.Fatal(err)
	}
}

// ports counts Neutron's ports (all of them).
func (r *rig) ports() int { return r.neutron.PortCount("") }

// take returns and clears the calls made to a service.
func (r *rig) take(service string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls[service]
	delete(r.calls, service)
	return c
}
