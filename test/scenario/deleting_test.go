package scenario

import (
	"net/http"
	"testing"
	"time"
)

// TestDeleteShowsNovaWay: while the node is torn down (a slow undeploy) a
// deleted server keeps the status and vm_state it had with task_state
// deleting, as Nova shows it, and answers 404 only once the node is
// released; the changes-since listing then shows it DELETED.
func TestDeleteShowsNovaWay(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 2, undeployTime: 1500 * time.Millisecond})
	active, activeNode := e.activeOn("del-active")
	stopped, stoppedNode := e.activeOn("del-stopped")
	e.act(stopped, map[string]any{"os-stop": nil}, http.StatusAccepted)
	e.waitRest(stopped, "SHUTOFF", 10*time.Second)
	since := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)

	for _, tc := range []struct{ id, node, status, vmState string }{
		{active, activeNode, "ACTIVE", "active"},
		{stopped, stoppedNode, "SHUTOFF", "stopped"},
	} {
		e.Delete(tc.id)
		tornDown := false // seen while Ironic was still tearing the node down
		e.WaitFor(tc.id+" gone", 20*time.Second, func() bool {
			n, _ := e.sim.Node(tc.node)
			v, code := e.view(tc.id)
			if code == http.StatusNotFound {
				if n, _ := e.sim.Node(tc.node); n.InstanceUUID != "" || n.ProvisionState != "available" {
					t.Fatalf("%s: 404 while its node is %s for %q", tc.status, n.ProvisionState, n.InstanceUUID)
				}
				return true
			}
			if code != http.StatusOK || v.Status != tc.status || v.VMState != tc.vmState || v.TaskState == nil || *v.TaskState != "deleting" {
				t.Fatalf("%s being deleted: HTTP %d, status %s, vm_state %s, task_state %v", tc.status, code, v.Status, v.VMState, v.TaskState)
			}
			tornDown = tornDown || n.ProvisionState == "deleting"
			return false
		})
		if !tornDown {
			t.Errorf("%s: never seen while its node was torn down", tc.status)
		}
	}

	var list struct {
		Servers []struct{ ID, Status string }
	}
	e.Call("GET", "/v2.1/servers/detail?changes-since="+since, nil, &list)
	shown := map[string]string{}
	for _, s := range list.Servers {
		shown[s.ID] = s.Status
	}
	if shown[active] != "DELETED" || shown[stopped] != "DELETED" {
		t.Errorf("changes-since lists %v, want both DELETED", shown)
	}
	e.checkInvariants(active, stopped)
}
