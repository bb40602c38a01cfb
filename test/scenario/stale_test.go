package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// TestS21MaintenanceAfterRefresh: the chosen node goes into maintenance
// between the scheduler's inventory and the reservation. The reservation's
// answer shows it: the node is given back at once and another chosen,
// without spending an attempt and without waiting maintenance_grace.
func TestS21MaintenanceAfterRefresh(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 2, maintGrace: time.Hour})
	start := time.Now()
	var id string
	done := make(chan struct{})
	go func() { defer close(done); id = e.create("s21") }()
	node, release := e.holdNextPatch(5 * time.Second)
	if err := e.sim.SetMaintenance(node, true, "operator"); err != nil {
		t.Fatal(err)
	}
	release()
	<-done
	got := e.WaitStatus(id, "ACTIVE", 10*time.Second)
	took := time.Since(start)
	r := e.record(id)
	if r.NodeID == node {
		t.Fatalf("server went ACTIVE on the node in maintenance %s", node)
	}
	if len(r.Attempts) != 0 {
		t.Errorf("the give-back spent an attempt: %+v", r.Attempts)
	}
	if snap, _ := e.sim.Node(node); snap.InstanceUUID != "" {
		t.Errorf("node %s in maintenance still carries %s", node, snap.InstanceUUID)
	}
	evs, err := e.app.Store.AllEvents(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	gaveBack := false
	for _, ev := range evs {
		gaveBack = gaveBack || (ev.Node == node && strings.Contains(ev.Details, "in maintenance; giving it back"))
	}
	if !gaveBack {
		t.Errorf("no event says node %s was given back: %+v", node, evs)
	}
	t.Logf("create to ACTIVE with the first choice put in maintenance: %s (status %s)", took.Round(time.Millisecond), got.Status)
	if err := e.sim.SetMaintenance(node, false, ""); err != nil {
		t.Fatal(err)
	}
	e.checkInvariants(id)
}

// TestDeleteThenCreateWaitsForTheNode: with one node, a create right after a
// delete finds nothing free while the node is being torn down; it waits for
// it (capacity_wait) instead of failing with no_valid_host at once.
func TestDeleteThenCreateWaitsForTheNode(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, undeployTime: 1500 * time.Millisecond})
	a := e.create("first")
	e.WaitStatus(a, "ACTIVE", 10*time.Second)
	e.Delete(a)
	b := e.create("second")
	e.WaitFor("second waiting for capacity", 5*time.Second, func() bool {
		r := e.record(b)
		return r.Phase == lifecycle.PhasePending && !r.CapacityWaitSince.IsZero()
	})
	e.WaitStatus(b, "ACTIVE", 15*time.Second)
	e.WaitGone(a, 10*time.Second)
	if r := e.record(b); !r.CapacityWaitSince.IsZero() || len(r.Attempts) != 0 {
		t.Errorf("after the wait: capacity wait %v, attempts %+v", r.CapacityWaitSince, r.Attempts)
	}
	e.checkInvariants(a, b)
}
