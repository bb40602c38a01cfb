package app

import (
	"context"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicnotify"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// newNotifications builds the consumer of Ironic's notifications when
// ironic.notifications is on (nil otherwise). Each node event wakes the
// work item of the server on that node, if this replica loaded it (the
// holder of another shard got its own copy); the decision still reads the
// node from Ironic. While the consumer is connected the reconciler drops
// its fast ticks (reconciler.SetNotified); a reconnection after a gap is a
// resync, and a disconnection brings the fast ticks back.
func (a *App) newNotifications() (*ironicnotify.Consumer, error) {
	n := a.Config.Ironic.Notifications
	if !n.Enabled() {
		return nil, nil
	}
	a.Metrics.EnableNotifications()
	a.Metrics.NotificationsConnected(false)
	rec := a.Reconciler
	c, err := ironicnotify.New(n.Consumer(), func(_ context.Context, e ironicnotify.Event) {
		var shown *ironic.Node
		if e.NodeEvent() {
			shown = &ironic.Node{UUID: e.NodeUUID, InstanceUUID: e.InstanceUUID, ProvisionState: e.ProvisionState,
				TargetProvisionState: e.TargetProvisionState, PowerState: e.PowerState,
				TargetPowerState: e.TargetPowerState, Maintenance: e.Maintenance}
		}
		change := reconciler.ChangeState
		if e.Type == ironicnotify.TypeNodeUpdate {
			change = reconciler.ChangeFields
		}
		a.Metrics.NotificationEvent(e.NodeUUID != "" && rec.Notified(e.NodeUUID, shown, change))
	}, a.Log, ironicnotify.Hooks{
		Delivered: func(_ ironicnotify.Event, lag time.Duration) { a.Metrics.NotificationLag(lag) },
		Connected: func(bool) {
			a.Metrics.NotificationsConnected(true)
			rec.SetNotified(true) // a full tick at once: the resync after a gap
		},
		Disconnected: func(error) {
			a.Metrics.NotificationsConnected(false)
			rec.SetNotified(false)
		},
		Dropped: func(error) { a.Metrics.NotificationDropped() },
	})
	if err != nil {
		return nil, fmt.Errorf("ironic.notifications: %w", err)
	}
	return c, nil
}

// RunNotifications consumes Ironic's notifications until ctx ends (at once
// when they are off). Serve runs it; so may a caller that runs the
// reconciler itself.
func (a *App) RunNotifications(ctx context.Context) {
	if a.Notifications != nil {
		_ = a.Notifications.Run(ctx)
	}
}
