package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/store/backend"
)

// loops are what acts on the servers: the reconciler and the lease keeper
// (and the notifications' publisher, which stops with the reconciler),
// started together and stopped together when the database's ownership is
// lost (a PostgreSQL restart ends the owner's session), so that nothing
// acts while another process of this host could own the database.
type loops struct {
	stopRec, stopLeases context.CancelFunc
	recDone, leaseDone  chan struct{}
	pubDone             chan struct{}
}

func (a *App) startLoops(ctx context.Context) *loops {
	recCtx, stopRec := context.WithCancel(ctx)
	// The keeper outlives ctx until the reconciler's last step is done, so
	// that step runs under a held lease (Serve's shutdown).
	leaseCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	l := &loops{stopRec: stopRec, stopLeases: stopLeases, recDone: make(chan struct{}), leaseDone: make(chan struct{}),
		pubDone: make(chan struct{})}
	go func() {
		defer close(l.recDone)
		if err := a.Reconciler.Run(recCtx); err != nil && !errors.Is(err, context.Canceled) {
			a.Log.Error("reconciler stopped", "err", err)
		}
	}()
	go func() { defer close(l.leaseDone); a.Leases.Run(leaseCtx) }()
	go func() { defer close(l.pubDone); a.publish(recCtx) }()
	return l
}

// stopActing stops the reconciler (its step under way ends first).
func (l *loops) stopActing() { l.stopRec() }

// stop stops both and waits for them. Idempotent.
func (l *loops) stop() {
	l.stopRec()
	<-l.recDone
	<-l.pubDone
	l.stopLeases()
	<-l.leaseDone
}

// reownBackoff bounds the wait between two attempts to take the ownership
// back while the database is away.
const reownBackoff = 2 * time.Second

// reown takes the database's ownership again after its session was lost,
// trying until it is ours (nil), ctx ends (nil: Serve then shuts down), or
// another process holds it (an error: that one is this host now, so this
// one must stop).
func (a *App) reown(ctx context.Context, listen string) error {
	db := config.RedactDSN(a.Config.Database)
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		o, err := backend.Acquire(ctx, a.Config.Database, a.Config.Host)
		switch {
		case err == nil:
			_ = a.owner.Release() // the lost session's connection
			a.owner = o
			if err := o.SetListen(ctx, listen); err != nil {
				a.Log.Warn("database lock record", "err", err)
			}
			a.Log.Info("database ownership taken again; acting resumes", "database", db, "attempts", attempt)
			return nil
		case errors.Is(err, backend.ErrHeld):
			return fmt.Errorf("database %s: ownership lost and taken by another ingot of host %s: %w; stopping", db, a.Config.Host, err)
		case ctx.Err() != nil:
			return nil
		}
		if attempt == 1 || attempt%10 == 0 {
			a.Log.Warn("database ownership not yet taken again", "database", db, "attempts", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, reownBackoff)
	}
}
