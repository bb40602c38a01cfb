package dst

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// Ironic's notifications in the simulation. After every tick the bus
// notes each node whose state changed since it last looked (what Ironic
// would publish) and hands the replicas what it holds, each message
// delivered, duplicated, held back a few rounds, reordered or lost, by
// the seed; then every replica runs the work items that woke. The
// payload is the node as it was when noted: by delivery it may be stale.

// Delivery odds, in percent, of each message.
const (
	notifyLose    = 15
	notifyDup     = 15
	notifyDelay   = 20 // held back 1–3 rounds
	notifyShuffle = 30 // percent of rounds whose batch is reordered
)

type note struct {
	node   ironic.Node
	change reconciler.Change
	hold   int // rounds left before delivery
}

// notifyFields is the percent of the other changes also sent as a change
// of fields (a PATCH's update shows the node's states as they are then,
// which spares the wake: their own notification, or the resync, must do).
const notifyFields = 10

type bus struct {
	last    map[string]ironic.Node // node -> as last noted
	pending []note
}

func newBus() *bus { return &bus{last: map[string]ironic.Node{}} }

// deliver notes the changes, delivers what is due to every running
// replica and runs their due work items.
func (w *world) deliver() error {
	b := w.bus
	for _, n := range w.sim.Nodes() {
		cur := ironic.Node{UUID: n.UUID, InstanceUUID: n.InstanceUUID, ProvisionState: n.ProvisionState,
			TargetProvisionState: n.TargetProvisionState, PowerState: n.PowerState, Maintenance: n.Maintenance}
		prev, had := b.last[n.UUID]
		if had && sameNote(prev, cur) {
			continue
		}
		b.last[n.UUID] = cur
		// A change of the holder alone is a PATCH's (the reservation, its
		// undoing, an operator's); Ironic notifies it as an update.
		change := reconciler.ChangeState
		if (had && sameStates(prev, cur)) || w.rng.IntN(100) < notifyFields {
			change = reconciler.ChangeFields
		}
		m := note{node: cur, change: change}
		switch k := w.rng.IntN(100); {
		case k < notifyLose:
			w.trace.add("notification lost: " + w.nname(n.UUID) + " " + n.ProvisionState)
		case k < notifyLose+notifyDup:
			again := m
			again.hold = w.rng.IntN(3)
			b.pending = append(b.pending, m, again)
		case k < notifyLose+notifyDup+notifyDelay:
			m.hold = 1 + w.rng.IntN(3)
			b.pending = append(b.pending, m)
		default:
			b.pending = append(b.pending, m)
		}
	}
	var due []note
	keep := b.pending[:0]
	for _, m := range b.pending {
		if m.hold > 0 {
			m.hold--
			keep = append(keep, m)
			continue
		}
		due = append(due, m)
	}
	b.pending = keep
	if len(due) > 1 && w.rng.IntN(100) < notifyShuffle {
		w.rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
	}
	if len(due) == 0 {
		return nil
	}
	var d strings.Builder
	for _, m := range due {
		n := m.node
		fmt.Fprintf(&d, " %s:%s/%s", w.nname(n.UUID), n.ProvisionState, w.sname(n.InstanceUUID))
		if m.change == reconciler.ChangeFields {
			d.WriteString("(fields)")
		}
	}
	w.trace.add("notifications:" + d.String())
	// The wakes' debounce passes before the items are taken.
	w.clk.Advance(2 * reconciler.DefaultNotifyDebounce)
	for _, r := range w.reps {
		if r.stall > 0 || r.dead {
			continue
		}
		for _, m := range due {
			r.rec.Notified(m.node.UUID, &m.node, m.change)
		}
		if err := w.passReplica(r, func(ctx context.Context) error { w.woken += r.rec.RunDue(ctx); return nil }); err != nil {
			return err
		}
	}
	return nil
}

// sameStates compares a payload's states, the holder aside.
func sameStates(a, b ironic.Node) bool {
	return a.ProvisionState == b.ProvisionState && a.TargetProvisionState == b.TargetProvisionState &&
		a.PowerState == b.PowerState && a.Maintenance == b.Maintenance
}

// sameNote compares what a payload carries.
func sameNote(a, b ironic.Node) bool {
	return a.InstanceUUID == b.InstanceUUID && sameStates(a, b)
}

// notifyParams is the world of TestDSTNotifications: the default one, and
// two or three replicas for a third of the seeds.
func notifyParams(seed int64) params {
	p := defaultParams
	p.notify = true
	if seed%3 == 0 {
		p.replicas = -1
	}
	return p
}

// TestDSTNotifications: with notifications delivered, duplicated,
// reordered, delayed and lost, every invariant holds (the work items they
// wake read the node; the ticks are the resync).
func TestDSTNotifications(t *testing.T) {
	seeds := envInt(t, "INGOT_DST_SEEDS", ciSeeds/20)
	if testing.Short() {
		seeds = 200
	}
	// The notifications do make work items run (else this proves nothing).
	dir, tmpl := dbDir(t)
	woken := 0
	for seed := int64(1); seed <= 10; seed++ {
		woken += runSeed(seed, notifyParams(seed), dir, tmpl).woken
	}
	if woken == 0 {
		t.Fatal("no work item woke in 10 seeds with notifications")
	}
	t.Logf("%.1f work items woken by notifications per seed", float64(woken)/10)
	var bad []result
	for _, p := range []params{notifyParams(1), notifyParams(0)} {
		fails, ran := sweep(t, p, 1, seeds/2, 3)
		t.Logf("replicas=%d: %d seeds with notifications, %d failed", p.replicas, ran, len(fails))
		bad = append(bad, fails...)
	}
	for _, r := range bad {
		report(t, r)
	}
}

// TestDSTNotificationsHaveTeeth: work items that decide on the payload
// instead of reading the node break an invariant within the budget.
func TestDSTNotificationsHaveTeeth(t *testing.T) {
	p := notifyParams(1)
	p.trustPayload = true
	caught, ran := sweep(t, p, 1, ciSeeds/5, 1)
	if len(caught) == 0 {
		t.Fatalf("no violation in %d seeds with work items trusting the payload: the simulation cannot see it", ran)
	}
	t.Logf("caught after %d seeds (seed %d):\n  %s", ran, caught[0].seed, strings.Join(caught[0].errs, "\n  "))
}
