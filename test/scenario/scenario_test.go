package scenario

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// S1: nothing goes wrong.
func TestS1CreateActive(t *testing.T) {
	e := newEnv(t, envOpts{})
	id := e.create("s1")
	s := e.WaitStatus(id, "ACTIVE", 10*time.Second)
	if s.Node == nil || *s.Node == "" {
		t.Fatalf("no node shown: %+v", s)
	}
	if len(s.Addresses["provisioning"]) != 1 {
		t.Errorf("addresses = %v", s.Addresses)
	}
	n, _ := e.sim.Node(*s.Node)
	if n.InstanceUUID != id || n.ProvisionState != "active" {
		t.Errorf("node = %+v", n)
	}
	if n.InstanceInfo["image_source"] != "http://images.example/debian-12.qcow2" {
		t.Errorf("instance_info = %v", n.InstanceInfo)
	}
	e.checkInvariants(id)
}

// S2: a user delete at each build step wins, and nothing leaks.
func TestS2DeleteAtEveryStep(t *testing.T) {
	steps := []lifecycle.Phase{lifecycle.PhasePending, lifecycle.PhaseReserving, lifecycle.PhaseNetworking, lifecycle.PhaseDeploying}
	for _, p := range steps {
		t.Run(string(p), func(t *testing.T) {
			e := newEnv(t, envOpts{deployTime: 2 * time.Second})
			if p == lifecycle.PhasePending {
				// No node fits yet: hold every node so the server stays pending.
				for _, n := range e.nodes {
					if err := e.sim.SetMaintenance(n, true, "hold"); err != nil {
						t.Fatal(err)
					}
				}
			}
			if p == lifecycle.PhaseReserving {
				// Widen the reservation step: the PATCH answers late.
				if err := e.sim.InjectFault(ironicsim.Fault{Method: "PATCH", Path: "/v1/nodes/*", Kind: ironicsim.FaultLatency, Latency: time.Second, Count: 1}); err != nil {
					t.Fatal(err)
				}
			}
			if p == lifecycle.PhaseNetworking {
				// Widen the networking step: the VIF attach answers late.
				if err := e.sim.InjectFault(ironicsim.Fault{Method: "POST", Path: "/v1/nodes/*/vifs", Kind: ironicsim.FaultLatency, Latency: time.Second, Count: 1}); err != nil {
					t.Fatal(err)
				}
			}
			id := e.create("s2")
			if p != lifecycle.PhasePending {
				e.phase(id, p, 5*time.Second)
			}
			e.Delete(id)
			if s, code := e.Get(id); code == http.StatusOK && !s.Deleting() {
				t.Fatalf("right after delete: %s, task_state %v", s.Status, s.TaskState)
			}
			e.WaitGone(id, 10*time.Second)
			e.checkInvariants(id)
		})
	}
	t.Run("while deploying (wait call-back)", func(t *testing.T) {
		e := newEnv(t, envOpts{})
		for _, n := range e.nodes {
			_ = e.sim.HoldDeploy(n)
		}
		id := e.create("s2")
		e.WaitFor("wait call-back", 5*time.Second, func() bool {
			s := e.record(id)
			n, _ := e.sim.Node(s.NodeID)
			return n.ProvisionState == "wait call-back"
		})
		e.Delete(id)
		e.WaitGone(id, 10*time.Second)
		e.checkInvariants(id)
	})
}

// S3: node deleted out-of-band while deploying → reschedule → ACTIVE elsewhere.
func TestS3NodeDeletedRescheduled(t *testing.T) {
	e := newEnv(t, envOpts{deployTime: 2 * time.Second})
	id := e.create("s3")
	s := e.phase(id, lifecycle.PhaseDeploying, 5*time.Second)
	first := s.NodeID
	e.WaitFor("deploy requested", 5*time.Second, func() bool { return e.record(id).DeployRequested })
	start := time.Now()
	if err := e.sim.DeleteOutOfBand(first); err != nil {
		t.Fatal(err)
	}
	e.WaitFor("leaves the first node", 5*time.Second, func() bool { return e.record(id).NodeID != first })
	t.Logf("out-of-band delete detected and rescheduled in %s", time.Since(start))
	got := e.WaitStatus(id, "ACTIVE", 15*time.Second)
	if *got.Node == first {
		t.Fatalf("still on the deleted node")
	}
	if len(got.Attempts) != 1 || got.Attempts[0].Reason != "node_deleted" || got.Attempts[0].Node != first {
		t.Errorf("attempts = %+v", got.Attempts)
	}
	e.checkInvariants(id)
}

// S3: with no other node, ERROR node_deleted and everything released.
func TestS3NodeDeletedNoOtherNode(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, deployTime: 5 * time.Second})
	id := e.create("s3")
	s := e.phase(id, lifecycle.PhaseDeploying, 5*time.Second)
	e.WaitFor("deploy requested", 5*time.Second, func() bool { return e.record(id).DeployRequested })
	if err := e.sim.DeleteOutOfBand(s.NodeID); err != nil {
		t.Fatal(err)
	}
	got := e.WaitStatus(id, "ERROR", 10*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "node_deleted" || got.Fault == nil || !strings.Contains(got.Fault.Message, s.NodeID) {
		t.Fatalf("fault = %+v / %+v", got.IngotFault, got.Fault)
	}
	e.checkInvariants(id)
}

// S4: node torn down out-of-band while deploying; with attempts exhausted → ERROR node_torn_down.
func TestS4TornDown(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 2, maxAttempts: 2})
	for _, n := range e.nodes {
		_ = e.sim.HoldDeploy(n)
	}
	id := e.create("s4")
	for range 2 {
		var node string
		e.WaitFor("wait call-back", 5*time.Second, func() bool {
			s := e.record(id)
			n, _ := e.sim.Node(s.NodeID)
			node = s.NodeID
			return s.Phase == lifecycle.PhaseDeploying && n.ProvisionState == "wait call-back"
		})
		if err := e.sim.TeardownOutOfBand(node); err != nil {
			t.Fatal(err)
		}
		e.WaitFor("leaves node", 5*time.Second, func() bool { return e.record(id).NodeID != node })
	}
	got := e.WaitStatus(id, "ERROR", 10*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "node_torn_down" || len(got.Attempts) != 2 {
		t.Fatalf("fault = %+v attempts %+v", got.IngotFault, got.Attempts)
	}
	e.checkInvariants(id)
}

// S5: deploy fails → failed node undeployed, reschedule; exhausted → ERROR deploy_failed with last_error.
func TestS5DeployFailed(t *testing.T) {
	t.Run("reschedule", func(t *testing.T) {
		e := newEnv(t, envOpts{nodes: 2})
		if err := e.sim.FailNextDeploy(e.nodes[0], "boom on 0"); err != nil {
			t.Fatal(err)
		}
		if err := e.sim.FailNextDeploy(e.nodes[1], "boom on 1"); err != nil {
			t.Fatal(err)
		}
		id := e.create("s5")
		e.WaitFor("first attempt failed", 10*time.Second, func() bool { return len(e.record(id).Attempts) >= 1 })
		e.sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: rc, Ports: 4, NamePrefix: "spare"})
		got := e.WaitStatus(id, "ACTIVE", 15*time.Second)
		if len(got.Attempts) != 2 || got.Attempts[0].Reason != "deploy_failed" {
			t.Errorf("attempts = %+v", got.Attempts)
		}
		e.checkInvariants(id)
	})
	t.Run("exhausted", func(t *testing.T) {
		e := newEnv(t, envOpts{nodes: 2, maxAttempts: 2})
		for _, n := range e.nodes {
			if err := e.sim.FailNextDeploy(n, "disk on fire"); err != nil {
				t.Fatal(err)
			}
		}
		id := e.create("s5")
		got := e.WaitStatus(id, "ERROR", 15*time.Second)
		if got.IngotFault == nil || got.IngotFault.Reason != "deploy_failed" || !strings.Contains(got.Fault.Message, "disk on fire") {
			t.Fatalf("fault = %+v / %+v", got.IngotFault, got.Fault)
		}
		e.checkInvariants(id)
	})
}

// S6: maintenance while deploying → wait for the grace, then as S5 with node_maintenance.
func TestS6Maintenance(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, maintGrace: 500 * time.Millisecond})
	_ = e.sim.HoldDeploy(e.nodes[0])
	id := e.create("s6")
	e.WaitFor("wait call-back", 5*time.Second, func() bool {
		n, _ := e.sim.Node(e.nodes[0])
		return n.ProvisionState == "wait call-back"
	})
	if err := e.sim.SetMaintenance(e.nodes[0], true, "operator"); err != nil {
		t.Fatal(err)
	}
	got := e.WaitStatus(id, "ERROR", 10*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "node_maintenance" {
		t.Fatalf("fault = %+v", got.IngotFault)
	}
	e.checkInvariants(id)
}
