// Package app wires ingot together — store, Ironic adapter, scheduler, IPAM,
// reconciler, API, metrics — from a configuration. `ingot serve` and the
// end-to-end tests build the service the same way.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
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
