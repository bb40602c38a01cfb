package ironicsim

import (
	"fmt"
	"testing"
	"time"
)

func TestFakeDeployIsLockedThroughout(t *testing.T) {
	h := newHarness(t, Options{DeployTime: 10 * time.Minute, UndeployTime: 10 * time.Second})
	id := h.addNode(NodeSpec{})
	h.want(h.patch(id, op("add", "/instance_uuid", inst1)), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active", "configdrive": "H4sI"}), 202, "")
	locked := fmt.Sprintf("Node %s is locked by host localhost, please retry after the current operation is completed.", id)
	for _, at := range []time.Duration{0, 5 * time.Minute, 10*time.Minute - time.Nanosecond} {
		h.clk.Set(t0.Add(at))
		n := h.node(id)
		if n["provision_state"] != "deploying" || n["target_provision_state"] != "active" || n["reservation"] != "localhost" {
			t.Fatalf("at %v: %v/%v reservation %v", at, n["provision_state"], n["target_provision_state"], n["reservation"])
		}
		h.want(h.provision(id, map[string]any{"target": "deleted"}), 409, locked)
		h.want(h.provision(id, map[string]any{"target": "abort"}), 409, locked)
		h.want(h.do("PUT", "/v1/nodes/"+id+"/maintenance", map[string]any{"reason": "x"}), 409, locked)
		h.want(h.do("DELETE", "/v1/nodes/"+id, nil), 409, locked)
		h.want(h.do("PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "power on"}), 409, locked)
		h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{"id": "v"}), 409, locked)
		h.want(h.patch(id, op("remove", "/instance_uuid")), 409,
			fmt.Sprintf("Node %s can not be updated while a state transition is in progress.", id))
		// Reads are never blocked.
		r := h.do("GET", "/v1/nodes?instance_uuid="+inst1+"&fields=uuid,provision_state", nil)
		if nodes := r.json()["nodes"].([]any); len(nodes) != 1 || nodes[0].(map[string]any)["provision_state"] != "deploying" {
			t.Fatalf("lookup while deploying: %s", r.body)
		}
	}
	h.clk.Set(t0.Add(10 * time.Minute))
	n := h.node(id)
	if n["provision_state"] != "active" || n["target_provision_state"] != nil || n["reservation"] != nil || n["power_state"] != "power off" {
		t.Fatalf("after deploy: %v/%v %v %v", n["provision_state"], n["target_provision_state"], n["reservation"], n["power_state"])
	}
	if n["provision_updated_at"] != pyTime(t0.Add(10*time.Minute)) {
		t.Errorf("provision_updated_at %v", n["provision_updated_at"])
	}

	// Undeploy: deleting keeps instance_uuid until the end.
	h.want(h.provision(id, map[string]any{"target": "deleted"}), 202, "")
	h.clk.Advance(10*time.Second - time.Nanosecond)
	n = h.node(id)
	if n["provision_state"] != "deleting" || n["instance_uuid"] != inst1 || n["reservation"] != "localhost" {
		t.Fatalf("deleting: %v %v %v", n["provision_state"], n["instance_uuid"], n["reservation"])
	}
	h.clk.Advance(time.Nanosecond)
	n = h.node(id)
	if n["provision_state"] != "available" || n["instance_uuid"] != nil || len(n["instance_info"].(map[string]any)) != 0 {
		t.Fatalf("undeployed: %v %v %v", n["provision_state"], n["instance_uuid"], n["instance_info"])
	}
}

func TestCustomAgentCallbackTimeout(t *testing.T) {
	h := newHarness(t, Options{DeployTime: 5 * time.Second, CallbackTimeout: 10 * time.Second})
	id := h.addNode(NodeSpec{DeployInterface: "custom-agent"})
	h.want(h.patch(id, op("add", "/instance_uuid", inst1)), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	if n := h.node(id); n["provision_state"] != "deploying" || n["reservation"] != "localhost" {
		t.Fatalf("start: %v %v", n["provision_state"], n["reservation"])
	}
	h.clk.Advance(agentPrepareTime)
	n := h.node(id)
	if n["provision_state"] != "wait call-back" || n["target_provision_state"] != "active" || n["reservation"] != nil || n["power_state"] != "power on" {
		t.Fatalf("wait: %v/%v %v %v", n["provision_state"], n["target_provision_state"], n["reservation"], n["power_state"])
	}
	h.want(h.provision(id, map[string]any{"target": "abort"}), 400,
		fmt.Sprintf(`The requested action "abort" can not be performed on node "%s" while it is in state "wait call-back".`, id))
	h.want(h.patch(id, op("remove", "/instance_uuid")), 409,
		fmt.Sprintf("Node %s can not be updated while a state transition is in progress.", id))
	h.clk.Advance(10*time.Second - time.Nanosecond)
	if s := h.state(id); s != "wait call-back" {
		t.Fatalf("before timeout: %s", s)
	}
	h.clk.Advance(time.Nanosecond)
	n = h.node(id)
	want := "Timeout reached while waiting for callback for node " + id
	if n["provision_state"] != "deploy failed" || n["target_provision_state"] != "active" || n["last_error"] != want ||
		n["instance_uuid"] != inst1 || n["reservation"] != nil {
		t.Fatalf("timeout: %v/%v %q %v %v", n["provision_state"], n["target_provision_state"], n["last_error"], n["instance_uuid"], n["reservation"])
	}
	// deploy failed: PATCH allowed, DELETE refused without maintenance, undeploy ok.
	h.want(h.patch(id, op("add", "/extra/a", "b")), 200, "")
	h.want(h.do("DELETE", "/v1/nodes/"+id, nil), 409, fmt.Sprintf("Node %s is associated with instance %s.", id, inst1))
	h.want(h.provision(id, map[string]any{"target": "deleted"}), 202, "")
	n = h.node(id)
	if n["provision_state"] != "available" || n["power_state"] != "power off" || n["last_error"] != nil {
		t.Fatalf("after undeploy: %v %v %v", n["provision_state"], n["power_state"], n["last_error"])
	}
}

func TestCallbackTimeoutNeverFiresInMaintenance(t *testing.T) {
	h := newHarness(t, Options{CallbackTimeout: 10 * time.Second})
	id := h.addNode(NodeSpec{DeployInterface: "custom-agent"})
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Second)
	h.want(h.do("PUT", "/v1/nodes/"+id+"/maintenance", map[string]any{"reason": "look"}), 202, "")
	h.clk.Advance(time.Hour)
	n := h.node(id)
	if n["provision_state"] != "wait call-back" || n["maintenance"] != true || n["maintenance_reason"] != "look" {
		t.Fatalf("in maintenance: %v %v %v", n["provision_state"], n["maintenance"], n["maintenance_reason"])
	}
	// Exactly "remove /instance_uuid" is allowed in maintenance.
	h.want(h.patch(id, op("remove", "/instance_uuid")), 200, "")
	h.want(h.do("DELETE", "/v1/nodes/"+id+"/maintenance", nil), 202, "")
	n = h.node(id)
	if n["provision_state"] != "deploy failed" || n["maintenance_reason"] != nil {
		t.Fatalf("after maintenance off: %v %v", n["provision_state"], n["maintenance_reason"])
	}
	if n["provision_updated_at"] != pyTime(t0.Add(time.Second+time.Hour)) {
		t.Errorf("fired at %v, want when maintenance ended", n["provision_updated_at"])
	}
}

func TestWaitCallbackOutOfBand(t *testing.T) {
	h := newHarness(t, Options{DeployTime: time.Minute})
	id := h.addNode(NodeSpec{})
	if err := h.sim.HoldDeploy(id); err != nil {
		t.Fatal(err)
	}
	h.want(h.patch(id, op("add", "/instance_uuid", inst1)), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(24 * time.Hour)
	if s := h.state(id); s != "wait call-back" {
		t.Fatalf("held: %s", s)
	}
	// Maintenance is possible (unlocked), then DELETE in maintenance.
	h.want(h.do("PUT", "/v1/nodes/"+id+"/maintenance", nil), 202, "")
	h.want(h.do("DELETE", "/v1/nodes/"+id, nil), 204, "")

	// Release: a held node becomes active.
	id2 := h.addNode(NodeSpec{})
	_ = h.sim.HoldDeploy(id2)
	h.want(h.provision(id2, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Second)
	if s := h.state(id2); s != "wait call-back" {
		t.Fatalf("held 2: %s", s)
	}
	if err := h.sim.ReleaseDeploy(id2); err != nil {
		t.Fatal(err)
	}
	if s := h.state(id2); s != "active" {
		t.Fatalf("released: %s", s)
	}
	// Release before the node got there: the deploy just completes.
	id3 := h.addNode(NodeSpec{})
	_ = h.sim.HoldDeploy(id3)
	_ = h.sim.ReleaseDeploy(id3)
	h.want(h.provision(id3, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Minute)
	if s := h.state(id3); s != "active" {
		t.Fatalf("released early: %s", s)
	}
	// Undeploy from wait call-back.
	id4 := h.addNode(NodeSpec{})
	_ = h.sim.HoldDeploy(id4)
	h.want(h.provision(id4, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Second)
	h.want(h.provision(id4, map[string]any{"target": "deleted"}), 202, "")
	if sn, _ := h.sim.Node(id4); sn.ProvisionState != "available" || sn.Held {
		t.Fatalf("undeploy from wait call-back: %+v", sn)
	}
}

func TestFailNextDeployAndOutOfBand(t *testing.T) {
	h := newHarness(t, Options{DeployTime: time.Minute, UndeployTime: time.Minute, VIFMode: VIFModeStore})
	ids := h.sim.AddNodes(3, NodeSpec{Ports: 1})
	a, b, c := ids[0], ids[1], ids[2]
	if err := h.sim.FailNextDeploy(a, "boom"); err != nil {
		t.Fatal(err)
	}
	h.want(h.provision(a, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Minute - time.Nanosecond)
	if s := h.state(a); s != "deploying" {
		t.Fatalf("failing deploy early: %s", s)
	}
	h.clk.Advance(time.Nanosecond)
	n := h.node(a)
	if n["provision_state"] != "deploy failed" || n["last_error"] != "boom" || n["target_provision_state"] != "active" || n["reservation"] != nil {
		t.Fatalf("failed deploy: %v %v %v", n["provision_state"], n["last_error"], n["target_provision_state"])
	}
	// Consumed: the redeploy succeeds and clears last_error.
	h.want(h.provision(a, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Minute)
	if n := h.node(a); n["provision_state"] != "active" || n["last_error"] != nil {
		t.Fatalf("redeploy: %v %v", n["provision_state"], n["last_error"])
	}

	// Teardown out of band while deploying, with a VIF.
	h.want(h.patch(b, op("add", "/instance_uuid", inst2)), 200, "")
	h.want(h.do("POST", "/v1/nodes/"+b+"/vifs", map[string]any{"id": "vif-b"}), 204, "")
	h.want(h.provision(b, map[string]any{"target": "active"}), 202, "")
	if err := h.sim.TeardownOutOfBand(b); err != nil {
		t.Fatal(err)
	}
	if s := h.state(b); s != "deleting" {
		t.Fatalf("torn down: %s", s)
	}
	if v := h.sim.VIFs(b); len(v) != 1 {
		t.Fatalf("VIFs detached before the end of deleting: %v", v)
	}
	h.clk.Advance(time.Minute)
	if sn, _ := h.sim.Node(b); sn.ProvisionState != "available" || sn.InstanceUUID != "" || len(sn.VIFs) != 0 {
		t.Fatalf("after teardown: %+v", sn)
	}
	if err := h.sim.TeardownOutOfBand(b); err != ErrInvalidState {
		t.Errorf("teardown of an available node: %v", err)
	}

	// Maintenance and instance removal behind the service's back.
	h.want(h.patch(c, op("add", "/instance_uuid", inst1)), 200, "")
	_ = h.sim.SetMaintenance(c, true, "broken")
	if n := h.node(c); n["maintenance"] != true || n["maintenance_reason"] != "broken" {
		t.Fatalf("maintenance: %v", n)
	}
	_ = h.sim.RemoveInstanceUUID(c)
	if n := h.node(c); n["instance_uuid"] != nil {
		t.Fatalf("instance still set")
	}
	if err := h.sim.DeleteOutOfBand(c); err != nil {
		t.Fatal(err)
	}
	h.want(h.do("GET", "/v1/nodes/"+c, nil), 404, "")
	if err := h.sim.DeleteOutOfBand(c); err != ErrNodeNotFound {
		t.Errorf("second delete: %v", err)
	}
}

func TestRestart(t *testing.T) {
	h := newHarness(t, Options{DeployTime: time.Minute, CallbackTimeout: time.Hour})
	ids := h.sim.AddNodes(3, NodeSpec{})
	agent := h.addNode(NodeSpec{DeployInterface: "custom-agent"})
	h.want(h.provision(ids[0], map[string]any{"target": "active"}), 202, "")
	h.want(h.provision(agent, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Second)
	h.sim.Restart()
	n := h.node(ids[0])
	if n["provision_state"] != "deploy failed" || n["target_provision_state"] != "active" || n["reservation"] != nil ||
		n["last_error"] != "The deploying state can't be resumed by conductor localhost. Moving to fail state." {
		t.Fatalf("restarted: %v/%v %v %q", n["provision_state"], n["target_provision_state"], n["reservation"], n["last_error"])
	}
	// The deploy does not complete later.
	h.clk.Advance(time.Hour - time.Second - time.Nanosecond)
	if s := h.state(ids[0]); s != "deploy failed" {
		t.Errorf("later: %s", s)
	}
	if s := h.state(agent); s != "wait call-back" {
		t.Errorf("wait call-back after restart: %s", s)
	}
	if s := h.state(ids[1]); s != "available" {
		t.Errorf("untouched node: %s", s)
	}
}

func TestSetNodeTimes(t *testing.T) {
	h := newHarness(t, Options{DeployTime: time.Hour})
	fast := h.addNode(NodeSpec{DeployTime: time.Second})
	slow := h.addNode(NodeSpec{})
	_ = h.sim.SetNodeTimes(slow, 2*time.Second, -1)
	h.want(h.provision(fast, map[string]any{"target": "active"}), 202, "")
	h.want(h.provision(slow, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Second)
	if a, b := h.state(fast), h.state(slow); a != "active" || b != "deploying" {
		t.Fatalf("after 1s: %s %s", a, b)
	}
	h.clk.Advance(time.Second)
	if s := h.state(slow); s != "active" {
		t.Fatalf("after 2s: %s", s)
	}
}

func TestParallelReservationsOneWinner(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{})
	const n = 8
	codes := make(chan int, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			inst := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			r := h.patch(id, op("add", "/instance_uuid", inst))
			codes <- r.status
		}(i)
	}
	ok, conflicts := 0, 0
	for i := 0; i < n; i++ {
		switch <-codes {
		case 200:
			ok++
		case 409:
			conflicts++
		}
	}
	if ok != 1 || conflicts != n-1 {
		t.Fatalf("%d × 200, %d × 409", ok, conflicts)
	}
}

func TestAddNodesNamesStayUnique(t *testing.T) {
	s := New(Options{Seed: 1})
	s.AddNodes(5, NodeSpec{})
	s.AddNodes(30, NodeSpec{})
	seen := map[string]bool{}
	for _, n := range s.Nodes() {
		if seen[n.Name] {
			t.Fatalf("duplicate name %s", n.Name)
		}
		seen[n.Name] = true
		if got, ok := s.Node(n.Name); !ok || got.UUID != n.UUID {
			t.Fatalf("name %s does not resolve to its node", n.Name)
		}
	}
}

func TestImageTypeOnlyWithImageSource(t *testing.T) {
	h := newHarness(t, Options{DeployTime: time.Minute})
	id := h.addNode(NodeSpec{})
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	h.clk.Advance(time.Minute)
	n := h.node(id)
	if n["provision_state"] != "active" || len(n["instance_info"].(map[string]any)) != 0 || len(n["driver_internal_info"].(map[string]any)) != 0 {
		t.Fatalf("without image_source: %v %v %v", n["provision_state"], n["instance_info"], n["driver_internal_info"])
	}
	h.want(h.provision(id, map[string]any{"target": "deleted"}), 202, "")
	for _, tc := range []struct {
		info map[string]any
		typ  string
		wd   bool
	}{
		{map[string]any{"image_source": "https://h/img"}, "whole-disk", true},
		{map[string]any{"image_source": "https://h/img", "kernel": "k", "ramdisk": "r"}, "partition", false},
		{map[string]any{"image_source": "https://h/img", "image_type": "partition"}, "partition", false},
		{map[string]any{"image_source": "https://h/img", "image_type": "bogus"}, "whole-disk", true},
	} {
		h.clk.Advance(time.Minute)
		h.want(h.patch(id, op("add", "/instance_info", tc.info)), 200, "")
		h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
		// Recorded when the deploy starts.
		n := h.node(id)
		if n["provision_state"] != "deploying" || n["instance_info"].(map[string]any)["image_type"] != tc.typ ||
			n["driver_internal_info"].(map[string]any)["is_whole_disk_image"] != tc.wd {
			t.Errorf("%v: %v %v %v", tc.info, n["provision_state"], n["instance_info"], n["driver_internal_info"])
		}
		h.clk.Advance(time.Minute)
		h.want(h.provision(id, map[string]any{"target": "deleted"}), 202, "")
	}
}

func TestLockLinger(t *testing.T) {
	const linger = 50 * ms
	h := newHarness(t, Options{DeployTime: time.Second, CallbackTimeout: 10 * time.Second, LockLinger: linger})
	fast := h.addNode(NodeSpec{NamePrefix: "fast"})
	agent := h.addNode(NodeSpec{NamePrefix: "agent", DeployInterface: "custom-agent"})
	failing := h.addNode(NodeSpec{NamePrefix: "failing"})
	if err := h.sim.FailNextDeploy(failing, "boom"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{fast, agent, failing} {
		h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	}
	locked := func(id string) string {
		return fmt.Sprintf("Node %s is locked by host localhost, please retry after the current operation is completed.", id)
	}
	check := func(id, state string, reserved bool) {
		t.Helper()
		// A list settles every node, like a read of the node itself.
		r := h.do("GET", "/v1/nodes?fields=uuid,provision_state,reservation", nil)
		var n map[string]any
		for _, x := range r.json()["nodes"].([]any) {
			if m := x.(map[string]any); m["uuid"] == id {
				n = m
			}
		}
		want, wantSnap := any(nil), ""
		if reserved {
			want, wantSnap = "localhost", "localhost"
		}
		if n["provision_state"] != state || n["reservation"] != want {
			t.Fatalf("%s at %s: %v reservation %v, want %s %v", id, h.clk.Now().Sub(t0), n["provision_state"], n["reservation"], state, want)
		}
		if snap, _ := h.sim.Node(id); snap.Reservation != wantSnap {
			t.Fatalf("%s snapshot reservation %q", id, snap.Reservation)
		}
	}

	// custom-agent: deploying for 200 ms, then wait call-back, still locked for the linger.
	h.clk.Set(t0.Add(agentPrepareTime))
	check(agent, stateWaitCallback, true)
	h.want(h.provision(agent, map[string]any{"target": "deleted"}), 409, locked(agent))
	h.clk.Set(t0.Add(agentPrepareTime + linger - time.Nanosecond))
	check(agent, stateWaitCallback, true)
	h.clk.Set(t0.Add(agentPrepareTime + linger))
	check(agent, stateWaitCallback, false)

	// Fast and failing: active / deploy failed at 1 s, locked until 1 s + linger.
	h.clk.Set(t0.Add(time.Second))
	check(fast, stateActive, true)
	check(failing, stateDeployFailed, true)
	h.want(h.provision(fast, map[string]any{"target": "deleted"}), 409, locked(fast))
	h.want(h.do("PUT", "/v1/nodes/"+fast+"/maintenance", map[string]any{"reason": "x"}), 409, locked(fast))
	h.want(h.do("PUT", "/v1/nodes/"+failing+"/traits/CUSTOM_A", nil), 409, locked(failing))
	h.want(h.provision(failing, map[string]any{"target": "deleted"}), 409, locked(failing))
	h.clk.Set(t0.Add(time.Second + linger))
	check(fast, stateActive, false)
	check(failing, stateDeployFailed, false)
	h.want(h.provision(fast, map[string]any{"target": "deleted"}), 202, "")

	// The callback timeout fails the agent node at 200 ms + 10 s: locked again for the linger.
	at := t0.Add(agentPrepareTime + 10*time.Second)
	h.clk.Set(at)
	check(agent, stateDeployFailed, true)
	h.clk.Set(at.Add(linger))
	check(agent, stateDeployFailed, false)

	// Everything read at once long after: the lingering locks are over too.
	h2 := newHarness(t, Options{DeployTime: time.Second, LockLinger: linger})
	id := h2.addNode(NodeSpec{})
	h2.want(h2.provision(id, map[string]any{"target": "active"}), 202, "")
	h2.clk.Advance(time.Hour)
	if n := h2.node(id); n["provision_state"] != stateActive || n["reservation"] != nil {
		t.Fatalf("an hour later: %v %v", n["provision_state"], n["reservation"])
	}
	// Without LockLinger the lock goes with the transition (the default).
	h3 := newHarness(t, Options{DeployTime: time.Second})
	id = h3.addNode(NodeSpec{})
	h3.want(h3.provision(id, map[string]any{"target": "active"}), 202, "")
	h3.clk.Advance(time.Second)
	if n := h3.node(id); n["provision_state"] != stateActive || n["reservation"] != nil {
		t.Fatalf("no linger: %v %v", n["provision_state"], n["reservation"])
	}
}
