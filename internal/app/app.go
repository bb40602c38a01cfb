// Package app wires ingot together — store, Ironic adapter, scheduler, IPAM,
// reconciler, API, metrics — from a configuration. `ingot serve` and the
// end-to-end tests build the service the same way.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/connlimit"
	"github.com/ingot-dev/ingot/internal/hostcheck"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicnotify"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/metrics"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/neutronports"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/scheduler"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/backend"
	"github.com/ingot-dev/ingot/internal/ui"
)

// App is one ingot process.
type App struct {
	Config     config.Config
	Store      store.Store
	Ironic     *ironic.Client
	IronicURL  string
	Sim        *ironicsim.Sim // the built-in simulator when ironic.url is "sim"
	Reconciler *reconciler.Reconciler
	// Leases holds this replica's shard leases (docs/DESIGN.md §2.10).
	Leases  *reconciler.Keeper
	Metrics *metrics.Metrics
	// Notifications consumes Ironic's notifications (nil when
	// ironic.notifications is off); RunNotifications runs it.
	Notifications *ironicnotify.Consumer
	// Handler is the API (internal/api); Console is the operator console
	// under /ui/ (internal/ui), which calls Handler in-process. Serve
	// answers both on one listener (Root).
	Handler http.Handler
	Console *ui.Console
	Log     *slog.Logger
	// Keystone validates tokens (and authenticates to Ironic with
	// ironic.auth: keystone); nil in noauth.
	Keystone *auth.Keystone
	// Adopter adopts the instances Ironic runs for another service
	// (POST /ingot/v1/adopt; `ingot adopt` opens its own: OpenAdoption).
	Adopter *adopt.Adopter

	owner backend.Owner // this process owns the database
	// notify publishes Nova's notifications (outbox.go; off: zero).
	notify  outbox
	closers []func()
	// kicks carries API writes to the other replicas (store.Kicker).
	kicks  chan struct{}
	clock  clock.Clock
	report time.Duration // heartbeat interval
}

// Options are what a caller may supply beyond the configuration.
type Options struct {
	// Clock is ingot's clock (default: a clock.Steady that starts at the
	// database's clock with PostgreSQL, at SystemClock with SQLite, and
	// moves by the monotonic clock: a step of the host's clock moves
	// neither a deadline nor a lease).
	Clock clock.Clock
	// SystemClock is the host's clock as read (default clock.Real{}); a
	// test steps it.
	SystemClock clock.Clock
	Logger      *slog.Logger // default: discard
	// Step is called at every reconciler step boundary (crash tests).
	Step func(point string)
	// ReportInterval is how often the replica's services report a
	// heartbeat (default ReportInterval).
	ReportInterval time.Duration
	// Tick, when set, hears every tick's length besides the metrics (full
	// false: a fast tick); the benchmarks record the worst one.
	Tick func(full bool, d time.Duration, servers int)
}

// New builds the service from a normalized configuration. Close releases it.
func New(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	if opts.SystemClock == nil {
		opts.SystemClock = clock.Real{}
	}
	// SQLite's leases are judged by the process's clock: the steady one,
	// unless a test brings its own (then the wall clock, as before).
	var leaseClock clock.Clock
	if opts.Clock == nil && !config.IsPostgres(cfg.Database) {
		opts.Clock = clock.NewSteady(opts.SystemClock.Now())
		leaseClock = opts.Clock
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ReportInterval <= 0 {
		opts.ReportInterval = ReportInterval
	}
	a := &App{Config: cfg, Log: opts.Logger, report: opts.ReportInterval}
	if err := a.openDatabase(ctx, leaseClock); err != nil {
		return nil, err
	}
	st := a.Store
	if opts.Clock == nil {
		at, err := databaseNow(ctx, st, opts.SystemClock)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("database %s: %w", config.RedactDSN(cfg.Database), err)
		}
		opts.Clock = clock.NewSteady(at)
	}
	a.clock = opts.Clock
	if err := registerServices(ctx, st, cfg.Host, opts.Clock.Now()); err != nil {
		a.Close()
		return nil, fmt.Errorf("services: %w", err)
	}

	a.IronicURL = cfg.Ironic.URL
	if a.IronicURL == "sim" {
		if err := a.startSim(cfg.Ironic.Sim, cfg.SimStatePath()); err != nil {
			a.Close()
			return nil, err
		}
	}
	a.Metrics = metrics.New(st.CountByPhase)
	if err := a.setupOutbox(ctx, cfg, opts.Step); err != nil {
		a.Close()
		return nil, err
	}
	ident, err := newIdentity(ctx, cfg, opts.Clock, opts.Logger)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Keystone = ident.keystone
	icfg := ironicConfig(cfg, a.IronicURL, ident, a.Metrics.IronicCall)
	// The leases' last word on a change, as its bytes go out (a.Leases is
	// set below, before anything runs).
	icfg.BeforeSend = func(ctx context.Context) error { return a.Leases.Admit(ctx) }
	ic, err := ironic.New(icfg)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("ironic: %w", err)
	}
	a.Ironic = ic
	if err := a.claimLeases(ctx, opts); err != nil {
		a.Close()
		return nil, err
	}
	vc, err := newCinder(ctx, cfg, ident, opts.Clock)
	if err != nil {
		a.Close()
		return nil, err
	}
	nets := cfg.NetworkList()
	nb, nc, asUser, err := networkBackend(cfg, ident, st, opts)
	if err != nil {
		a.Close()
		return nil, err
	}
	var ports reconciler.Ports
	var neutronAPI core.Neutron
	var netNames core.NetworkNames
	var secGroups func(token string) core.SecurityGroups
	if nb != nil {
		// The configured networks are the embedded IPAM's.
		nets, ports, neutronAPI = nil, nb, nc
		netNames = neutronports.NewNames(nc, 0, opts.Clock.Now)
		secGroups = func(token string) core.SecurityGroups { return asUser.With(token) }
	}
	sched := scheduler.New(ic, opts.Clock, scheduler.Options{Logger: opts.Logger, Networks: nets,
		Schedulable: schedulable(st), GroupMembers: st.GroupMembers, NodeHost: nodeHosts(st), Background: true,
		OnRefresh: func() { a.Reconciler.InventoryListed() }, Classes: flavorClasses(st)})
	a.Reconciler = reconciler.New(reconciler.Deps{
		Store: st, Ironic: ic, Scheduler: sched, IPAM: network.NewIPAM(st, nets), Networks: nets, Ports: ports, Clock: opts.Clock, Logger: opts.Logger,
		Hooks:  reconciler.Hooks{Tick: tee(a.Metrics.Tick, opts.Tick, true), FastTick: tee(a.Metrics.FastTick, opts.Tick, false), Transition: a.Metrics.Transition, PastDue: a.Metrics.PastDue, Step: opts.Step},
		Leases: a.Leases, Cinder: reconcilerCinder(vc), CinderHost: cfg.Host,
		VolumePortal: cfg.Volume.Embedded.Portal, VolumeIQNPrefix: cfg.Volume.Embedded.IQNPrefix,
	}, reconciler.Config{
		Interval: cfg.PollInterval, FastInterval: cfg.FastPollInterval, TickBudget: cfg.TickBudget,
		DriftInterval: cfg.DriftInterval, Workers: cfg.Workers,
		Lifecycle: LifecycleConfig(cfg),
	})
	if a.Adopter, err = newAdopter(cfg, st, ic, nc, vc, ident, opts.Clock, opts.Step, a.kick); err != nil {
		a.Close()
		return nil, err
	}
	if a.Notifications, err = a.newNotifications(); err != nil {
		a.Close()
		return nil, err
	}
	ready := func(ctx context.Context) error {
		if err := st.Ping(ctx); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		if err := ic.Ping(ctx); err != nil {
			return fmt.Errorf("ironic: %w", err)
		}
		return nil
	}
	images, err := imageBackend(cfg, ident, opts.Logger)
	if err != nil {
		a.Close()
		return nil, err
	}
	cat := cfg.Catalog()
	cat.Flavors = nil // seeded above
	hosts := allowedHosts(cfg)
	a.Handler = api.New(api.Config{
		Store: st, Catalog: cat, Networks: nets, Neutron: neutronAPI, NetworkNames: netNames, SecurityGroupsAs: secGroups, Clock: opts.Clock, BuildTimeout: cfg.BuildTimeout,
		InterfaceTimeout: cfg.InterfaceTimeout,
		Kick:             a.kick, Nodes: ic.ListNodes, Logger: opts.Logger, Metrics: a.Metrics.Handler(),
		RescueInterface: ic.NodeRescueInterface, DisableInstancePassword: !cfg.API.EnableInstancePassword,
		Auth: ident.authn, AuthURL: ident.authURL, Policy: ident.policy, Quotas: QuotaLimits(cfg), Images: images,
		PublicURL: cfg.API.PublicURL, TrustedProxies: cfg.TrustedProxyPrefixes(), Hosts: hosts.api,
		Ready: ready, Host: cfg.Host, ServiceDownTime: ServiceDownTime, Inventory: sched.Nodes,
		Replica: func() any { return a.Leases.Status() }, Cinder: vc, Embedded: embeddedVolumes(cfg),
		Adopt: a.adoptHook,
	})
	if a.Console, err = newConsole(cfg, a, ident, ready, hosts.console, opts); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// newConsole builds /ui/ over the API handler, with the API's own
// authenticator and policy (internal/ui).
func newConsole(cfg config.Config, a *App, ident *identity, ready func(context.Context) error, hosts *hostcheck.Allowlist, opts Options) (*ui.Console, error) {
	uc := ui.Config{API: a.Handler, Auth: ident.authn, Policy: ident.policy, Store: a.Store,
		PastDeadline: a.Metrics.PastDeadline, Ready: ready, Lifecycle: LifecycleConfig(cfg),
		PublicURL: cfg.API.PublicURL, Hosts: hosts, Clock: opts.Clock, Logger: opts.Logger}
	if cfg.Auth.Strategy == "keystone" {
		uc.Keystone = &ui.KeystoneLogin{AuthURL: cfg.Auth.Keystone.AuthURL, Domain: cfg.Auth.Keystone.UserDomainName,
			Timeout: cfg.Auth.Keystone.Timeout}
	}
	c, err := ui.New(uc)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return c, nil
}

// Root is what Serve answers: the console under /ui/, the API everywhere else.
func (a *App) Root() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.Console != nil && (r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, "/ui/")) {
			a.Console.ServeHTTP(w, r)
			return
		}
		a.Handler.ServeHTTP(w, r)
	})
}

// openDatabase locks and opens the database (SQLite's leases judged by
// leaseClock; nil: the wall clock) and seeds the configured flavors; on
// error everything is released.
func (a *App) openDatabase(ctx context.Context, leaseClock clock.Clock) error {
	cfg := a.Config
	if err := a.lockDatabase(ctx); err != nil {
		return err
	}
	st, err := backend.Open(ctx, cfg.Database, backend.Options{MaxConns: cfg.DatabaseMaxConns, Clock: leaseClock})
	if err != nil {
		a.Close()
		return fmt.Errorf("database %s: %w", config.RedactDSN(cfg.Database), err)
	}
	a.Store = st
	a.closers = append(a.closers, func() { _ = st.Close() })
	if err := api.SeedFlavors(ctx, st, cfg.Catalog().Flavors); err != nil {
		a.Close()
		return fmt.Errorf("flavors: %w", err)
	}
	return nil
}

// lockDatabase makes this process the one owner of the database: a second
// ingot on the same database would run a second reconciler over the same
// servers (S25). The store's backend holds the lock (a lock file beside a
// SQLite database, an advisory lock in PostgreSQL), dropped when the
// process ends however it ends; Serve adds the listen address to its record.
func (a *App) lockDatabase(ctx context.Context) error {
	db := config.RedactDSN(a.Config.Database)
	o, err := backend.Acquire(ctx, a.Config.Database, a.Config.Host)
	if errors.Is(err, backend.ErrHeld) {
		return fmt.Errorf("database %s is in use by another ingot: %w; stop that one, or give this one another database (--database, or --data-dir with --dev)", db, err)
	}
	if err != nil {
		return fmt.Errorf("database %s: %w", db, err)
	}
	a.owner = o
	// Serve may take the ownership again after a lost session (reown.go).
	a.closers = append(a.closers, func() { _ = a.owner.Release() })
	return nil
}

// databaseNow is the database's clock when it has one every replica must
// agree with, else the host's.
func databaseNow(ctx context.Context, st store.Store, sys clock.Clock) (time.Time, error) {
	if c, ok := st.(store.Clocked); ok {
		return c.Now(ctx)
	}
	return sys.Now(), nil
}

// claimLeases builds the lease keeper and runs its first round at once, so
// a lone replica (SQLite's one process) holds every shard before its first
// tick, and one restarting under the same host takes its own shards back.
func (a *App) claimLeases(ctx context.Context, opts Options) error {
	ls, ok := a.Store.(store.Leases)
	if !ok {
		return fmt.Errorf("database %s: the store keeps no leases", a.Config.Database)
	}
	a.Leases = reconciler.NewKeeper(ls, opts.Clock, opts.Logger.With("host", a.Config.Host),
		reconciler.LeaseConfig{Host: a.Config.Host, Shards: a.Config.Shards, TTL: a.Config.LeaseTTL},
		reconciler.LeaseHooks{Held: a.Metrics.LeasesHeld, Takeover: a.Metrics.LeaseTakeovers})
	if err := a.Leases.Round(ctx); err != nil {
		return fmt.Errorf("database %s: %w", a.Config.Database, err)
	}
	a.closers = append(a.closers, a.releaseLeases)
	if _, ok := a.Store.(store.Kicker); ok {
		a.kicks = make(chan struct{}, 1)
	}
	return nil
}

// kick wakes this replica's loop after an API write: the work items of the
// servers written are due at once (no wait for a tick; a full tick when
// none is named), and, when the store can, every other replica gets a
// kick (the server's shard may be held elsewhere). Never blocks: a burst
// of writes coalesces into one notification.
func (a *App) kick(servers ...string) {
	if len(servers) == 0 {
		a.Reconciler.Kick()
	} else {
		a.Reconciler.Wake(servers...)
	}
	if a.kicks != nil {
		select {
		case a.kicks <- struct{}{}:
		default:
		}
	}
}

// relayKicks, with a store that can notify, sends this replica's kicks to
// the others and kicks the loop on theirs, until ctx ends.
func (a *App) relayKicks(ctx context.Context) {
	k, ok := a.Store.(store.Kicker)
	if !ok || a.kicks == nil {
		return
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-a.kicks:
			}
			if err := k.KickReplicas(ctx); err != nil && ctx.Err() == nil {
				a.Log.Warn("kick replicas", "err", err)
			}
		}
	}()
	go func() {
		for ctx.Err() == nil {
			if err := k.ListenKicks(ctx, a.Reconciler.Kick); err != nil && ctx.Err() == nil {
				a.Log.Warn("listen for kicks", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}()
}

// releaseLeases gives this replica's leases up (idempotent).
func (a *App) releaseLeases() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Leases.Release(ctx); err != nil {
		a.Log.Warn("lease release", "err", err)
	}
}

// LifecycleConfig extracts the lifecycle's limits.
func LifecycleConfig(c config.Config) lifecycle.Config {
	return lifecycle.Config{
		BuildTimeout:     c.BuildTimeout,
		DeleteTimeout:    c.DeleteTimeout,
		MaintenanceGrace: c.MaintenanceGrace,
		MaxAttempts:      c.MaxAttempts,
		CapacityWait:     c.CapacityWait,
		RebootTimeout:    c.RebootTimeout,
		PowerTimeout:     c.PowerTimeout,
		RebuildTimeout:   c.RebuildTimeout,
		RescueTimeout:    c.RescueTimeout,
		InterfaceTimeout: c.InterfaceTimeout,
		VolumeTimeout:    c.VolumeTimeout,
	}
}

// startSim runs the built-in simulated Ironic on a loopback port; ingot then
// talks to it over HTTP exactly as to a real Ironic. It keeps its state in
// statePath (guarded by the database lock, like the database), so a restart
// finds the nodes, and the servers on them, where they were; c.Nodes nodes
// are created only when there is no state yet.
func (a *App) startSim(c config.Sim, statePath string) error {
	sim := ironicsim.New(ironicsim.Options{DeployTime: c.DeployTime, UndeployTime: c.UndeployTime})
	restored, err := sim.Persist(statePath, func(err error) { a.Log.Warn("simulated Ironic: state not saved", "err", err) })
	if err != nil {
		return fmt.Errorf("simulated ironic: %w", err)
	}
	if !restored {
		// Two NICs per node, so servers get real MACs in their config drive,
		// and the fake rescue interface, so they can be rescued.
		sim.AddNodes(c.Nodes, ironicsim.NodeSpec{ResourceClass: c.ResourceClass, RescueInterface: "fake", Ports: 2})
	}
	listen := c.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("simulated ironic: %w", err)
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	a.Sim = sim
	a.IronicURL = "http://" + ln.Addr().String()
	a.closers = append(a.closers, func() {
		// Let requests in flight finish (each saves the state before it is
		// answered), then stop saving: nothing writes the state file after Close.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		sim.StopPersisting()
	})
	a.Log.Info("built-in simulated Ironic", "url", a.IronicURL, "nodes", len(sim.Nodes()), "resource_class", c.ResourceClass,
		"admin", a.IronicURL+"/_sim/", "state", statePath, "resumed", restored)
	return nil
}

// Serve answers the API on ln and runs the reconciler until ctx ends, then
// shuts down gracefully.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := newHTTPServer(a.Config, a.Root(), a.Log)
	proxies := a.Config.TrustedProxyPrefixes()
	limited := connlimit.New(ln, a.Config.API.MaxConnections, a.Config.API.ConnectionsPerClient(), func(addr netip.Addr) bool {
		return slices.ContainsFunc(proxies, func(p netip.Prefix) bool { return p.Contains(addr) })
	})
	srv.ConnState = limited.ConnState
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(limited) }()
	// Run in its own loops: lost and taken again, the ownership pauses
	// and resumes them (reown.go).
	loops := a.startLoops(ctx)
	defer func() { loops.stop() }()
	a.relayKicks(ctx)
	// The consumer only wakes work items: it goes on while the loops are
	// paused (they take the items when they resume).
	go a.RunNotifications(ctx)
	go a.heartbeat(ctx)
	var lost <-chan struct{}
	if a.owner != nil {
		if err := a.owner.SetListen(ctx, "http://"+ln.Addr().String()); err != nil {
			a.Log.Warn("database lock record", "err", err)
		}
		lost = a.owner.Lost()
	}
	go a.diagnose(ctx)
	a.Log.Info("ingot serving", "api", "http://"+ln.Addr().String()+"/v2.1", "console", "http://"+ln.Addr().String()+"/ui/",
		"ironic", a.IronicURL, "database", config.RedactDSN(a.Config.Database))
	for serving := true; serving; {
		select {
		case <-ctx.Done():
			serving = false
		case <-lost:
			// Another ingot of this host may own the database now: stop
			// acting at once, and go on only once the ownership is ours
			// again. The API answers meanwhile (503 while the database is
			// down: it records requests only where the database takes them).
			a.Log.Error("database ownership lost (the owner lock's session ended); acting paused until it is taken again",
				"database", config.RedactDSN(a.Config.Database))
			loops.stop()
			if err := a.reown(ctx, "http://"+ln.Addr().String()); err != nil {
				_ = srv.Close()
				return err
			}
			if ctx.Err() != nil {
				serving = false
				break
			}
			lost = a.owner.Lost()
			loops = a.startLoops(ctx)
		case err := <-srvErr:
			if err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, context.Canceled) {
				loops.stop()
				return err
			}
			serving = false
		}
	}
	a.Log.Info("shutting down")
	loops.stopActing()
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shutCtx)
	// The reconciler's last step ends before Serve returns, so Close never
	// pulls the store or the simulator from under it.
	select {
	case <-loops.recDone:
		// Nothing acts any more: hand the shards over at once (a rolling
		// restart does not wait for the leases to expire).
		loops.stop()
		a.releaseLeases()
	case <-shutCtx.Done():
	}
	return err
}

// Close releases the database and the built-in simulator.
func (a *App) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// tee calls the metrics' tick hook and then the caller's, if any.
func tee(m func(time.Duration, int), extra func(bool, time.Duration, int), full bool) func(time.Duration, int) {
	if extra == nil {
		return m
	}
	return func(d time.Duration, n int) {
		m(d, n)
		extra(full, d, n)
	}
}
