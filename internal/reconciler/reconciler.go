// Package reconciler runs ingot's level-triggered loop: each tick it loads
// every server that needs work, takes one bulk view of Ironic, asks
// lifecycle.Decide for each server's next action, carries the actions out
// with bounded concurrency (one at a time per server) and records each
// outcome before the next step. Between ticks, per-server work items
// (queue.go) take a server on at once when a notification or its own
// progress says it has something to do.
package reconciler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/portbind"
	"github.com/ingot-dev/ingot/internal/store"
)

// Ironic is what the reconciler asks of Ironic (implemented by *ironic.Client).
type Ironic interface {
	ListAssociated(ctx context.Context) ([]ironic.Node, error)
	ListInState(ctx context.Context, provisionState string) ([]ironic.Node, error)
	GetNode(ctx context.Context, id string) (ironic.Node, error)
	Reserve(ctx context.Context, nodeID, instanceUUID string, info map[string]any) (ironic.Node, error)
	Unreserve(ctx context.Context, nodeID string) error
	NodePorts(ctx context.Context, nodeID string) (portbind.Inventory, error)
	AttachVIFTo(ctx context.Context, nodeID, vifID string, to portbind.Target) error
	DetachVIF(ctx context.Context, nodeID, vifID string) error
	Deploy(ctx context.Context, nodeID string, req ironic.DeployRequest) error
	Undeploy(ctx context.Context, nodeID string) error
	SetPowerOff(ctx context.Context, nodeID string) error
	SetPowerOn(ctx context.Context, nodeID string) error
	Reboot(ctx context.Context, nodeID string, hard bool) error
	Rebuild(ctx context.Context, nodeID string, req ironic.DeployRequest) error
	Rescue(ctx context.Context, nodeID, password string) error
	Unrescue(ctx context.Context, nodeID string) error
	SetStorageInterface(ctx context.Context, nodeID, iface string) error
	CreateVolumeConnector(ctx context.Context, nodeID, connType, connectorID string) (string, error)
	ListVolumeConnectors(ctx context.Context, nodeID string) ([]ironic.VolumeConnector, error)
	DeleteVolumeConnector(ctx context.Context, uuid string) error
	CreateVolumeTarget(ctx context.Context, t ironic.VolumeTarget) (string, error)
	ListVolumeTargets(ctx context.Context, nodeID string) ([]ironic.VolumeTarget, error)
	DeleteVolumeTarget(ctx context.Context, uuid string) error
}

// Scheduler chooses nodes (implemented by *scheduler.Scheduler).
type Scheduler interface {
	Pick(ctx context.Context, s *lifecycle.Server) (string, error)
	Taken(node string)
	Release(node, server string)
}

// warmer is a Scheduler that lists its inventory ahead of the first pick
// (*scheduler.Scheduler: in the background).
type warmer interface {
	Warm(ctx context.Context)
}

// IPAM allocates ports (implemented by *network.IPAM).
type IPAM interface {
	AllocateSlot(ctx context.Context, serverID, networkID, slot string) (store.Port, error)
	AllocateAs(ctx context.Context, want store.Port) (store.Port, error)
	Free(ctx context.Context, portID string) error
}

// Hooks observe the loop (metrics). Every field is optional.
type Hooks struct {
	Tick       func(d time.Duration, servers int)
	FastTick   func(d time.Duration, servers int) // a fast tick (cadence.go)
	Transition func(before, after *lifecycle.Server)
	PastDue    func(n int)
	// Step is called at every step boundary of a server, with a stable name:
	// "before:<action>" and "after:<action>" around each effect, and
	// "saved:<phase>" after each recorded transition. Crash tests kill the
	// process there (see cmd/ingot's crashpoints build tag).
	Step func(point string)
}

// Config tunes the loop.
type Config struct {
	Lifecycle     lifecycle.Config
	Interval      time.Duration // tick period (default 2s)
	DriftInterval time.Duration // how often ACTIVE servers are checked for drift (default 30s)
	Workers       int           // concurrent servers per tick (default 32)
	StepsPerTick  int           // most steps one server takes in a tick (default 12)
	// TickBudget bounds the expensive part of a tick (default 80% of the
	// interval); see budget.go.
	TickBudget time.Duration
	// FastInterval is the tick period while some server waits on Ironic
	// (default 0.5s; see cadence.go). Never longer than Interval.
	FastInterval time.Duration
	// NotifyDebounce is the least time between two wakes of one server by
	// notifications: the first runs at once, the others within it share one
	// step at its end (default 20ms; wakeSlot in notified.go).
	NotifyDebounce time.Duration
	// Decide replaces lifecycle.Decide; only tests that prove the invariant
	// checks have teeth set it (to deliberately broken logic).
	Decide func(lifecycle.Input, lifecycle.Config) lifecycle.Action
	// TrustPayload is deliberately broken logic too (teeth only): a work
	// item woken by a notification decides on its payload instead of the
	// node as Ironic shows it.
	TrustPayload bool
}

// Reconciler is the loop. Create with New, run with Run, or drive tick by
// tick with Tick (tests and the deterministic simulation).
type Reconciler struct {
	store store.Store
	// saves is the store's SaveServer, through a group commit when the
	// store can batch: concurrent workers' saves share a transaction.
	saves interface {
		SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error
	}
	ironic Ironic
	sched  Scheduler
	ports  Ports
	cinder Cinder // nil: the embedded registry
	clock  clock.Clock
	log    *slog.Logger
	cfg    Config
	hooks  Hooks

	kick chan struct{}
	// waits: a step outside a tick left a server newly waiting on Ironic,
	// so Run's next fast tick may be due sooner than it planned.
	waits chan struct{}
	q     *queue // the work items (queue.go)
	// async: under Run a tick leaves a step still in flight at its budget's
	// end to finish on its own (queue.go); Tick alone waits for every one.
	async    atomic.Bool
	inflight sync.WaitGroup // steps a tick left running; Run waits for them
	notified atomic.Bool    // Ironic's notifications are being received (SetNotified)
	// leases, when set, divides the servers among replicas (lease.go):
	// only the servers of held shards are looked at, every write carries
	// the lease's fence, and every Ironic change is checked against it.
	leases   *Keeper
	driftNow atomic.Bool // shards were gained: check their resting servers at once

	mu         sync.Mutex
	ironicDown map[string]bool // server -> last Ironic call failed as unreachable
	slowStep   atomic.Int64    // longest step lately, in ns (budget.go)
	releasing  map[string]int  // resource class -> nodes our servers are letting go of (this tick)
	lastDrift  time.Time
	cursor     string                       // id where the next tick's expensive steps start (budget.go)
	carried    int                          // servers the last full tick carried (budget.go)
	lastBulk   int                          // nodes in the last bulk view (cadence.go)
	watch      watchSet                     // servers waiting on Ironic -> last view (cadence.go)
	touched    map[string]bool              // servers process saw during the current full tick
	loaded     map[string]*lifecycle.Server // records as last read, by id (load.go; Tick's goroutine only)
	cinderHost string                       // the connectors' host (cindervolumes.go)
	// volPortal and volIQNPrefix: the embedded registry's target description (madevolumes.go).
	volPortal, volIQNPrefix string
}

// Deps are the reconciler's collaborators.
type Deps struct {
	Store     store.Store
	Ironic    Ironic
	Scheduler Scheduler
	IPAM      IPAM
	Networks  network.Networks // for network_data.json and physical networks
	// Ports, when set, is the network backend in place of IPAM and
	// Networks (Neutron: internal/neutronports).
	Ports  Ports
	Clock  clock.Clock
	Logger *slog.Logger
	Hooks  Hooks
	// Leases shares the servers with other replicas (nil: this one acts on
	// every server, unfenced).
	Leases *Keeper
	// Cinder, when set, is where the volumes live (cindervolumes.go), and
	// CinderHost the host its attachments' connectors name.
	Cinder     Cinder
	CinderHost string
	// VolumePortal and VolumeIQNPrefix describe the targets of the
	// embedded registry's volumes that builds make (volume.embedded; ""
	// the defaults), as the API describes those it makes.
	VolumePortal, VolumeIQNPrefix string
}

// New builds a reconciler.
func New(d Deps, cfg Config) *Reconciler {
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.DriftInterval <= 0 {
		cfg.DriftInterval = 30 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 32
	}
	if cfg.StepsPerTick <= 0 {
		cfg.StepsPerTick = 12
	}
	if cfg.FastInterval <= 0 {
		cfg.FastInterval = DefaultFastInterval
	}
	cfg.FastInterval = min(cfg.FastInterval, cfg.Interval)
	if cfg.NotifyDebounce <= 0 {
		cfg.NotifyDebounce = DefaultNotifyDebounce
	}
	if cfg.Decide == nil {
		cfg.Decide = lifecycle.Decide
	}
	if cfg.Lifecycle.MaxAttempts <= 0 {
		cfg.Lifecycle = lifecycle.DefaultConfig()
	}
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Reconciler{
		store: d.Store, ironic: d.Ironic, sched: d.Scheduler, ports: d.Ports, clock: d.Clock, log: d.Logger,
		cfg: cfg, hooks: d.Hooks, kick: make(chan struct{}, 1), waits: make(chan struct{}, 1), ironicDown: map[string]bool{},
		watch: watchSet{}, q: newQueue(cfg.Workers), cinder: d.Cinder, cinderHost: d.CinderHost,
		volPortal: d.VolumePortal, volIQNPrefix: d.VolumeIQNPrefix,
	}
	if r.ports == nil {
		r.ports = embeddedPorts{ipam: d.IPAM, nets: d.Networks}
	}
	r.saves = d.Store
	if b, ok := d.Store.(store.Batch); ok {
		r.saves = store.NewGroupCommit(b)
	}
	if d.Leases != nil {
		r.leases = d.Leases
		r.ironic = guardedIronic{Ironic: d.Ironic, k: d.Leases}
		if d.Cinder != nil {
			r.cinder = guardedCinder{Cinder: d.Cinder, k: d.Leases}
		}
		d.Leases.OnGain(func() { r.driftNow.Store(true); r.Kick() })
	}
	return r
}

// TickStats says what one tick did.
type TickStats struct {
	Servers  int // servers looked at
	PastDue  int // non-stable servers past deadline + one interval (must be 0)
	IronicUp bool
	// Carried: servers the budget did not reach for expensive steps (they
	// had the cheap pass only; the next tick starts with them).
	Carried int
}

// Tick runs one pass over every server that needs work (and, every
// DriftInterval, every ACTIVE server). Safe to call repeatedly; not
// concurrently with itself.
func (r *Reconciler) Tick(ctx context.Context) (TickStats, error) {
	start := r.clock.Now()
	if r.leases != nil {
		if err := r.leases.RenewIfDue(ctx); err != nil {
			r.log.Warn("lease renewal failed", "err", err)
		}
	}
	ctx = r.readEpochs(ctx) // before the load (fenced.go)
	servers, err := r.loadWork(ctx)
	if err != nil {
		return TickStats{}, err
	}
	if r.driftNow.Swap(false) || start.Sub(r.lastDrift) >= r.cfg.DriftInterval {
		// Built servers at rest are checked for drift on their own cadence
		// (those with an operation pending already need work), and so are
		// servers an admin reset to error: they keep their node.
		for _, p := range []lifecycle.Phase{lifecycle.PhaseActive, lifecycle.PhaseStopped, lifecycle.PhaseRescued, lifecycle.PhaseError} {
			resting, err := r.allInPhase(ctx, p)
			if err != nil {
				return TickStats{}, err
			}
			for _, s := range resting {
				if !s.NeedsWork() && (p != lifecycle.PhaseError || s.HeldInError()) {
					servers = append(servers, s)
				}
			}
		}
		r.lastDrift = start
	}
	servers = r.owned(servers)
	r.q.noteNodes(servers)
	r.countReleasing(servers)
	stats := TickStats{Servers: len(servers)}
	if len(servers) == 0 {
		r.mu.Lock()
		r.carried = 0
		r.mu.Unlock()
		r.watchFrom(nil)
		r.report(start, stats)
		return stats, nil
	}
	view := r.bulkView(ctx, servers)
	stats.IronicUp = view.up

	servers = rotate(servers, r.cursor)
	r.mu.Lock()
	r.touched = map[string]bool{}
	r.mu.Unlock()
	deadline := r.stepsDeadline(start, r.cfg.Interval)
	r.decaySteps()
	rest, busy := r.dispatch(ctx, servers, view, deadline)
	stats.Carried = len(rest)
	r.mu.Lock()
	r.carried = len(rest)
	r.mu.Unlock()
	r.cursor = ""
	if len(rest) > 0 {
		r.cursor = rest[0].ID
	}
	// The servers busy elsewhere get the cheap look too: a delete or a
	// deadline is recorded within the interval whatever holds them (their
	// own step then meets the new version and decides again).
	if glance := append(rest, busy...); len(glance) > 0 {
		r.glanceAll(ctx, glance, view)
	}
	r.watchFrom(servers)

	now := r.clock.Now()
	for _, s := range servers {
		if lifecycle.PastDue(s, r.cfg.Lifecycle, now, r.cfg.Interval) {
			stats.PastDue++
		}
	}
	r.report(start, stats)
	return stats, ctx.Err()
}

func (r *Reconciler) report(start time.Time, stats TickStats) {
	if r.hooks.Tick != nil {
		r.hooks.Tick(r.clock.Now().Sub(start), stats.Servers)
	}
	if r.hooks.PastDue != nil {
		r.hooks.PastDue(stats.PastDue)
	}
}

func (r *Reconciler) allInPhase(ctx context.Context, p lifecycle.Phase) ([]*lifecycle.Server, error) {
	var out []*lifecycle.Server
	after := ""
	for {
		page, err := r.store.ServersInPhase(ctx, p, after, 1000)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < 1000 {
			return out, nil
		}
		after = page[len(page)-1].ID
	}
}

// bulk is this tick's view of Ironic: every node carrying an instance_uuid.
type bulk struct {
	up    bool
	nodes map[string]ironic.Node // node uuid -> node
	acts  int64                  // queue.mark() as the listing began
}

func (r *Reconciler) bulkView(ctx context.Context, servers []*lifecycle.Server) *bulk {
	need := false
	for _, s := range servers {
		if s.NodeID != "" {
			need = true
			break
		}
	}
	if !need {
		return &bulk{up: true}
	}
	acts := r.q.mark()
	nodes, err := r.ironic.ListAssociated(ctx)
	if err != nil {
		r.log.Warn("Ironic bulk view failed", "err", err)
		return &bulk{up: false}
	}
	r.mu.Lock()
	r.lastBulk = len(nodes)
	r.mu.Unlock()
	b := &bulk{up: true, nodes: make(map[string]ironic.Node, len(nodes)), acts: acts}
	for _, n := range nodes {
		b.nodes[n.UUID] = n
	}
	return b
}

// countReleasing notes, per resource class, the nodes that servers of ours
// are letting go of: capacity on its way back for a build that finds none.
func (r *Reconciler) countReleasing(servers []*lifecycle.Server) {
	m := map[string]int{}
	for _, s := range servers {
		if s.NodeID == "" {
			continue
		}
		switch {
		case s.Desired == lifecycle.DesiredDeleted, s.Phase == lifecycle.PhaseReleasing, s.Phase == lifecycle.PhaseError:
			m[s.Spec.ResourceClass]++
		}
	}
	r.mu.Lock()
	r.releasing = m
	r.mu.Unlock()
}

func (r *Reconciler) releasingIn(rc string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.releasing[rc]
}

func (r *Reconciler) setDown(id string, down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if down {
		r.ironicDown[id] = true
	} else {
		delete(r.ironicDown, id)
	}
}

func (r *Reconciler) isDown(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ironicDown[id]
}

// errStale: the server changed under us (the user's delete); reload it.
var errStale = errors.New("stale")
