package reconciler_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// A burst far larger than one interval's worth of Ironic calls: no tick
// runs past the interval (on the rig's clock, which only Ironic's latency
// moves, so the length is exact), work is carried, and every build still
// gets deployed.
func TestBudgetBoundsEveryTick(t *testing.T) {
	r := newRig(t, 80, 50*time.Millisecond, reconciler.Config{})
	ids := r.create(60)
	carried := false
	for i := range 40 {
		st, d := r.tick()
		if d > 2*time.Second {
			t.Fatalf("tick %d took %s on the clock, more than the 2s interval (%+v)", i, d, st)
		}
		carried = carried || st.Carried > 0
		if r.phases(ids)[lifecycle.PhaseActive] == len(ids) {
			break
		}
		r.clk.Advance(2*time.Second - d)
	}
	if !carried {
		t.Fatal("no tick carried work: the burst did not exceed the budget, the test proves nothing")
	}
	if got := r.phases(ids); got[lifecycle.PhaseActive] != len(ids) {
		t.Fatalf("not all active: %v", got)
	}
}

// Deletes accepted for a whole burst at once are all recorded by the next
// tick, though its budget reaches only a few servers' Ironic steps: the
// cheap pass looks at every server.
func TestBurstDeletesSeenWithinOneTick(t *testing.T) {
	r := newRig(t, 80, 50*time.Millisecond, reconciler.Config{})
	ids := r.create(60)
	r.untilScheduled(ids)
	for _, id := range ids {
		if err := r.st.RequestDelete(context.Background(), id, "req-del-"+id, r.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	st, d := r.tick()
	if st.Carried == 0 {
		t.Fatalf("the budget reached every server (%+v): the test proves nothing", st)
	}
	for _, id := range ids {
		if p := r.server(id).Phase; p != lifecycle.PhaseDeleting && p != lifecycle.PhaseDeleted {
			t.Errorf("server %s still %s after one tick of %s: its delete was not looked at", id, p, d)
		}
	}
}

// Deadlines likewise: every build past its deadline is failed in one tick.
func TestBurstDeadlinesSeenWithinOneTick(t *testing.T) {
	r := newRig(t, 80, 100*time.Millisecond, reconciler.Config{})
	ids := r.create(60)
	r.untilScheduled(ids)
	r.clk.Advance(2 * time.Hour)
	if st, _ := r.tick(); st.Carried == 0 {
		t.Fatalf("the budget reached every server (%+v): the test proves nothing", st)
	}
	for _, id := range ids {
		if s := r.server(id); s.Phase != lifecycle.PhaseError && s.Phase != lifecycle.PhaseActive {
			t.Errorf("server %s still %s after one tick past its deadline", id, s.Phase)
		}
	}
}

// Rotation: builds whose reservation keeps failing cost Ironic calls on
// every tick and never finish. Without the cursor carried across ticks the
// budget would spend itself on the same first servers forever; with it
// every server gets its reservation tried within ⌈servers/per tick⌉ ticks.
func TestRotationServesEveryServer(t *testing.T) {
	r := newRig(t, 80, 50*time.Millisecond, reconciler.Config{})
	if err := r.sim.InjectFault(ironicsim.Fault{Method: "PATCH", Path: "/v1/nodes/{node}", Kind: ironicsim.FaultNodeLocked}); err != nil {
		t.Fatal(err)
	}
	ids := r.create(60)
	tried := map[string]bool{}
	perTick := 0
	ticks := 0
	for ticks < 30 && len(tried) < len(ids) {
		r.takeCalls()
		st, d := r.tick()
		ticks++
		r.clk.Advance(2*time.Second - d)
		n := 0
		for _, c := range r.reservesSince() {
			if !tried[c] {
				n++
			}
			tried[c] = true
		}
		perTick = max(perTick, n)
		if st.Carried == 0 {
			t.Fatalf("tick %d reached every server: the test proves nothing", ticks)
		}
	}
	if len(tried) < len(ids) {
		t.Fatalf("after %d ticks only %d of %d servers had their reservation tried", ticks, len(tried), len(ids))
	}
	t.Logf("every server tried within %d ticks (at most %d new per tick)", ticks, perTick)
}

// reservesSince returns the servers whose reservation was attempted since
// the last call.
func (r *rig) reservesSince() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reserves
	r.reserves = nil
	return out
}

// untilScheduled ticks until every server holds a node, so that whatever
// comes next costs each of them Ironic calls.
func (r *rig) untilScheduled(ids []string) {
	r.t.Helper()
	for range 40 {
		ph := r.phases(ids)
		if ph[lifecycle.PhasePending]+ph[lifecycle.PhaseReserving] == 0 {
			return
		}
		_, d := r.tick()
		r.clk.Advance(2*time.Second - d)
	}
	r.t.Fatalf("not all scheduled: %v", r.phases(ids))
}
