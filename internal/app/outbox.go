package app

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/novanotify"
	"github.com/ingot-dev/ingot/internal/store"
)

// hostsRefresh is how often the notifications' node -> compute host map
// is read again (replicas joining or leaving change it).
const hostsRefresh = 30 * time.Second

// outbox is the notifications' part of the app.
type outbox struct {
	publisher *novanotify.Publisher
	// hostOf is each node's compute host as the API shows it, read from
	// the services (the builder runs inside store transactions, so it
	// cannot read them itself).
	hostOf atomic.Pointer[func(node string) string]
}

// setupOutbox makes the store record Nova's notifications in its outbox
// and builds their publisher, when notifications.url is set
// (docs/DESIGN.md §2.13). It runs before anything writes a server.
func (a *App) setupOutbox(ctx context.Context, cfg config.Config, step func(string)) error {
	if !cfg.Notifications.Enabled() {
		return nil
	}
	ob, ok := a.Store.(store.Outbox)
	if !ok {
		return fmt.Errorf("notifications: the %T store keeps no outbox", a.Store)
	}
	if err := a.refreshHosts(ctx); err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	names := map[string]string{}
	for _, f := range cfg.Catalog().Flavors {
		names[f.ID] = f.Name
	}
	b := novanotify.Builder{PublisherID: cfg.Notifications.PublisherID, Now: a.clock.Now,
		FlavorName: func(id string) string { return names[id] },
		HostOf: func(node string) string {
			if h := (*a.notify.hostOf.Load())(node); h != "" {
				return h
			}
			return cfg.Host
		}}
	ob.SetNotifier(b.Notices)
	a.notify.publisher = novanotify.NewPublisher(cfg.Notifications.Publisher(cfg.Host), ob, novanotify.Hooks{
		Published: a.Metrics.Published, Failed: a.Metrics.PublishError, Depth: a.Metrics.OutboxDepth, Step: step,
	}, a.Log)
	return nil
}

// refreshHosts reads the node -> compute host map again.
func (a *App) refreshHosts(ctx context.Context) error {
	f, err := nodeHosts(a.Store)(ctx)
	if err != nil {
		return err
	}
	a.notify.hostOf.Store(&f)
	return nil
}

// publish drains the outbox until ctx ends (no-op without notifications).
func (a *App) publish(ctx context.Context) {
	if a.notify.publisher == nil {
		return
	}
	go func() {
		t := time.NewTicker(hostsRefresh)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := a.refreshHosts(ctx); err != nil && ctx.Err() == nil {
					a.Log.Warn("notifications: compute hosts", "err", err)
				}
			}
		}
	}()
	a.notify.publisher.Run(ctx)
}
