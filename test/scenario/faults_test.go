package scenario

import (
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// S7: Ironic unreachable during the build, back before the deadline → ACTIVE.
func TestS7IronicBackBeforeDeadline(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.gate.down.Store(true)
	id := e.create("s7")
	e.waitRefused(3) // several ticks against a dead Ironic
	if s, _ := e.Get(id); s.Status != "BUILD" {
		t.Fatalf("status %s while Ironic is down, want BUILD", s.Status)
	}
	e.gate.down.Store(false)
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	e.checkInvariants(id)
}

// S7: Ironic gone past the deadline → ERROR ironic_unavailable; released once it answers.
func TestS7IronicDownPastDeadline(t *testing.T) {
	e := newEnv(t, envOpts{buildTimeout: 2 * time.Second, deployTime: 5 * time.Second})
	id := e.create("s7")
	e.phase(id, lifecycle.PhaseDeploying, 5*time.Second)
	e.WaitFor("deploy requested", 5*time.Second, func() bool { return e.record(id).DeployRequested })
	e.gate.down.Store(true)
	got := e.WaitStatus(id, "ERROR", 5*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "ironic_unavailable" {
		t.Fatalf("fault = %+v", got.IngotFault)
	}
	if e.record(id).NodeID == "" {
		t.Fatalf("node released while Ironic was down?")
	}
	e.gate.down.Store(false)
	e.checkInvariants(id)
}

// S7: 409 NodeLocked and 503 bursts are retried, never ERROR on their own.
func TestS7TransientBursts(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.sim.InjectFault(ironicsim.Fault{Method: "PATCH", Path: "/v1/nodes/*", Kind: ironicsim.FaultLocked, Count: 3})
	e.sim.InjectFault(ironicsim.Fault{Method: "PUT", Path: "/v1/nodes/*/states/provision", Kind: ironicsim.Fault503, Count: 2})
	e.sim.InjectFault(ironicsim.Fault{Method: "POST", Path: "/v1/nodes/*/vifs", Kind: ironicsim.Fault500, Count: 2})
	id := e.create("s7")
	e.WaitStatus(id, "ACTIVE", 15*time.Second)
	e.checkInvariants(id)
}

// S8: Ironic unreachable during delete → task_state deleting for the user
// at once, released later.
func TestS8DeleteWhileIronicDown(t *testing.T) {
	e := newEnv(t, envOpts{})
	id := e.create("s8")
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	node := e.record(id).NodeID
	e.gate.down.Store(true)
	e.Delete(id)
	s, code := e.Get(id)
	if code == http.StatusOK && !s.Deleting() {
		t.Fatalf("after delete with Ironic down: %s, task_state %v", s.Status, s.TaskState)
	}
	e.waitRefused(3) // the release was tried, and failed, several times
	if n, _ := e.sim.Node(node); n.InstanceUUID != id {
		t.Fatalf("node released while Ironic was down?")
	}
	e.gate.down.Store(false)
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
}

// S10: build timeout → ERROR build_timeout, deploy aborted, everything released.
func TestS10BuildTimeout(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, buildTimeout: time.Second})
	_ = e.sim.HoldDeploy(e.nodes[0])
	id := e.create("s10")
	start := time.Now()
	got := e.WaitStatus(id, "ERROR", 5*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "build_timeout" {
		t.Fatalf("fault = %+v", got.IngotFault)
	}
	if el := time.Since(start); el > time.Second+time.Second {
		t.Errorf("ERROR %s after create; deadline 1s + one tick", el)
	}
	e.checkInvariants(id)
}

// S11: delete of an ERROR server, and delete when the node is already gone.
func TestS11DeleteErrorAndGoneNode(t *testing.T) {
	e := newEnv(t, envOpts{})
	bad := e.createWith("s11-err", "bm.none")
	e.WaitStatus(bad, "ERROR", 5*time.Second)
	e.Delete(bad)
	e.WaitGone(bad, 2*time.Second)
	e.delete2xxOr404(bad)

	id := e.create("s11")
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	if err := e.sim.DeleteOutOfBand(e.record(id).NodeID); err != nil {
		t.Fatal(err)
	}
	e.Delete(id)
	e.WaitGone(id, 5*time.Second)
	e.checkInvariants(bad, id)
}

func (e *env) delete2xxOr404(id string) {
	e.t.Helper()
	if code := e.Call("DELETE", "/v2.1/servers/"+id, nil, nil); code != http.StatusNotFound && code != http.StatusNoContent {
		e.t.Fatalf("repeat delete: %d", code)
	}
}

// S12: node deleted, torn down or disassociated while ACTIVE → ERROR with the fault, ports released.
func TestS12ActiveDrift(t *testing.T) {
	cases := []struct {
		reason string
		do     func(e *env, node string) error
	}{
		{"node_deleted", func(e *env, n string) error { return e.sim.DeleteOutOfBand(n) }},
		{"node_torn_down", func(e *env, n string) error { return e.sim.TeardownOutOfBand(n) }},
		{"node_disassociated", func(e *env, n string) error { e.orphans = append(e.orphans, n); return e.sim.RemoveInstanceUUID(n) }},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			e := newEnv(t, envOpts{})
			id := e.create("s12")
			e.WaitStatus(id, "ACTIVE", 10*time.Second)
			start := time.Now()
			if err := c.do(e, e.record(id).NodeID); err != nil {
				t.Fatal(err)
			}
			got := e.WaitStatus(id, "ERROR", 5*time.Second)
			t.Logf("drift detected in %s", time.Since(start))
			if got.IngotFault == nil || got.IngotFault.Reason != c.reason {
				t.Fatalf("fault = %+v", got.IngotFault)
			}
			e.checkInvariants(id)
		})
	}
}

// S13: pool exhausted → ERROR at once; VIF attach failure → reschedule.
func TestS13Network(t *testing.T) {
	t.Run("pool exhausted", func(t *testing.T) {
		e := newEnv(t, envOpts{cidr: "10.0.0.0/30"}) // one usable address
		a := e.create("s13a")
		e.WaitStatus(a, "ACTIVE", 10*time.Second)
		b := e.create("s13b")
		got := e.WaitStatus(b, "ERROR", 10*time.Second)
		if got.IngotFault == nil || got.IngotFault.Reason != "network_allocation_failed" || len(got.Attempts) != 1 {
			t.Fatalf("fault = %+v attempts %+v", got.IngotFault, got.Attempts)
		}
		e.checkInvariants(a, b)
	})
	t.Run("vif attach fails", func(t *testing.T) {
		// The only node has no free port, so it refuses the VIF (flat-like
		// store mode): a reschedulable failure, then ERROR for want of another node.
		e := newEnv(t, envOpts{nodes: 1})
		_ = e.sim.SetMaintenance(e.nodes[0], true, "keep out")
		e.sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: rc, Ports: 0, NamePrefix: "noports"})
		id := e.create("s13")
		got := e.WaitStatus(id, "ERROR", 10*time.Second)
		if got.IngotFault == nil || got.IngotFault.Reason != "vif_attach_failed" || len(got.Attempts) != 1 {
			t.Fatalf("fault = %+v attempts = %+v", got.IngotFault, got.Attempts)
		}
		_ = e.sim.SetMaintenance(e.nodes[0], false, "")
		e.checkInvariants(id)
	})
}

// S14: no node fits → ERROR no_valid_host.
func TestS14NoValidHost(t *testing.T) {
	e := newEnv(t, envOpts{})
	id := e.createWith("s14", "bm.none")
	got := e.WaitStatus(id, "ERROR", 5*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "no_valid_host" {
		t.Fatalf("fault = %+v", got.IngotFault)
	}
	e.checkInvariants(id)
}
