package reconciler

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// The work queue. Besides the ticks (the view and the resync: one bulk
// list feeds every server, and the cheap pass sees every delete and
// deadline each interval), each server can have a work item: a time to
// look at it again. Workers take the items that are due, read the server
// and its node as they are now, and carry it as far as it goes. An item is
// due at once when a step left the server more to do (its next step does
// not wait for a tick), when Ironic notified a change on its node (Wake,
// WakeNode) and after the loop ran out of budget for it.
//
// A server is processed by one goroutine at a time, whichever path took it
// (busy); the workers of ticks and items share Workers slots (slots). Under
// Run a tick does not wait past its budget for a step still in flight: a
// slow Ironic call holds its own server and slot only, and the next tick
// passes that server by.
type queue struct {
	mu     sync.Mutex
	due    map[string]time.Time // server -> look again at
	busy   map[string]bool      // server -> being processed
	byNode map[string]string    // node -> server holding it (the loaded set)
	signal chan struct{}
	slots  chan struct{}
}

func newQueue(workers int) *queue {
	return &queue{due: map[string]time.Time{}, busy: map[string]bool{}, byNode: map[string]string{},
		signal: make(chan struct{}, 1), slots: make(chan struct{}, workers)}
}

func (q *queue) poke() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// at makes id due at t, unless it is due earlier already.
func (q *queue) at(id string, t time.Time) {
	q.mu.Lock()
	if cur, ok := q.due[id]; !ok || t.Before(cur) {
		q.due[id] = t
	}
	q.mu.Unlock()
	q.poke()
}

// acquire marks id busy; false if it already is.
func (q *queue) acquire(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy[id] {
		return false
	}
	q.busy[id] = true
	return true
}

func (q *queue) release(id string) {
	q.mu.Lock()
	delete(q.busy, id)
	_, waiting := q.due[id]
	q.mu.Unlock()
	if waiting {
		q.poke()
	}
}

// take removes and returns the items due at now that are not busy, the
// earliest first (ties by id), and when the next one falls due.
func (q *queue) take(now time.Time, limit int) ([]string, time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var ready []string
	var next time.Time
	for id, t := range q.due {
		switch {
		case q.busy[id]:
		case !t.After(now):
			ready = append(ready, id)
		case next.IsZero() || t.Before(next):
			next = t
		}
	}
	slices.SortFunc(ready, func(a, b string) int {
		if c := q.due[a].Compare(q.due[b]); c != 0 {
			return c
		}
		if a < b {
			return -1
		}
		return 1
	})
	if len(ready) > limit {
		ready = ready[:limit]
	}
	for _, id := range ready {
		delete(q.due, id)
	}
	return ready, next
}

// noteNodes refreshes the node → server map from the servers a full tick
// loaded (those needing work): servers that left it drop out, and a node
// learnt from a save since is kept.
func (q *queue) noteNodes(servers []*lifecycle.Server) {
	in := make(map[string]bool, len(servers))
	for _, s := range servers {
		in[s.ID] = true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	m := make(map[string]string, len(servers))
	for node, id := range q.byNode {
		if in[id] {
			m[node] = id
		}
	}
	for _, s := range servers {
		if s.NodeID != "" {
			m[s.NodeID] = s.ID
		}
	}
	q.byNode = m
}

// noteSaved follows a server's node across a save.
func (q *queue) noteSaved(before, next *lifecycle.Server) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if before.NodeID != "" && before.NodeID != next.NodeID && q.byNode[before.NodeID] == before.ID {
		delete(q.byNode, before.NodeID)
	}
	if next.NodeID != "" {
		q.byNode[next.NodeID] = next.ID
	}
}

// dispatch runs the expensive steps of servers, in order, on the workers
// until the budget's deadline; it returns the servers it did not reach,
// and those it passed by as busy. A
// server busy elsewhere (its work item, or a step left in flight by the
// last tick) is passed by: it is being looked at. Under Run, dispatch
// returns at the deadline even if steps are still in flight: they go on
// (up to StepsPerTick, then as a work item due at once), holding their
// server and slot. Otherwise it waits for them, and they stop at the
// first step boundary past the deadline.
func (r *Reconciler) dispatch(ctx context.Context, servers []*lifecycle.Server, b *bulk, deadline time.Time) (rest, busy []*lifecycle.Server) {
	var wg sync.WaitGroup
	async := r.async.Load()
	var over <-chan time.Time // the budget's end, for a wait under Run
	if async {
		t := time.NewTimer(max(deadline.Sub(r.clock.Now()), 0) + r.cfg.Interval/10)
		defer t.Stop()
		over = t.C
	}
	sent := 0
send:
	for _, s := range servers {
		if ctx.Err() != nil || r.overBudget(deadline) {
			break
		}
		if !r.q.acquire(s.ID) {
			sent++
			busy = append(busy, s)
			continue
		}
		select {
		case r.q.slots <- struct{}{}:
		case <-over:
			r.q.release(s.ID)
			over = nil // spent: dispatch returns now
			break send
		case <-ctx.Done():
			r.q.release(s.ID)
			break send
		}
		sent++
		wg.Add(1)
		r.inflight.Add(1)
		go func() {
			defer r.inflight.Done()
			defer wg.Done()
			defer func() { <-r.q.slots }()
			defer r.q.release(s.ID)
			if !async {
				r.process(ctx, s, b, deadline)
				return
			}
			// Under Run a started server is not stopped at the budget's
			// end (the tick does not wait for it): it goes on to its
			// next step at once.
			if r.process(ctx, s, b, time.Time{}) {
				r.Wake(s.ID)
			}
		}()
	}
	if !async {
		wg.Wait()
		return servers[sent:], busy
	}
	if over == nil {
		return servers[sent:], busy
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-over:
	case <-ctx.Done():
	}
	return servers[sent:], busy
}

// kickSpacing is the least time between two full ticks asked for by kicks:
// the fast interval, but at most the default fast interval while
// notifications are received (the fast interval may then be long).
func (r *Reconciler) kickSpacing() time.Duration {
	if r.notified.Load() {
		return min(r.cfg.FastInterval, DefaultFastInterval)
	}
	return r.cfg.FastInterval
}

// Wake makes the server's item due now. Never blocks; a server this
// replica does not hold (or that needs no work) is dropped when its item
// is taken.
func (r *Reconciler) Wake(serverID string) {
	r.q.at(serverID, r.clock.Now())
}

// WakeNode wakes the server that holds node, if this replica loaded one
// (a notification's hint: no store or Ironic call). It reports whether
// one was woken.
func (r *Reconciler) WakeNode(node string) bool {
	r.q.mu.Lock()
	id, ok := r.q.byNode[node]
	r.q.mu.Unlock()
	if ok {
		r.Wake(id)
	}
	return ok
}

// Pending is the number of work items waiting (due or not).
func (r *Reconciler) Pending() int {
	r.q.mu.Lock()
	defer r.q.mu.Unlock()
	return len(r.q.due)
}

// runQueue takes due items until ctx ends.
func (r *Reconciler) runQueue(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		ids, next := r.q.take(r.clock.Now(), cap(r.q.slots))
		for _, id := range ids {
			select {
			case r.q.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			if !r.q.acquire(id) {
				<-r.q.slots
				r.q.at(id, r.clock.Now()) // a tick took it meanwhile: after it
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-r.q.slots }()
				defer r.q.release(id)
				r.work(ctx, id)
			}()
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(r.clock.Now()), 0)
		}
		if len(ids) > 0 {
			wait = 0 // more may be due: look again at once
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-r.q.signal:
		case <-t.C:
		}
	}
}

// work is one item: the server as stored now, its node as Ironic shows it
// now (an empty view makes process fetch it: a notification is a hint).
func (r *Reconciler) work(ctx context.Context, id string) {
	ctx = r.readEpochs(ctx) // before the read: a step acts only under these (fenced.go)
	s, err := r.store.GetServer(ctx, id)
	if err != nil {
		return // deleted, or the store failed: the next tick looks again
	}
	if len(r.owned([]*lifecycle.Server{s})) == 0 || !s.NeedsWork() {
		return
	}
	if r.process(ctx, s, &bulk{up: true}, time.Time{}) {
		r.q.at(id, r.clock.Now())
	}
}

// SetNotified says whether Ironic's notifications are being received (the
// consumer is connected): the waits on Ironic are then looked at by
// notification and resync instead of fast ticks (Cadence). A change asks
// for a full tick at once: after a gap in the notifications it is the
// resync, and when they stop it restarts the fast ticks.
func (r *Reconciler) SetNotified(on bool) {
	r.notified.Store(on)
	r.Kick()
}
