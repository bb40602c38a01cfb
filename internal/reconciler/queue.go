package reconciler

import (
	"container/heap"
	"context"
	"math"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// The work queue. Besides the ticks (the view and the resync: one bulk
// list feeds every server, and the cheap pass sees every delete and
// deadline each interval), each server can have a work item: a time to
// look at it again. Workers take the items that are due, read the server
// and its node as they are now, and carry it as far as it goes. An item is
// due at once when a step left the server more to do (its next step does
// not wait for a tick), when the API wrote it or Ironic notified a change
// on its node (Wake, Notified) and after the loop ran out of budget for it.
//
// A server is processed by one goroutine at a time, whichever path took it
// (busy); the workers of ticks and items share Workers slots (slots). Under
// Run a tick does not wait past its budget for a step still in flight: a
// slow Ironic call holds its own server and slot only, and the next tick
// passes that server by.
type queue struct {
	mu  sync.Mutex
	due map[string]time.Time // server -> look again at
	// order holds (time, server) for every due time set, earliest first;
	// an entry whose time due no longer holds is skipped when reached.
	// take pops the due ones instead of sorting every item each time.
	order  dueHeap
	busy   map[string]bool   // server -> being processed
	byNode map[string]string // node -> server holding it (the loaded set)
	// seen is each server's node as its last step ended, when it was
	// looked at then (not after an action, whose effect is not seen yet):
	// a notification that shows the node so brings nothing new.
	seen map[string]lifecycle.NodeView
	// saved is the version of each server's last save by this replica: a
	// tick's copy older than it was loaded before a work item moved the
	// server on, and is read again before its step.
	saved map[string]int64
	// acts counts the actions this replica took on Ironic; acted is each
	// server's last one's number. A view listed before it (bulk.acts
	// lower) shows the node as it was before that action: a rebuild's
	// node still active looks done. Such a view is not used for it.
	acts  int64
	acted map[string]int64
	// inventory: servers told to retry once the scheduler has listed its
	// inventory (InventoryListed wakes them).
	inventory map[string]bool
	listings  int // InventoryListed calls so far
	// payload: the last notification's node per server (TrustPayload only).
	payload map[string]ironic.Node
	// woken is each server's latest notification wake slot (wakeSlot).
	woken  map[string]time.Time
	signal chan struct{}
	slots  chan struct{}
}

func newQueue(workers int) *queue {
	return &queue{due: map[string]time.Time{}, busy: map[string]bool{}, byNode: map[string]string{},
		seen: map[string]lifecycle.NodeView{}, saved: map[string]int64{}, acted: map[string]int64{}, inventory: map[string]bool{}, payload: map[string]ironic.Node{}, woken: map[string]time.Time{}, signal: make(chan struct{}, 1), slots: make(chan struct{}, workers)}
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
		heap.Push(&q.order, dueEntry{t, id})
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
	var ready, busy []string
	var next time.Time
	for q.order.Len() > 0 {
		e := q.order[0]
		if t, ok := q.due[e.id]; !ok || !t.Equal(e.at) {
			heap.Pop(&q.order) // superseded, or taken already
			continue
		}
		if e.at.After(now) || len(ready) == limit {
			next = e.at
			break
		}
		heap.Pop(&q.order)
		if q.busy[e.id] {
			busy = append(busy, e.id) // due, left for when it is free
			continue
		}
		ready = append(ready, e.id)
		delete(q.due, e.id)
	}
	if len(ready) == limit && !next.After(now) {
		next = now
	}
	for _, id := range busy {
		heap.Push(&q.order, dueEntry{q.due[id], id})
	}
	return ready, next
}

// dueEntry is one due time of a server.
type dueEntry struct {
	at time.Time
	id string
}

// dueHeap orders due times earliest first, ties by server id
// (container/heap's interface).
type dueHeap []dueEntry

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].id < h[j].id
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(dueEntry)) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
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
	for id := range q.seen {
		if !in[id] {
			delete(q.seen, id)
		}
	}
	for id := range q.saved {
		if !in[id] {
			delete(q.saved, id)
		}
	}
	for id := range q.acted {
		if !in[id] {
			delete(q.acted, id)
		}
	}
	for id := range q.woken {
		if !in[id] {
			delete(q.woken, id)
		}
	}
}

// stale reports whether s, as a tick loaded it, is older than this
// replica's last save of it.
func (q *queue) stale(s *lifecycle.Server) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.saved[s.ID] > s.Version
}

// mark is the number of the last action so far: a view listed from now
// on shows every action up to it.
func (q *queue) mark() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.acts
}

// acting numbers an action about to be taken for id.
func (q *queue) acting(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.acts++
	q.acted[id] = q.acts
}

// actedSince reports whether an action was taken for id after mark m.
func (q *queue) actedSince(id string, m int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.acted[id] > m
}

// listed is the count of inventory listings ended so far.
func (q *queue) listed() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.listings
}

// awaitInventory has id wait for the next listing; since is listed() as
// its pick began: a listing that ended meanwhile makes it due at once.
func (q *queue) awaitInventory(id string, since int, now time.Time) {
	q.mu.Lock()
	again := q.listings != since
	if !again {
		q.inventory[id] = true
	}
	q.mu.Unlock()
	if again {
		q.at(id, now)
	}
}

// look records how a step left the server's node: v when it was looked at
// as the step ended (observed), nothing known otherwise.
func (q *queue) look(id string, v lifecycle.NodeView, observed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if observed && v.Observed() {
		q.seen[id] = v
	} else {
		delete(q.seen, id)
	}
}

// sameNode reports whether two views agree on everything a notification's
// payload shows (it has no lock holder and may lack last_error).
func sameNode(a, b lifecycle.NodeView) bool {
	return a.State == b.State && a.Settling == b.Settling && a.Power == b.Power && a.PowerSettling == b.PowerSettling &&
		a.Maintenance == b.Maintenance && a.Holder == b.Holder && a.Other == b.Other
}

// noteSaved follows a server's node and version across a save.
func (q *queue) noteSaved(before, next *lifecycle.Server) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.saved[next.ID] = next.Version
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
			if r.q.stale(s) {
				// A work item moved it on since the load: its step starts
				// from the record as it is now, not from the old copy.
				fresh, err := r.store.GetServer(ctx, s.ID)
				if err != nil || !fresh.NeedsWork() {
					return
				}
				s = fresh
			}
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

// Wake makes the servers' items due now (under Run). Never blocks; a
// server this replica does not hold (or that needs no work) is dropped
// when its item is taken.
func (r *Reconciler) Wake(serverIDs ...string) {
	now := r.clock.Now()
	for _, id := range serverIDs {
		r.q.at(id, now)
	}
}

// InventoryListed is the scheduler's word that a listing of its inventory
// ended: the builds it told to retry are due at once (their next step does
// not wait for a tick; with none, nothing is). A loop without work items
// (Tick called alone) is asked for a full tick instead.
func (r *Reconciler) InventoryListed() {
	r.q.mu.Lock()
	r.q.listings++
	ids := make([]string, 0, len(r.q.inventory))
	for id := range r.q.inventory {
		ids = append(ids, id)
	}
	clear(r.q.inventory)
	r.q.mu.Unlock()
	if !r.async.Load() {
		r.Kick()
		return
	}
	r.Wake(ids...)
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
	b := &bulk{up: true}
	if r.cfg.TrustPayload {
		r.q.mu.Lock()
		if n, ok := r.q.payload[id]; ok && n.UUID == s.NodeID {
			b.nodes, b.acts = map[string]ironic.Node{n.UUID: n}, r.q.acts // the broken part: a hint taken for the node
		}
		delete(r.q.payload, id)
		r.q.mu.Unlock()
	}
	if r.process(ctx, s, b, time.Time{}) {
		r.q.at(id, r.clock.Now())
	}
}

// RunDue takes the work items due now, one after the other in the
// caller's goroutine, and returns how many it took: how the deterministic
// simulation drives them (it never calls Run). Not concurrently with
// Tick, FastTick or Run.
func (r *Reconciler) RunDue(ctx context.Context) int {
	ids, _ := r.q.take(r.clock.Now(), math.MaxInt)
	for _, id := range ids {
		if r.q.acquire(id) {
			r.work(ctx, id)
			r.q.release(id)
		}
	}
	return len(ids)
}
