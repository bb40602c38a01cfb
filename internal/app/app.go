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
	"os"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/lockfile"
	"github.com/ingot-dev/ingot/internal/metrics"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/scheduler"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
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
	Metrics    *metrics.Metrics
	// Handler is the API (internal/api); Console is the operator console
	// under /ui/ (internal/ui), which calls Handler in-process. Serve
	// answers both on one listener (Root).
	Handler http.Handler
	Console *ui.Console
	Log     *slog.Logger
	// Keystone validates tokens (and authenticates to Ironic with
	// ironic.auth: keystone); nil in noauth.
	Keystone *auth.Keystone

	lock    *lockfile.Lock // this process owns the database
	closers []func()
}

// Options are what a caller may supply beyond the configuration.
type Options struct {
	Clock  clock.Clock  // default clock.Real{}
	Logger *slog.Logger // default: discard
	// Step is called at every reconciler step boundary (crash tests).
	Step func(point string)
	// Tick, when set, hears every tick's length besides the metrics (full
	// false: a fast tick); the benchmarks record the worst one.
	Tick func(full bool, d time.Duration, servers int)
}

// New builds the service from a normalized configuration. Close releases it.
func New(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a := &App{Config: cfg, Log: opts.Logger}
	if err := a.lockDatabase(); err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, cfg.Database)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("database %s: %w", cfg.Database, err)
	}
	a.Store = st
	a.closers = append(a.closers, func() { _ = st.Close() })

	a.IronicURL = cfg.Ironic.URL
	if a.IronicURL == "sim" {
		if err := a.startSim(cfg.Ironic.Sim, cfg.SimStatePath()); err != nil {
			a.Close()
			return nil, err
		}
	}
	a.Metrics = metrics.New(st.CountByPhase)
	ident, err := newIdentity(ctx, cfg, opts.Clock, opts.Logger)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Keystone = ident.keystone
	ic, err := ironic.New(ironicConfig(cfg, a.IronicURL, ident, a.Metrics.IronicCall))
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("ironic: %w", err)
	}
	a.Ironic = ic
	nets := cfg.NetworkList()
	sched := scheduler.New(ic, opts.Clock, scheduler.Options{Logger: opts.Logger, Networks: nets, Background: true,
		OnRefresh: func() { a.Reconciler.Kick() }})
	a.Reconciler = reconciler.New(reconciler.Deps{
		Store: st, Ironic: ic, Scheduler: sched, IPAM: network.NewIPAM(st, nets), Networks: nets, Clock: opts.Clock, Logger: opts.Logger,
		Hooks: reconciler.Hooks{Tick: tee(a.Metrics.Tick, opts.Tick, true), FastTick: tee(a.Metrics.FastTick, opts.Tick, false), Transition: a.Metrics.Transition, PastDue: a.Metrics.PastDue, Step: opts.Step},
	}, reconciler.Config{
		Interval: cfg.PollInterval, FastInterval: cfg.FastPollInterval, TickBudget: cfg.TickBudget,
		DriftInterval: cfg.DriftInterval, Workers: cfg.Workers,
		Lifecycle: LifecycleConfig(cfg),
	})
	ready := func(ctx context.Context) error {
		if err := st.Ping(ctx); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		if err := ic.Ping(ctx); err != nil {
			return fmt.Errorf("ironic: %w", err)
		}
		return nil
	}
	a.Handler = api.New(api.Config{
		Store: st, Catalog: cfg.Catalog(), Networks: nets, Clock: opts.Clock, BuildTimeout: cfg.BuildTimeout,
		Kick: a.Reconciler.Kick, Nodes: ic.ListNodes, Logger: opts.Logger, Metrics: a.Metrics.Handler(),
		RescueInterface: ic.NodeRescueInterface, DisableInstancePassword: !cfg.API.EnableInstancePassword,
		Auth: ident.authn, AuthURL: ident.authURL, Policy: ident.policy, Quotas: QuotaLimits(cfg),
		PublicURL: cfg.API.PublicURL, TrustedProxies: cfg.TrustedProxyPrefixes(),
		Ready: ready,
	})
	if a.Console, err = newConsole(cfg, a, ident, ready, opts); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// newConsole builds /ui/ over the API handler, with the API's own
// authenticator and policy (internal/ui).
func newConsole(cfg config.Config, a *App, ident *identity, ready func(context.Context) error, opts Options) (*ui.Console, error) {
	uc := ui.Config{API: a.Handler, Auth: ident.authn, Policy: ident.policy, Store: a.Store,
		PastDeadline: a.Metrics.PastDeadline, Ready: ready, Lifecycle: LifecycleConfig(cfg),
		PublicURL: cfg.API.PublicURL, Clock: opts.Clock, Logger: opts.Logger}
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

// lockDatabase makes this process the one owner of the database: a second
// ingot on the same file would run a second reconciler over the same servers
// (S25). The lock is <database>.lock, released by the kernel when the process
// ends however it ends; Serve adds the listen address to its record.
func (a *App) lockDatabase() error {
	path := a.Config.Database + ".lock"
	l, err := lockfile.Acquire(path, lockfile.Holder{PID: os.Getpid(), Since: time.Now().UTC().Truncate(time.Second)})
	var held *lockfile.HeldError
	if errors.As(err, &held) {
		return fmt.Errorf("database %s is in use by another ingot: %w; stop that one, or give this one another database (--database, or --data-dir with --dev)", a.Config.Database, err)
	}
	if err != nil {
		return fmt.Errorf("database %s: %w", a.Config.Database, err)
	}
	a.lock = l
	a.closers = append(a.closers, func() { _ = l.Release() })
	return nil
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
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(limitListener(ln, a.Config.API.MaxConnections)) }()
	recCtx, stopRec := context.WithCancel(ctx)
	defer stopRec()
	recDone := make(chan struct{})
	go func() { defer close(recDone); errc <- a.Reconciler.Run(recCtx) }()
	if a.lock != nil {
		h := a.lock.Holder()
		h.Listen = "http://" + ln.Addr().String()
		if err := a.lock.Update(h); err != nil {
			a.Log.Warn("database lock record", "err", err)
		}
	}
	a.Log.Info("ingot serving", "api", "http://"+ln.Addr().String()+"/v2.1", "console", "http://"+ln.Addr().String()+"/ui/",
		"ironic", a.IronicURL, "database", a.Config.Database)
	select {
	case <-ctx.Done():
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, context.Canceled) {
			stopRec()
			_ = srv.Close()
			return err
		}
	}
	a.Log.Info("shutting down")
	stopRec()
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shutCtx)
	// The reconciler's last step ends before Serve returns, so Close never
	// pulls the store or the simulator from under it.
	select {
	case <-recDone:
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
