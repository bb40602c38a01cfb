package reconciler_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// TestViewListedBeforeAnActionIsNotUsed: a tick lists the nodes, and
// before it reaches the server its work item sends the rebuild. The tick's
// list shows the node active (as before the rebuild), so trusting it would
// end the rebuild at once, ACTIVE while Ironic deploys; the tick looks at
// the node again instead and waits for the rebuild to finish.
func TestViewListedBeforeAnActionIsNotUsed(t *testing.T) {
	r := newRig(t, 1, 10*time.Millisecond, reconciler.Config{})
	id := r.create(1)[0]
	if s := r.settle(id); s.Phase != lifecycle.PhaseActive {
		t.Fatalf("built: %s", s.Phase)
	}
	node := r.server(id).NodeID
	recordOp(t, r.st, id, lifecycle.OpRebuild, "", r.clk.Now())
	r.rec.Wake(id)
	ran := 0
	r.onList = func() {
		r.onList = nil
		ran = r.rec.RunDue(context.Background()) // the item, between the tick's list and its step
	}
	r.tick()
	if ran != 1 {
		t.Fatalf("the work item did not run during the tick's list (%d ran)", ran)
	}
	n, _ := r.sim.Node(node)
	if s := r.server(id); n.ProvisionState != "deploying" || s.Phase != lifecycle.PhaseRebuilding || !s.OpSent {
		t.Fatalf("after the tick: server %s (op sent %v), node %s; want rebuilding while the node deploys",
			s.Phase, s.OpSent, n.ProvisionState)
	}
	if s := r.settle(id); s.Phase != lifecycle.PhaseActive {
		t.Fatalf("rebuilt: %s", s.Phase)
	}
	if n, _ := r.sim.Node(node); n.ProvisionState != "active" || n.InstanceUUID != id {
		t.Fatalf("node after the rebuild: %s %s", n.ProvisionState, n.InstanceUUID)
	}
}
