package reconciler

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// A tick never runs longer than its interval. It splits the work in two:
//
//   - every server gets the cheap look each tick: Decide on what is already
//     known (the record and the bulk view), and the pure bookkeeping writes
//     it asks for — a delete accepted, a deadline passed — batched into one
//     transaction when the store can;
//   - the expensive steps (anything that calls Ironic or another adapter)
//     run only while the tick's budget lasts, in an order that starts where
//     the previous tick stopped, so under a burst every server gets its turn
//     within ⌈servers/served per tick⌉ ticks and none starves.
//
// A server already being processed when the budget runs out stops at its
// next step boundary: each step is recorded before the next, so stopping
// there is always safe (record-before-act holds across ticks).

// DefaultBudgetShare is the part of the interval a tick may spend on
// expensive steps: the rest is headroom for the cheap pass, the outcome
// writes of the steps still in flight, and the scheduler's jitter.
const DefaultBudgetShare = 0.8

// budget is how long the expensive part of a tick with this interval may
// take. A step already running when it ends finishes (it cannot be cut in
// the middle of an Ironic call), so the budget is shortened by the longest
// step lately seen, down to half: on a slow machine or a slow Ironic the
// tick still ends inside its interval.
func (r *Reconciler) budget(interval time.Duration) time.Duration {
	b := time.Duration(float64(interval) * DefaultBudgetShare)
	if r.cfg.TickBudget > 0 {
		b = min(r.cfg.TickBudget, interval)
	}
	return b - min(time.Duration(r.slowStep.Load()), b/2)
}

// stepsDeadline is when the expensive steps of a tick that began at start
// must stop: the budget from start, but never less than half a budget from
// now — a view of Ironic that took the whole budget (a slow link) still
// leaves time for steps, so the servers progress on any Ironic, one
// rotation at a time, instead of every tick spending itself on the view.
func (r *Reconciler) stepsDeadline(start time.Time, interval time.Duration) time.Time {
	b := r.budget(interval)
	return later(start.Add(b), r.clock.Now().Add(b/2))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// timeStep notes how long one step took, for budget.
func (r *Reconciler) timeStep(d time.Duration) {
	for {
		cur := r.slowStep.Load()
		if int64(d) <= cur || r.slowStep.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

// decaySteps halves the longest step seen, once a tick: a slow moment
// shortens the budget for a few ticks, not for ever.
func (r *Reconciler) decaySteps() {
	r.slowStep.Store(r.slowStep.Load() / 2)
}

// rotate orders servers by id starting at the first id ≥ cursor, wrapping
// around: the fair rotation of the expensive steps. servers is sorted in place.
func rotate(servers []*lifecycle.Server, cursor string) []*lifecycle.Server {
	slices.SortFunc(servers, func(a, b *lifecycle.Server) int { return strings.Compare(a.ID, b.ID) })
	i, _ := slices.BinarySearchFunc(servers, cursor, func(s *lifecycle.Server, c string) int { return strings.Compare(s.ID, c) })
	if i == 0 || i == len(servers) {
		return servers
	}
	return append(slices.Clone(servers[i:]), servers[:i]...)
}

// overBudget reports whether the tick's budget is spent.
func (r *Reconciler) overBudget(deadline time.Time) bool {
	return !deadline.IsZero() && !r.clock.Now().Before(deadline)
}

// glanceAll is the cheap pass over the servers the budget did not reach:
// Decide on the record and the bulk view (no Ironic call, no fetch of a
// node the bulk view lacks), and each bookkeeping write it asks for. Rounds
// repeat while some server got a write (a delete accepted may at once be
// followed by another bookkeeping step), up to StepsPerTick; anything else
// Decide asks for is carried to a later tick.
func (r *Reconciler) glanceAll(ctx context.Context, servers []*lifecycle.Server, b *bulk) {
	cur := servers
	for range r.cfg.StepsPerTick {
		var batch []pendingSave
		for _, s := range cur {
			v, _ := r.nodeView(ctx, s, b)
			in := lifecycle.Input{Server: s, Node: v, Now: r.clock.Now(), IronicDown: r.isDown(s.ID) || !b.up}
			if a := r.cfg.Decide(in, r.cfg.Lifecycle); a.Kind == lifecycle.KindSave {
				batch = append(batch, pendingSave{before: s, next: a.Next, events: a.Events, why: a.Why})
			}
		}
		if len(batch) == 0 || ctx.Err() != nil {
			return
		}
		cur = r.saveBatch(ctx, batch)
	}
}

// pendingSave is one bookkeeping write of the cheap pass.
type pendingSave struct {
	before, next *lifecycle.Server
	events       []lifecycle.Event
	why          string
}

// saveBatch writes the batch, in one transaction when the store is a
// store.BatchSaver, and returns the servers as they now stand (the saved
// record, or the fresh one after a conflict) for the next round.
func (r *Reconciler) saveBatch(ctx context.Context, batch []pendingSave) []*lifecycle.Server {
	errs := make([]error, len(batch))
	// Under leases every write carries its own shard's fence (a batch spans
	// several shards), checked in the write's transaction.
	fences := make([]context.Context, len(batch))
	for i, p := range batch {
		fctx, ok := r.fenced(ctx, p.next.ID)
		if !ok || !r.leaseHeld(fctx) {
			errs[i] = store.ErrFenced
		}
		fences[i] = fctx
	}
	if bs, ok := r.store.(store.BatchSaver); ok && len(batch) > 1 {
		var saves []store.Save
		var at []int
		for i, p := range batch {
			if errs[i] != nil {
				continue
			}
			sv := store.Save{Server: p.next, Events: p.events}
			if f, ok := store.FenceOf(fences[i]); ok {
				sv.Fence = &f
			}
			saves, at = append(saves, sv), append(at, i)
		}
		for j, err := range bs.SaveServers(ctx, saves) {
			errs[at[j]] = err
		}
	} else {
		for i, p := range batch {
			if errs[i] == nil {
				errs[i] = r.store.SaveServer(fences[i], p.next, p.events...)
			}
		}
	}
	for i := range batch {
		r.fencedOut(fences[i], errs[i])
	}
	var out []*lifecycle.Server
	for i, p := range batch {
		next, err := r.afterSave(ctx, p.before, p.next, errs[i])
		switch {
		case err == nil:
			r.log.Info("transition", logServer, p.next.ID, logPhase, next.Phase, logNode, next.NodeID, "why", p.why)
			out = append(out, next)
		case errors.Is(err, errStale) && next != nil:
			out = append(out, next)
		default:
			r.log.Warn("save failed", logServer, p.before.ID, logPhase, p.before.Phase, "err", err)
		}
	}
	return out
}
