package reconciler

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/nodeview"
	"github.com/ingot-dev/ingot/internal/store"
)

// The adaptive cadence. While some server waits on Ironic (a deploy, a
// teardown, a power change… it asked for), the loop ticks at the fast
// interval so the user sees the outcome soon after Ironic shows it; when the
// fleet is stable it ticks at the poll interval. Between two full ticks (one
// every poll interval: every server, one bulk list) a fast tick looks only
// at the nodes being waited on: one filtered list per provision state that
// two or more of them share (`?provision_state=deploying`), a single GET for
// the others, and a GET for a node that left its list. It loads and
// processes only the servers whose node changed (or whose deadline passed),
// so it costs a few calls and no store scan.

// DefaultFastInterval is fast_poll_interval's default. Half a second puts
// the median from Ironic's `active` to the server's ACTIVE near a quarter
// of a second (half the interval, plus the step), inside the 0.5 s target
// with room for a slow store write; 0.25 s would halve that again at twice
// the calls and CPU for a gain no user sees.
const DefaultFastInterval = 500 * time.Millisecond

// novaPoll is Nova's Ironic driver's poll period while it waits for a
// deploy: one GET per building instance every 2 s. loadShare is the part
// of that rate the fast ticks may use once two or more servers wait.
const (
	novaPoll  = 2 * time.Second
	loadShare = 0.9
)

// NextInterval is the pause before the next tick, a pure function of how
// many servers wait on Ironic and how many calls a fast tick takes to look
// at them. Nothing waiting: the poll interval. One wait: the fast
// interval. From two on: the fast interval, lengthened so the polling stays
// below loadShare of Nova's rate for the same waits (calls/interval ≤
// loadShare·waiting/2 s), and never longer than the poll interval.
func NextInterval(waiting, calls int, fast, poll time.Duration) time.Duration {
	switch {
	case waiting == 0:
		return poll
	case waiting == 1:
		return fast
	}
	rate := loadShare * float64(waiting) / novaPoll.Seconds() // calls per second allowed
	d := time.Duration(float64(max(calls, 1)) / rate * float64(time.Second))
	return min(max(d, fast), poll)
}

// watched is what the last look showed of a waiting server's node.
type watched struct {
	node     string
	view     lifecycle.NodeView
	deadline time.Time
	// state is the provision state to list the node in: the one it was
	// seen in, or, when that was not a waiting state (the view predates
	// the call just made), the one the call leads to.
	state string
}

type watchSet map[string]watched

// saw records the view process ended with: the server is watched while it
// waits on Ironic.
func (r *Reconciler) saw(s *lifecycle.Server, v lifecycle.NodeView, observed bool) {
	r.q.look(s.ID, v, observed)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.touched != nil {
		r.touched[s.ID] = true
	}
	if !lifecycle.WaitsOnIronic(s) {
		delete(r.watch, s.ID)
		if s.NeedsWork() && r.notified.Load() && r.async.Load() {
			// No notification will come for it (a retry, a wait for a
			// node): its item is due again after the poll interval, as
			// the full ticks look at it, but no later than 2 s however
			// long the poll interval is made while notifications flow.
			r.q.at(s.ID, r.clock.Now().Add(min(r.cfg.Interval, novaPoll)))
		}
		return
	}
	if !observed {
		v = lifecycle.NodeView{}
	}
	if _, ok := r.watch[s.ID]; !ok && r.touched == nil {
		// Outside a full tick (which settles the cadence after it): Run
		// may have planned its next tick before this wait began.
		select {
		case r.waits <- struct{}{}:
		default:
		}
	}
	r.watch[s.ID] = r.newWatched(s, v)
}

func (r *Reconciler) newWatched(s *lifecycle.Server, v lifecycle.NodeView) watched {
	return watched{node: s.NodeID, view: v, deadline: lifecycle.Deadline(s, r.cfg.Lifecycle), state: nodeview.ListState(s, v)}
}

// watchFrom settles the watch set after a full tick over servers: servers
// no longer needing work leave it, and waiting ones process did not reach
// join it unobserved (a fast tick fetches them).
func (r *Reconciler) watchFrom(servers []*lifecycle.Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := make(map[string]bool, len(servers))
	for _, s := range servers {
		in[s.ID] = true
		if _, ok := r.watch[s.ID]; !ok && !r.touched[s.ID] && lifecycle.WaitsOnIronic(s) {
			r.watch[s.ID] = r.newWatched(s, lifecycle.NodeView{})
		}
	}
	for id := range r.watch {
		if !in[id] {
			delete(r.watch, id)
		}
	}
	r.touched = nil
}

// plan groups the watch set into the fast tick's calls: the filtered lists
// (state → servers) and the single GETs.
func plan(w watchSet) (lists map[string][]string, singles []string) {
	by := map[string][]string{}
	for id, e := range w {
		if e.state != "" {
			by[e.state] = append(by[e.state], id)
		} else {
			singles = append(singles, id)
		}
	}
	lists = map[string][]string{}
	for st, ids := range by {
		if len(ids) >= 2 {
			lists[st] = ids
		} else {
			singles = append(singles, ids...)
		}
	}
	slices.Sort(singles)
	return lists, singles
}

// Cadence returns the pause before the next tick, from the watch set.
// While Ironic's notifications are received (SetNotified) there are no
// fast ticks: a notification wakes the server's item at once, and the
// full tick every poll interval is the resync that catches a lost one.
func (r *Reconciler) Cadence() time.Duration {
	if r.notified.Load() {
		return r.cfg.Interval
	}
	r.mu.Lock()
	lists, singles := plan(r.watch)
	n := len(r.watch)
	r.mu.Unlock()
	return NextInterval(n, len(lists)+len(singles), r.cfg.FastInterval, r.cfg.Interval)
}

// FastTick looks at the nodes being waited on and processes the servers
// whose node changed or whose deadline passed; see the top of this file.
// Safe to call between Ticks, never concurrently with one.
func (r *Reconciler) FastTick(ctx context.Context) (TickStats, error) {
	start := r.clock.Now()
	r.mu.Lock()
	w := make(watchSet, len(r.watch))
	for id, e := range r.watch {
		w[id] = e
	}
	r.mu.Unlock()
	if len(w) == 0 {
		return TickStats{IronicUp: true}, nil
	}
	deadline := start.Add(r.budget(r.cfg.FastInterval))
	ctx = r.readEpochs(ctx) // before the look at Ironic and the load (fenced.go)
	acts := r.q.mark()
	nodes, changed := r.observe(ctx, w, deadline)
	servers := r.loadChanged(ctx, changed)
	stats := TickStats{Servers: len(servers), IronicUp: true}
	if len(servers) > 0 {
		rest, _ := r.dispatch(ctx, servers, &bulk{up: true, nodes: nodes, acts: acts}, later(deadline, r.stepsDeadline(start, r.cfg.FastInterval)))
		stats.Carried = len(rest)
	}
	if r.hooks.FastTick != nil {
		r.hooks.FastTick(r.clock.Now().Sub(start), stats.Servers)
	}
	return stats, ctx.Err()
}

// loadChanged reads the servers a fast tick processes, in one query when
// the store can; those that need no more work leave the watch set.
func (r *Reconciler) loadChanged(ctx context.Context, ids []string) []*lifecycle.Server {
	var got []*lifecycle.Server
	if wl, ok := r.store.(store.WorkLister); ok {
		var err error
		if got, err = wl.ServersByID(ctx, ids); err != nil {
			r.log.Warn("fast tick load", "err", err)
			return nil
		}
	} else {
		for _, id := range ids {
			if s, err := r.store.GetServer(ctx, id); err == nil {
				got = append(got, s)
			}
		}
	}
	found := make(map[string]bool, len(got))
	var out []*lifecycle.Server
	for _, s := range got {
		found[s.ID] = true
		if s.NeedsWork() {
			out = append(out, s)
		}
	}
	r.mu.Lock()
	for _, id := range ids {
		if !found[id] {
			delete(r.watch, id)
		}
	}
	for _, s := range got {
		if !s.NeedsWork() {
			delete(r.watch, s.ID)
		}
	}
	r.mu.Unlock()
	return out
}

// bulkPage is the bulk view's page size (ironic.DefaultPageSize).
const bulkPage = 1000

// observe makes the fast tick's Ironic calls. It returns the nodes it saw
// and the servers to process, in id order. When more nodes must be fetched
// alone than the bulk list has pages (many deploys ended at once), it takes
// the bulk list instead; single GETs stop at the deadline (the nodes not
// fetched count as unchanged and are looked at next time).
func (r *Reconciler) observe(ctx context.Context, w watchSet, deadline time.Time) (map[string]ironic.Node, []string) {
	lists, singles := plan(w)
	nodes := map[string]ironic.Node{}
	r.mu.Lock()
	bulkCalls := r.lastBulk/bulkPage + 1
	r.mu.Unlock()
	pages := 0
	for _, ids := range lists {
		pages += (len(ids) + bulkPage - 1) / bulkPage
	}
	if pages >= bulkCalls && pages > 1 {
		// The state lists would cost as many pages as the bulk view, which
		// also shows the nodes that left them: take the bulk view alone.
		for _, ids := range lists {
			singles = append(singles, ids...)
		}
		lists = nil
	}
	for st, ids := range lists {
		got, err := r.ironic.ListInState(ctx, st)
		if err != nil {
			r.log.Info("fast tick list failed", "state", st, "err", err)
			continue
		}
		for _, n := range got {
			nodes[n.UUID] = n
		}
		for _, id := range ids {
			if _, ok := nodes[w[id].node]; !ok {
				singles = append(singles, id) // it left the state: fetch it alone
			}
		}
	}
	if len(singles) > bulkCalls {
		if all, err := r.ironic.ListAssociated(ctx); err == nil {
			for _, n := range all {
				nodes[n.UUID] = n
			}
			left := singles[:0]
			for _, id := range singles {
				if _, ok := nodes[w[id].node]; !ok {
					left = append(left, id) // not associated any more: fetched alone
				}
			}
			singles = left
		}
	}
	now := r.clock.Now()
	var changed []string
	for _, id := range singles {
		if r.overBudget(deadline) {
			break
		}
		n, err := r.ironic.GetNode(ctx, w[id].node)
		switch {
		case err == nil:
			nodes[n.UUID] = n
		case errors.Is(err, ironic.ErrNotFound):
			changed = append(changed, id) // process fetches it and sees it gone
		}
	}
	for id, e := range w {
		n, ok := nodes[e.node]
		if (ok && nodeview.Of(n, id) != e.view) || now.After(e.deadline) {
			changed = append(changed, id)
		}
	}
	slices.Sort(changed)
	return nodes, slices.Compact(changed)
}
