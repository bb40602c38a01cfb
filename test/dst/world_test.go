package dst

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
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

// The world is small on purpose: a few nodes and servers exercise every
// path, and a small world is what lets CI run 10,000 seeds.
const (
	rc           = "baremetal"
	interval     = 10 * time.Second
	driftEvery   = 30 * time.Second
	deployTime   = 20 * time.Second
	undeployTime = 10 * time.Second
	maxServers   = 5
	volumes      = 3 // in the embedded registry; a third of the servers ask for one
)

var lcfg = lifecycle.Config{
	BuildTimeout:     5 * time.Minute,
	DeleteTimeout:    3 * time.Minute,
	MaintenanceGrace: time.Minute,
	MaxAttempts:      3,
	CapacityWait:     30 * time.Second,
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// params shape one seed's world.
type params struct {
	// replicas on the database (0 or 1: one, holding every shard; -1:
	// two or three, by seed).
	replicas int
	nodes    int
	steps    int
	decide   func(lifecycle.Input, lifecycle.Config) lifecycle.Action // nil: lifecycle.Decide
	// lagLeaseClock breaks the lease keeper on purpose (teeth): its clock
	// does not count the time a replica was paused, so it acts on after
	// its lease passed.
	lagLeaseClock bool
	// notify: Ironic's notifications reach the replicas, through a bus
	// that delivers, duplicates, reorders, delays and loses them
	// (notify_test.go); trustPayload breaks the work items on purpose
	// (teeth): they decide on the payload, not the node.
	notify, trustPayload bool
	// adopt: another service deploys idle nodes and `ingot adopt` runs
	// between ticks (adopt_test.go).
	adopt bool
}

// world is one seed's universe. Nothing in it is shared with another seed.
type world struct {
	seed int64
	p    params
	rng  *rand.Rand
	clk  *clock.Manual
	sim  *ironicsim.Sim
	tr   *transport
	db   string
	nets network.Networks
	// neutron, for one seed in three, holds the servers' ports (neutron_test.go).
	neutron *neutronSide

	// The database, and the ingot processes on it (replica_test.go).
	st        *sqlite.Store
	reps      []*replica
	cur       *replica // the one ticking
	nested    bool     // the others tick while cur is paused (replica_test.go)
	pauseAt   int      // pause cur at this step-boundary call (0: none planned)
	acted     map[int]actor
	pauses    int
	takeovers int
	nodeTaken int // saves refused with ErrNodeTaken
	fenced    int // saves refused with ErrFenced
	hooks     int // step-boundary calls since start
	ops       int // day-2 operations accepted
	// activeDetaches: volume detaches accepted from ACTIVE (a power cycle).
	activeDetaches int
	crashAt        int // crash at this step-boundary call (0: none planned)
	// A user's delete that arrives in the middle of a tick, at this
	// step-boundary call, for midDel (the API writes while a step is in flight).
	midAt    int
	midDel   string
	midAccep []string // accepted during the current tick

	nodes   []string
	vols    []string        // volume ids
	servers []string        // every server created, in order
	ours    map[string]int  // server id -> index in servers
	deleted map[string]bool // delete accepted
	lastPh  map[string]lifecycle.Phase
	gone    map[string]*lifecycle.Server // deleted and settled: never read again
	foreign map[string]string            // node -> foreign instance_uuid (another tenant)
	// detached are the volumes a user detached (a made one then stays,
	// whatever its delete_on_termination, as with Nova).
	detached map[string]bool
	orphans  map[string]bool // nodes whose instance_uuid we removed while deployed
	restarts int

	trace *tracer
	bus   *bus // Ironic's notifications (notify_test.go), when params.notify
	woken int  // work items the notifications made run
	// midItems: work items run between a tick's bulk list and its steps
	// (transport_test.go), as Run's items run beside its ticks.
	midItems int
	errs     []string
}

// newWorld builds seed's world; template is a migrated, empty database
// copied for the seed (opening it then skips the schema work).
func newWorld(seed int64, p params, dir string, template []byte) (*world, error) {
	w := &world{
		seed: seed, p: p,
		rng:  rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x5eed)),
		clk:  clock.NewManual(t0),
		db:   filepath.Join(dir, fmt.Sprintf("dst-%d.db", seed)),
		ours: map[string]int{}, deleted: map[string]bool{}, lastPh: map[string]lifecycle.Phase{}, gone: map[string]*lifecycle.Server{},
		foreign: map[string]string{}, detached: map[string]bool{}, orphans: map[string]bool{}, acted: map[int]actor{},
		trace: newTracer(), bus: newBus(),
	}
	n := p.replicas
	if n < 0 {
		n = 2 + int(seed%2) // two or three, by seed
	}
	w.reps = w.newReplicas(max(1, n))
	w.sim = ironicsim.New(ironicsim.Options{Clock: w.clk, DeployTime: deployTime, UndeployTime: undeployTime,
		CallbackTimeout: 2 * time.Minute, VIFMode: ironicsim.VIFModeStore, Seed: seed + 1})
	w.nodes = w.sim.AddNodes((p.nodes+1)/2, ironicsim.NodeSpec{ResourceClass: rc, Ports: 2, RescueInterface: "fake"})
	w.nodes = append(w.nodes, w.sim.AddNodes(p.nodes/2, ironicsim.NodeSpec{ResourceClass: rc, Ports: 2, NamePrefix: "norescue"})...)
	w.tr = &transport{w: w, h: w.sim.Handler()}
	if err := os.WriteFile(w.db, template, 0o600); err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	w.nets = network.Networks{{ID: "3c1f0d6e-8a52-4c47-9d1e-7f1b2a9c0d11", Name: "prov",
		CIDR: netip.MustParsePrefix("10.0.0.0/28")}}
	if usesNeutron(seed) {
		ns, err := newNeutronSide(w)
		if err != nil {
			return nil, err
		}
		w.neutron = ns
	}
	if err := w.start(); err != nil {
		return nil, err
	}
	for i := range volumes {
		v := store.NewVolume(w.uuid(), fmt.Sprintf("v%d", i), 10, "", t0)
		if err := w.st.CreateVolume(context.Background(), v); err != nil {
			w.close()
			return nil, fmt.Errorf("volume: %w", err)
		}
		w.vols = append(w.vols, v.ID)
	}
	return w, nil
}

// start opens the database and starts every replica on it.
func (w *world) start() error {
	st, err := sqlite.Open(context.Background(), w.db, sqlite.WithClock(w.clk))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	w.st = st
	for _, r := range w.reps {
		if err := w.startReplica(r); err != nil {
			return err
		}
	}
	return nil
}

// startReplica builds one ingot process on the database: its own store
// handle, Ironic client, scheduler, IPAM, lease keeper and reconciler, all
// fresh. The replica's clock is the world's with its skew.
func (w *world) startReplica(r *replica) error {
	r.cst = &crashStore{Store: w.st, leases: w.st, w: w}
	ic, err := ironic.New(ironic.Config{URL: "http://ironic.dst", HTTPClient: &http.Client{Transport: replicaTransport{t: w.tr, r: r}},
		Timeout: time.Minute})
	if err != nil {
		return fmt.Errorf("ironic client: %w", err)
	}
	sched := scheduler.New(ic, r.clk, scheduler.Options{})
	var kclk clock.Clock = r.clk
	if w.p.lagLeaseClock {
		kclk = r.lag
	}
	r.keeper = reconciler.NewKeeper(r.cst, kclk, nil, reconciler.LeaseConfig{Host: r.name, Shards: shards, TTL: leaseTTL},
		reconciler.LeaseHooks{Takeover: func(n int) { w.takeovers += n }})
	r.rec = reconciler.New(reconciler.Deps{
		Store: r.cst, Ironic: ic, Scheduler: sched, IPAM: network.NewIPAM(r.cst, w.nets), Networks: w.nets, Ports: w.ports(r), Clock: r.clk,
		Logger: slog.New(slog.DiscardHandler), Hooks: reconciler.Hooks{Step: func(p string) { w.step(r, p) },
			Transition: func(before, next *lifecycle.Server) { w.transitioned(before, next) }}, Leases: r.keeper,
	}, reconciler.Config{Lifecycle: lcfg, Interval: interval, DriftInterval: driftEvery, Workers: 1, Decide: w.p.decide,
		TrustPayload: w.p.trustPayload})
	r.dead = false
	return nil
}

// step is a replica's step-boundary hook: a planned crash, an in-flight
// delete or a pause fires here (not in the ticks a pause lets the others
// run meanwhile).
func (w *world) step(r *replica, point string) {
	w.hooks++
	if w.nested {
		return
	}
	if w.midAt > 0 && w.hooks >= w.midAt && !r.cst.dead {
		w.midAt = 0
		err := w.st.RequestDelete(context.Background(), w.midDel, "req-del-"+w.midDel, w.clk.Now().UTC())
		switch {
		case err == nil:
			w.trace.add("delete " + w.sname(w.midDel) + " accepted at " + point)
			w.midAccep = append(w.midAccep, w.midDel)
			// The phase the delete found is the one no build step may
			// move beyond (I2).
			if s, err := w.st.GetServer(context.Background(), w.midDel); err == nil {
				w.lastPh[w.midDel] = s.Phase
			}
		case !errors.Is(err, store.ErrNotFound):
			w.violate("delete %s in flight: %v", w.sname(w.midDel), err)
		}
	}
	if w.pauseAt > 0 && w.hooks >= w.pauseAt && !r.cst.dead {
		w.pauseAt = 0
		w.pause(r, point)
	}
	if w.crashAt > 0 && w.hooks >= w.crashAt {
		w.crashAt = 0
		w.trace.add(r.name + " crash at " + point)
		w.kill(r)
	}
}

// restart drops every in-memory state of replica r and starts it again. A
// lone replica also reopens the database, as a restarted process does.
func (w *world) restart(r *replica) error {
	w.restarts++
	if len(w.reps) == 1 {
		if err := w.st.Close(); err != nil {
			return fmt.Errorf("close store: %w", err)
		}
		st, err := sqlite.Open(context.Background(), w.db, sqlite.WithClock(w.clk))
		if err != nil {
			return fmt.Errorf("open store: %w", err)
		}
		w.st = st
	}
	return w.startReplica(r)
}

// tick runs one reconciler pass of every running replica, one after the
// other (in a seed-chosen rotation when there are several).
func (w *world) tick() error {
	order := w.reps
	if len(w.reps) > 1 {
		k := w.rng.IntN(len(w.reps))
		order = append(append([]*replica(nil), w.reps[k:]...), w.reps[:k]...)
	}
	for _, r := range order {
		if r.stall > 0 {
			r.stall--
			if r.stall == 0 && r.down {
				r.down = false
				w.trace.add(r.name + " back up")
				if err := w.restart(r); err != nil {
					return err
				}
			}
			continue
		}
		if err := w.tickReplica(r); err != nil {
			return err
		}
	}
	return nil
}

// tickReplica runs one pass of r. A crash during it restarts r, which
// ticks at once on start (as Reconciler.Run does), at the same instant.
func (w *world) tickReplica(r *replica) error {
	return w.passReplica(r, func(ctx context.Context) error {
		_, err := r.rec.Tick(ctx)
		return err
	})
}

// passReplica runs pass as replica r (a tick, or its due work items); a
// crash during it restarts r, which then ticks.
func (w *world) passReplica(r *replica, pass func(context.Context) error) error {
	for {
		ctx, cancel := context.WithCancel(context.Background())
		r.cancel = cancel
		prev := w.cur
		w.cur = r
		err := pass(ctx)
		w.cur = prev
		cancel()
		r.cancel = nil
		if !w.nested {
			// A delete accepted during the tick counts from its end: the
			// step that was in flight when it arrived may still go out (I2
			// allows it), the ones after may not.
			for _, id := range w.midAccep {
				w.deleted[id] = true
			}
			w.midAccep = w.midAccep[:0]
		}
		if !r.dead {
			return w.tickErr(err)
		}
		if err := w.restart(r); err != nil {
			return err
		}
		pass = func(ctx context.Context) error {
			_, err := r.rec.Tick(ctx)
			return err
		}
	}
}

func (w *world) tickErr(err error) error {
	if err != nil && !errors.Is(err, context.Canceled) {
		// A failing tick is no violation by itself: the checks judge what
		// it left behind. Keep it in the trace.
		w.trace.add("tick error: " + err.Error())
	}
	return nil
}

// emptyDatabase returns the bytes of a freshly migrated database.
func emptyDatabase(dir string) ([]byte, error) {
	path := filepath.Join(dir, "template.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if err := st.Close(); err != nil { // checkpoints the WAL into the file
		return nil, fmt.Errorf("template: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, fmt.Errorf("template: WAL left after close")
	}
	return b, nil
}

func (w *world) close() {
	if w.st != nil {
		_ = w.st.Close()
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(w.db + suffix)
	}
}

func (w *world) violate(format string, args ...any) {
	w.errs = append(w.errs, fmt.Sprintf("[t=%s] ", w.clk.Now().Sub(t0))+fmt.Sprintf(format, args...))
}

// uuidFrom draws a UUID from the seed's generator.
func (w *world) uuid() string {
	a, b := w.rng.Uint64(), w.rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", a>>32, (a>>16)&0xffff, a&0xfff, b>>52&0xfff, b&0xffffffffffff)
}

// createServer records a server as the API does (the request is answered
// once the record is committed).
func (w *world) createServer(ctx context.Context) (string, error) {
	now := w.clk.Now().UTC()
	id := w.uuid()
	s := &lifecycle.Server{
		ID: id, Name: fmt.Sprintf("s%d", len(w.servers)), ProjectID: "p", UserID: "u",
		Spec: lifecycle.Spec{FlavorID: "f", ImageID: "i", ResourceClass: rc, ImageSource: "http://images/debian.qcow2",
			RootGB: 10, Networks: []string{w.networkID()}},
		Desired: lifecycle.DesiredActive, Phase: lifecycle.PhasePending,
		CreatedAt: now, UpdatedAt: now, PhaseSince: now, Deadline: now.Add(lcfg.BuildTimeout),
		CreateRequestID: "req-" + id,
	}
	if w.rng.IntN(3) == 0 {
		boot := -1
		if w.rng.IntN(2) == 0 {
			boot = 0
		}
		s.Spec.Volumes = []lifecycle.VolumeRef{{ID: w.vols[w.rng.IntN(len(w.vols))], BootIndex: boot,
			DeleteOnTermination: w.rng.IntN(4) == 0}}
	}
	if w.rng.IntN(4) == 0 {
		// A volume the build makes (blank→volume, or image→volume at
		// boot_index 0 when no existing volume boots).
		made := lifecycle.VolumeRef{Source: lifecycle.SourceBlank, SizeGB: 1, BootIndex: -1, DeleteOnTermination: w.rng.IntN(2) == 0}
		if !slices.ContainsFunc(s.Spec.Volumes, func(r lifecycle.VolumeRef) bool { return r.BootIndex == 0 }) && w.rng.IntN(2) == 0 {
			made.Source, made.ImageID, made.SizeGB, made.BootIndex = lifecycle.SourceImage, "i", 10, 0
		}
		s.Spec.Volumes = append(s.Spec.Volumes, made)
	}
	err := w.st.CreateServer(ctx, s)
	if errors.Is(err, store.ErrVolumeInUse) || errors.Is(err, store.ErrNotFound) {
		return "", nil // the API answers 409/400: nothing accepted
	}
	if err != nil {
		return "", fmt.Errorf("create: %w", err)
	}
	w.ours[id] = len(w.servers)
	w.servers = append(w.servers, id)
	return id, nil
}

func (w *world) deleteServer(ctx context.Context, id string) error {
	err := w.st.RequestDelete(ctx, id, "req-del-"+id, w.clk.Now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return nil // already deleted: the API answers 404 and accepts nothing
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	w.deleted[id] = true
	return nil
}
