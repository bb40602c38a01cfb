package scenario

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// TestResetState: an admin's os-resetState to error keeps the machine (no
// undeploy, no call to Ironic at all); a rebuild from there, a reset back
// to active and a delete each work as from ACTIVE; a node deleted behind
// the back of a server reset to error makes it an ordinary ERROR, released.
func TestResetState(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 2})
	id, node := e.activeOn("reset")
	from := e.stateCallCount()
	e.act(id, map[string]any{"os-resetState": map[string]any{"state": "error"}}, http.StatusAccepted)
	e.waitRest(id, "ERROR", 10*time.Second)
	e.quiesce(10 * time.Second)
	if s := e.record(id); !s.HeldInError() || s.NodeID != node {
		t.Fatalf("reset to error: phase %s node %q fault %+v", s.Phase, s.NodeID, s.Fault)
	}
	if n, _ := e.sim.Node(node); n.ProvisionState != "active" || n.InstanceUUID != id {
		t.Errorf("node after reset to error: %s %s", n.ProvisionState, n.InstanceUUID)
	}
	if got := e.stateCalls(node, from); len(got) != 0 {
		t.Errorf("a reset asked Ironic %v", got)
	}

	e.act(id, map[string]any{"rebuild": map[string]any{"imageRef": e.app.Config.Images[1].ID}}, http.StatusAccepted)
	e.waitRest(id, "ACTIVE", 10*time.Second)
	if got := e.stateCalls(node, from); !slices.Equal(got, []string{"provision rebuild"}) {
		t.Errorf("rebuild from ERROR asked Ironic %v", got)
	}

	e.act(id, map[string]any{"os-resetState": map[string]any{"state": "error"}}, http.StatusAccepted)
	e.waitRest(id, "ERROR", 10*time.Second)
	e.act(id, map[string]any{"os-resetState": map[string]any{"state": "active"}}, http.StatusAccepted)
	e.waitRest(id, "ACTIVE", 10*time.Second)
	e.checkInvariants(id)

	// Back to back, as Tempest's test_reset_state_server does: the second
	// reset replaces the first if that is still pending; either way the
	// server ends active on its node, nothing asked of Ironic.
	from = e.stateCallCount()
	e.act(id, map[string]any{"os-resetState": map[string]any{"state": "error"}}, http.StatusAccepted)
	e.act(id, map[string]any{"os-resetState": map[string]any{"state": "active"}}, http.StatusAccepted)
	e.WaitFor("the back-to-back resets carried out", 10*time.Second, func() bool {
		s := e.record(id)
		return !s.OpPending() && s.Phase == lifecycle.PhaseActive && s.NodeID == node
	})
	if got := e.stateCalls(node, from); len(got) != 0 {
		t.Errorf("back-to-back resets asked Ironic %v", got)
	}
	e.checkInvariants(id)

	// Reset to error, then the node is deleted out-of-band: the drift check
	// finds it, the server is an ordinary ERROR and lets go of what it held.
	id2, node2 := e.activeOn("lost")
	e.act(id2, map[string]any{"os-resetState": map[string]any{"state": "error"}}, http.StatusAccepted)
	e.waitRest(id2, "ERROR", 10*time.Second)
	if err := e.sim.DeleteOutOfBand(node2); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("the reset server to let go of its deleted node", 20*time.Second, func() bool {
		s := e.record(id2)
		return s.Phase == lifecycle.PhaseError && s.NodeID == "" && s.Fault != nil && s.Fault.Reason == lifecycle.ReasonNodeDeleted
	})
	e.checkInvariants(id, id2)

	e.Call("DELETE", "/v2.1/servers/"+id, nil, nil)
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
}
