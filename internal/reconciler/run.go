package reconciler

import (
	"context"
	"time"
)

// Kick asks for a tick as soon as possible (after an API write). Never blocks.
func (r *Reconciler) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run ticks until ctx ends: a full tick every Interval and at once after a
// Kick, fast ticks between them at the Cadence while servers wait on Ironic.
func (r *Reconciler) Run(ctx context.Context) error {
	r.async.Store(true)
	defer r.async.Store(false)
	qctx, stop := context.WithCancel(ctx)
	queued := make(chan struct{})
	go func() { defer close(queued); r.runQueue(qctx) }()
	// Run returns only once every step it started has ended (Serve then
	// releases the leases and closes the store).
	defer func() { stop(); <-queued; r.inflight.Wait() }()
	if w, ok := r.sched.(warmer); ok {
		w.Warm(ctx)
	}
	full := true
	var lastFull time.Time
	var fastTook time.Duration // length of the last fast tick
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		if full {
			lastFull = time.Now()
			if _, err := r.Tick(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("tick failed", "err", err)
			}
		} else {
			began := time.Now()
			if _, err := r.FastTick(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("fast tick failed", "err", err)
			}
			fastTook = time.Since(began)
		}
		// A full tick takes the place of the fast tick that falls due with it.
		// Under a backlog full ticks follow each other at once (each within
		// its budget, so every server is still looked at each interval),
		// with one fast tick between them for the servers waiting on Ironic.
		untilFull := r.cfg.Interval - time.Since(lastFull)
		wasFull := full
		if r.backlogged() {
			untilFull = 0
		}
		// A fast tick that takes long (thousands of nodes waited on) is
		// spaced by twice its length: the loop spends at most a third of its
		// time looking at waits.
		wait := min(max(r.Cadence(), 2*fastTook), untilFull)
		full = wait >= untilFull
		if full && wasFull && untilFull == 0 && r.watching() {
			full, wait = false, 0
		}
		t.Reset(max(wait, 0))
		at := time.Now().Add(wait) // when t fires
		kicked := false
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				waiting = false
			case <-r.waits:
				// A work item left a server waiting on Ironic: its first
				// fast look is due at the cadence from now, not at the
				// next full tick (a kick's full tick is kept).
				d := max(r.Cadence(), 2*fastTook)
				if kicked || !time.Now().Add(d).Before(at) || d >= r.cfg.Interval-time.Since(lastFull) {
					continue
				}
				full, at = false, time.Now().Add(d)
				t.Reset(d)
			case <-r.kick:
				// Under a backlog (the last tick carried work) the new
				// request joins the rotation at the next full tick, due
				// within the interval anyway; a tick per kick would only
				// repeat the whole tick's load for each create of a burst.
				// Otherwise kicks coalesce to one full tick per fast
				// interval at most.
				if r.backlogged() {
					continue
				}
				full, kicked = true, true
				if d := r.kickSpacing() - time.Since(lastFull); d > 0 {
					t.Reset(d)
					at = time.Now().Add(d)
					continue
				}
				waiting = false
			}
		}
	}
}

// watching reports whether some server waits on Ironic.
func (r *Reconciler) watching() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.watch) > 0
}

// backlogged reports whether the last full tick carried servers to the next.
func (r *Reconciler) backlogged() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.carried > 0
}
