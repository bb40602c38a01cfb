package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/connlimit"
)

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
