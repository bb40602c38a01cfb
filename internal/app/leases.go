package app

import (
	"context"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/store"
)

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
