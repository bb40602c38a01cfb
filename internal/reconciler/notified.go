package reconciler

import (
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/nodeview"
)

// DefaultNotifyDebounce is NotifyDebounce's default: the least time
// between two wakes of one server by notifications (Ironic sends a
// transition's start and end, or an update's, within tens of
// milliseconds).
const DefaultNotifyDebounce = 20 * time.Millisecond

// kickSpacing is the least time between two full ticks asked for by kicks:
// the fast interval, but at most the default fast interval while
// notifications are received (the fast interval may then be long).
func (r *Reconciler) kickSpacing() time.Duration {
	if r.notified.Load() {
		return min(r.cfg.FastInterval, DefaultFastInterval)
	}
	return r.cfg.FastInterval
}

// Change is what a notification reports of a node.
type Change int

const (
	// ChangeState: a provision, power or maintenance change, a delete, or
	// anything ingot has no name for.
	ChangeState Change = iota
	// ChangeFields: an update of the node's fields (a PATCH), which moves
	// none of its states; ingot's own PATCHes (the reservation, the
	// deploy's instance_info) are echoed so.
	ChangeFields
)

// Notified takes a notification about node (a hint: no store or Ironic
// call). It wakes the server holding it, if this replica loaded one, and
// reports whether it did. The step reads the node from Ironic; the
// payload (shown: the node's fields as the notification has them, nil
// when it has none, as for a port's) only spares a look that would find
// nothing to do: when it shows the node as the server's last step left
// it (a change after that look is notified in turn), a transition still
// under way (a target state, out of maintenance: its end, success or
// failure is notified; a lost one is seen by the resync), or a change of
// fields on a node the server holds, out of maintenance (what a PATCH can
// change that a decision reads is the holder and the maintenance flag; a
// state it shows was notified by its own transition). The first wake of
// a quiet server runs at once; those within NotifyDebounce of it make one
// more step at its end (wakeSlot): a transition's start is spared by its
// payload, so its end is what wakes, and waiting for company would only
// delay it.
func (r *Reconciler) Notified(node string, shown *ironic.Node, change Change) bool {
	r.q.mu.Lock()
	id, ok := r.q.byNode[node]
	known := false
	if ok && shown != nil {
		last, seen := r.q.seen[id]
		v := nodeview.Of(*shown, id)
		known = (seen && sameNode(v, last)) || ((v.Settling || v.PowerSettling) && !v.Maintenance) ||
			(change == ChangeFields && v.Holder == lifecycle.HeldByUs && !v.Maintenance)
	}
	r.q.mu.Unlock()
	woke := ok && !known
	if r.cfg.TrustPayload && ok && shown != nil {
		r.q.mu.Lock()
		r.q.payload[id], woke = *shown, true
		r.q.mu.Unlock()
	}
	if woke {
		r.q.at(id, r.q.wakeSlot(id, r.clock.Now(), r.cfg.NotifyDebounce))
	}
	r.log.Debug("notification", logNode, node, logServer, id, "woken", woke)
	return woke
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

// wakeSlot is when a notification at now wakes id: at once when its last
// wake was at least d ago, else d after that one (a slot still to come is
// shared): a quiet server's notification costs no wait, a noisy one's
// cost one look per d. A slot moves on by d only once the one
// before it has passed, so a stream of notifications never pushes the
// wake into the future.
func (q *queue) wakeSlot(id string, now time.Time, d time.Duration) time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	last, ok := q.woken[id]
	switch {
	case ok && last.After(now): // still to come (one at now may have run)
		return last
	case ok && now.Sub(last) < d:
		last = last.Add(d)
	default:
		last = now
	}
	q.woken[id] = last
	return last
}
