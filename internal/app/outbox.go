package app

import (
	"context"
	"fmt"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/novanotify"
	"github.com/ingot-dev/ingot/internal/store"
)

// setupOutbox makes the store record Nova's notifications in its outbox
// and builds their publisher, when notifications.url is set
// (docs/DESIGN.md §2.13). It runs before anything writes a server.
func (a *App) setupOutbox(cfg config.Config, step func(string)) error {
	if !cfg.Notifications.Enabled() {
		return nil
	}
	ob, ok := a.Store.(store.Outbox)
	if !ok {
		return fmt.Errorf("notifications: the %T store keeps no outbox", a.Store)
	}
	names := map[string]string{}
	for _, f := range cfg.Catalog().Flavors {
		names[f.ID] = f.Name
	}
	b := novanotify.Builder{Host: cfg.Host, PublisherID: cfg.Notifications.PublisherID, Now: a.clock.Now,
		FlavorName: func(id string) string { return names[id] }}
	ob.SetNotifier(b.Notices)
	a.publisher = novanotify.NewPublisher(cfg.Notifications.Publisher(cfg.Host), ob, novanotify.Hooks{
		Published: a.Metrics.Published, Failed: a.Metrics.PublishError, Depth: a.Metrics.OutboxDepth, Step: step,
	}, a.Log)
	return nil
}

// publish drains the outbox until ctx ends (no-op without notifications).
func (a *App) publish(ctx context.Context) {
	if a.publisher != nil {
		a.publisher.Run(ctx)
	}
}
