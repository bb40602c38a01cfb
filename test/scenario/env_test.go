// Package scenario runs docs/DESIGN.md §3's scenario catalogue against the whole
// service (API, reconciler, store, Ironic adapter) over HTTP, with the Ironic
// simulator injecting the failures, and checks the invariants after each.
package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

const rc = "baremetal"

const foreignInstance = "f0f0f0f0-0000-4000-8000-000000000001"

type envOpts struct {
	nodes        int
	deployTime   time.Duration
	undeployTime time.Duration
	buildTimeout time.Duration
	maxAttempts  int
	maintGrace   time.Duration
	deployIface  string // "" = fake
	rescueIface  string // "" = no-rescue
	cidr         string
	callback     time.Duration
	ports        int // Ironic ports per node (0: 4)
	// configure, if set, changes the configuration before ingot starts.
	configure func(*config.Config)
}

type env struct {
	*apitest.Client
	t     *testing.T
	sim   *ironicsim.Sim
	gate  *gate
	ironS *httptest.Server
	app   *app.App
	api   *httptest.Server
	nodes []string
	// foreign is a node reserved by another tenant before ingot started.
	foreign string
	// orphans are nodes left active without an instance_uuid on purpose (the
	// operator took our instance_uuid away: I7 forbids undeploying them).
	orphans []string
	vols    []string // volumes created by the test
	netID   string
	imgID   string
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	if o.nodes == 0 {
		o.nodes = 3
	}
	if o.deployTime == 0 {
		o.deployTime = 300 * time.Millisecond
	}
	if o.undeployTime == 0 {
		o.undeployTime = 100 * time.Millisecond
	}
	if o.buildTimeout == 0 {
		o.buildTimeout = 30 * time.Second
	}
	if o.maxAttempts == 0 {
		o.maxAttempts = 3
	}
	if o.maintGrace == 0 {
		o.maintGrace = time.Second
	}
	if o.cidr == "" {
		o.cidr = "10.0.0.0/24"
	}
	if o.ports == 0 {
		o.ports = 4
	}
	sim := ironicsim.New(ironicsim.Options{DeployTime: o.deployTime, UndeployTime: o.undeployTime,
		CallbackTimeout: o.callback, VIFMode: ironicsim.VIFModeStore, Seed: 1,
		// As the real Ironic, keep the lock a moment after a deploy settles.
		LockLinger: 50 * time.Millisecond})
	nodes := sim.AddNodes(o.nodes, ironicsim.NodeSpec{ResourceClass: rc, Ports: o.ports, DeployInterface: o.deployIface, RescueInterface: o.rescueIface})
	gate := &gate{next: sim.Handler()}
	ironS := httptest.NewServer(gate)
	t.Cleanup(ironS.Close)
	// A node another tenant reserved: ingot must never touch it (I7).
	foreign := sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: rc, Ports: 4, NamePrefix: "foreign"})[0]
	patch := `[{"op":"add","path":"/instance_uuid","value":"` + foreignInstance + `"}]`
	req, _ := http.NewRequest("PATCH", ironS.URL+"/v1/nodes/"+foreign, strings.NewReader(patch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("reserve foreign node: %v %v", resp, err)
	}

	cfg := config.Default()
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	if os.Getenv("INGOT_TEST_STORE") == "postgres" {
		// The whole catalogue on the PostgreSQL store, one fresh database per scenario.
		cfg.Database = pgtest.DSN(t)
	}
	cfg.Ironic.URL = ironS.URL
	cfg.Ironic.Timeout = 2 * time.Second
	cfg.PollInterval = 100 * time.Millisecond
	cfg.DriftInterval = 200 * time.Millisecond
	cfg.BuildTimeout = o.buildTimeout
	cfg.DeleteTimeout = 20 * time.Second
	cfg.MaintenanceGrace = o.maintGrace
	cfg.MaxAttempts = o.maxAttempts
	cfg.Flavors = []config.Flavor{{Name: "bm.small", ResourceClass: rc, DiskGB: 10}, {Name: "bm.none", ResourceClass: "no-such-class"}}
	cfg.Images = []config.Image{{Name: "debian-12", URL: "http://images.example/debian-12.qcow2"},
		{Name: "ubuntu-24.04", URL: "http://images.example/ubuntu-24.04.qcow2"}}
	cfg.Networks = []config.Network{{Name: "provisioning", CIDR: o.cidr}}
	if o.configure != nil {
		o.configure(&cfg)
	}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(a.Handler)
	done := make(chan struct{})
	go func() { _ = a.Reconciler.Run(ctx); close(done) }()
	t.Cleanup(func() { api.Close(); cancel(); <-done; a.Close() })
	return &env{Client: apitest.New(t, api.URL), t: t, sim: sim, gate: gate, ironS: ironS, foreign: foreign, app: a, api: api, nodes: nodes, netID: cfg.Networks[0].ID, imgID: cfg.Images[0].ID}
}

func (e *env) create(name string) string {
	e.t.Helper()
	return e.createWith(name, "bm.small")
}

func (e *env) createWith(name, flavor string) string {
	e.t.Helper()
	return e.Create(map[string]any{"name": name, "flavorRef": flavor, "imageRef": e.imgID,
		"networks": []map[string]string{{"uuid": e.netID}}})
}

// record reads the stored record (for the node currently held).
func (e *env) record(id string) *lifecycle.Server {
	e.t.Helper()
	s, err := e.app.Store.GetServer(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// phase waits until the stored phase is p (to inject a fault at a given step).
func (e *env) phase(id string, p lifecycle.Phase, timeout time.Duration) *lifecycle.Server {
	e.t.Helper()
	var s *lifecycle.Server
	e.WaitFor(fmt.Sprintf("%s in phase %s", id, p), timeout, func() bool {
		s = e.record(id)
		return s.Phase == p
	})
	return s
}

// quiesce waits until no server needs work.
func (e *env) quiesce(timeout time.Duration) {
	e.t.Helper()
	e.WaitFor("quiescence", timeout, func() bool {
		ss, err := e.app.Store.ServersNeedingWork(context.Background())
		return err == nil && len(ss) == 0
	})
}

// checkInvariants checks I3 (no leaks), I4 and I7 once everything is stable.
func (e *env) checkInvariants(ids ...string) {
	e.t.Helper()
	e.quiesce(10 * time.Second)
	ctx := context.Background()
	live := map[string]*lifecycle.Server{}
	for _, id := range ids {
		s := e.record(id)
		if !s.Phase.Stable() {
			e.t.Errorf("I1: server %s still %s", id, s.Phase)
		}
		if s.Phase == lifecycle.PhaseError && (s.Fault == nil || s.Fault.Reason == "" || s.Fault.Message == "") {
			e.t.Errorf("I5: ERROR server %s without a fault", id)
		}
		ports, err := e.app.Store.Ports(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if s.Phase.Up() || s.HeldInError() {
			live[id] = s
			if len(ports) != len(s.Networks()) {
				e.t.Errorf("active server %s has %d ports, want %d", id, len(ports), len(s.Networks()))
			}
			continue
		}
		if len(ports) != 0 {
			e.t.Errorf("I3: %s server %s still has %d port(s)", s.Phase, id, len(ports))
		}
		if s.NodeID != "" {
			e.t.Errorf("I3: %s server %s still holds node %s", s.Phase, id, s.NodeID)
		}
	}
	if n, ok := e.sim.Node(e.foreign); !ok || n.InstanceUUID != foreignInstance || n.ProvisionState != "available" || len(n.VIFs) != 0 {
		e.t.Errorf("I7: the foreign node was touched: %+v", n)
	}
	holders := map[string]string{}
	for _, n := range e.sim.Nodes() {
		vifs := e.sim.VIFs(n.UUID)
		if n.InstanceUUID == "" {
			if len(vifs) != 0 {
				e.t.Errorf("I3: node %s (%s) has VIFs %v and no instance", n.UUID, n.ProvisionState, vifs)
			}
			if !n.Maintenance && n.ProvisionState != "available" && !slices.Contains(e.orphans, n.UUID) {
				e.t.Errorf("I3: released node %s is %s, not available", n.UUID, n.ProvisionState)
			}
			continue
		}
		s, ok := live[n.InstanceUUID]
		if !ok {
			if slices.Contains(ids, n.InstanceUUID) {
				e.t.Errorf("I3: node %s (%s) still carries instance_uuid of non-live server %s", n.UUID, n.ProvisionState, n.InstanceUUID)
			}
			continue
		}
		if prev, dup := holders[n.InstanceUUID]; dup {
			e.t.Errorf("I4: server %s on nodes %s and %s", n.InstanceUUID, prev, n.UUID)
		}
		holders[n.InstanceUUID] = n.UUID
		if want := map[lifecycle.Phase]string{lifecycle.PhaseRescued: "rescue"}[s.Phase]; s.NodeID != n.UUID ||
			(n.ProvisionState != "active" && n.ProvisionState != want) {
			e.t.Errorf("node %s (%s) carries %s but the server holds %q", n.UUID, n.ProvisionState, s.ID, s.NodeID)
		}
		ports, _ := e.app.Store.Ports(ctx, s.ID)
		for _, p := range ports {
			if !slices.Contains(vifs, p.ID) {
				e.t.Errorf("active server %s: port %s not attached to node %s (VIFs %v)", s.ID, p.ID, n.UUID, vifs)
			}
		}
	}
	for id := range live {
		if _, ok := holders[id]; !ok {
			e.t.Errorf("active server %s: no node carries its instance_uuid", id)
		}
	}
}

// gate makes the whole Ironic unreachable (connections dropped) while down,
// and can hold the next node PATCH until the test lets it through.
type gate struct {
	next    http.Handler
	down    atomic.Bool
	refused atomic.Int64 // calls dropped while down

	holdPatch atomic.Bool
	held      chan string   // the node of a held PATCH
	release   chan struct{} // lets a held PATCH through

	// hold, when set, holds the first request it matches (holdNext).
	mu sync.Mutex
	// calls logs every state change ingot asked of Ironic: "PUT <path>
	// <target>" for each PUT …/states/{power,provision} that got through.
	calls   []string
	hold    func(*http.Request) bool
	heldReq chan *http.Request
	letGo   chan struct{}
}

// holdNextPatch makes the next node PATCH wait; it returns the node it is
// for once it arrives, and a function that lets it through.
func (e *env) holdNextPatch(timeout time.Duration) (node string, release func()) {
	e.t.Helper()
	e.gate.held, e.gate.release = make(chan string, 1), make(chan struct{})
	e.gate.holdPatch.Store(true)
	select {
	case node = <-e.gate.held:
	case <-time.After(timeout):
		e.t.Fatalf("no node PATCH within %s", timeout)
	}
	return node, func() { close(e.gate.release) }
}

// heldCall is an Ironic request the gate holds (holdNext).
type heldCall struct {
	t     *testing.T
	got   chan *http.Request
	letGo chan struct{}
	once  sync.Once
}

// holdNext makes the next request that match accepts wait until released
// (at the latest when the test ends).
func (e *env) holdNext(match func(*http.Request) bool) *heldCall {
	h := &heldCall{t: e.t, got: make(chan *http.Request, 1), letGo: make(chan struct{})}
	g := e.gate
	g.mu.Lock()
	g.hold, g.heldReq, g.letGo = match, h.got, h.letGo
	g.mu.Unlock()
	e.t.Cleanup(h.release)
	return h
}

// wait returns once the held request has arrived.
func (h *heldCall) wait(what string, timeout time.Duration) {
	h.t.Helper()
	select {
	case <-h.got:
	case <-time.After(timeout):
		h.t.Fatalf("no %s within %s", what, timeout)
	}
}

func (h *heldCall) release() { h.once.Do(func() { close(h.letGo) }) }

// stateCalls are the state changes asked of node since call n (from
// stateCallCount): "power <target>" or "provision <target>".
func (e *env) stateCalls(node string, from int) []string {
	e.gate.mu.Lock()
	defer e.gate.mu.Unlock()
	var out []string
	for _, c := range e.gate.calls[min(from, len(e.gate.calls)):] {
		if rest, ok := strings.CutPrefix(c, "PUT /v1/nodes/"+node+"/states/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

func (e *env) stateCallCount() int {
	e.gate.mu.Lock()
	defer e.gate.mu.Unlock()
	return len(e.gate.calls)
}

// waitRefused waits until n more calls have been dropped: proof that ingot
// kept working (and kept failing) against the dead Ironic.
func (e *env) waitRefused(n int64) {
	e.t.Helper()
	target := e.gate.refused.Load() + n
	e.WaitFor(fmt.Sprintf("%d Ironic calls refused", n), 10*time.Second, func() bool { return e.gate.refused.Load() >= target })
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.down.Load() {
		g.refused.Add(1)
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/states/") && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var doc struct {
			Target string `json:"target"`
		}
		_ = json.Unmarshal(body, &doc)
		g.mu.Lock()
		g.calls = append(g.calls, "PUT "+r.URL.Path+" "+doc.Target)
		g.mu.Unlock()
	}
	g.mu.Lock()
	hold := g.hold
	if hold != nil && hold(r) {
		g.hold = nil
		got, letGo := g.heldReq, g.letGo
		g.mu.Unlock()
		got <- r
		<-letGo
	} else {
		g.mu.Unlock()
	}
	if r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/v1/nodes/") && g.holdPatch.CompareAndSwap(true, false) {
		g.held <- strings.TrimPrefix(r.URL.Path, "/v1/nodes/")
		<-g.release
	}
	g.next.ServeHTTP(w, r)
}
