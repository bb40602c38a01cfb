package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Background listing. Listing 100,000 nodes (and their ports) takes
// seconds; done inside a pick it holds up every build of the tick behind
// one step that the tick's budget cannot cut short. With
// Options.Background the periodic refresh runs on its own goroutine while
// picks go on from the inventory already held (a node someone took since is
// refused by Ironic's reservation, as with any cached inventory), and the
// very first listing of a class makes its picks answer ErrRetryLater until
// it is in; OnRefresh then asks for a tick. The on-demand listing of a
// class whose cache has no candidate left stays inline: it decides between
// a wait and no_valid_host.

// backgroundTimeout bounds one background listing.
const backgroundTimeout = 2 * time.Minute

type bgState struct {
	mu      sync.Mutex
	running map[string]bool // "nodes:<class>" or "ports"
}

// inBackground runs fn on its own goroutine unless one for key already runs.
func (sc *Scheduler) inBackground(key string, fn func(ctx context.Context) error) {
	sc.bg.mu.Lock()
	if sc.bg.running == nil {
		sc.bg.running = map[string]bool{}
	}
	if sc.bg.running[key] {
		sc.bg.mu.Unlock()
		return
	}
	sc.bg.running[key] = true
	sc.bg.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), backgroundTimeout)
		err := fn(ctx)
		cancel()
		sc.bg.mu.Lock()
		delete(sc.bg.running, key)
		last := len(sc.bg.running) == 0
		sc.bg.mu.Unlock()
		if err != nil {
			sc.opts.Logger.Warn("background inventory listing failed", "what", key, "err", err)
			return
		}
		// A first pick starts the nodes' listing and the ports' together,
		// and needs both: it is woken once, after the last.
		if last && sc.opts.OnRefresh != nil {
			sc.opts.OnRefresh()
		}
	}()
}

// prepare keeps the caches s's pick reads fresh in the background: a stale
// one is refreshed while it goes on serving; a missing one makes the pick
// wait (ErrRetryLater) for its first listing.
func (sc *Scheduler) prepare(s *lifecycle.Server) error {
	rc := s.Spec.ResourceClass
	now := sc.clock.Now()
	sc.mu.Lock()
	c := sc.classes[rc]
	havePorts, portsAt := sc.ports.byNode != nil, sc.ports.fetchedAt
	sc.mu.Unlock()
	missing := false
	if len(s.Spec.Networks) > 0 && (!havePorts || now.Sub(portsAt) > sc.opts.Refresh) {
		sc.inBackground("ports", func(ctx context.Context) error { return sc.refreshPorts(ctx, sc.opts.Refresh) })
		missing = !havePorts
	}
	if c == nil || now.Sub(c.fetchedAt) > sc.opts.Refresh {
		sc.inBackground("nodes:"+rc, func(ctx context.Context) error {
			_, err := sc.refresh(ctx, rc, false)
			return err
		})
		missing = missing || c == nil
	}
	if missing {
		return ErrRetryLater
	}
	return nil
}

// Warm lists, in the background, the inventory of each class that
// Options.Classes names and the ports, unless their caches are fresh: the
// first build of a class after a start then picks at once rather than
// waiting for a listing, and its Ironic calls are its own. Only with
// Options.Background; a class no flavor names is listed at its first pick.
func (sc *Scheduler) Warm(ctx context.Context) {
	if !sc.opts.Background || sc.opts.Classes == nil {
		return
	}
	classes, err := sc.opts.Classes(ctx)
	if err != nil {
		sc.opts.Logger.Warn("inventory warm-up: cannot list the flavors' resource classes", "err", err)
		return
	}
	now := sc.clock.Now()
	sc.mu.Lock()
	var stale []string
	for _, rc := range classes {
		if c := sc.classes[rc]; c == nil || now.Sub(c.fetchedAt) > sc.opts.Refresh {
			stale = append(stale, rc)
		}
	}
	portsStale := sc.ports.byNode == nil || now.Sub(sc.ports.fetchedAt) > sc.opts.Refresh
	sc.mu.Unlock()
	if len(stale) == 0 {
		return
	}
	if portsStale {
		sc.inBackground("ports", func(ctx context.Context) error { return sc.refreshPorts(ctx, sc.opts.Refresh) })
	}
	for _, rc := range stale {
		sc.inBackground("nodes:"+rc, func(ctx context.Context) error {
			_, err := sc.refresh(ctx, rc, false)
			return err
		})
	}
}
