package crash

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ingot-dev/ingot/internal/poll"
)

// The day-2 operations under kill -9 (I6 for operations): a reboot, stop,
// start, rebuild or rescue answered 202 survives a crash at any of its step
// boundaries and is carried out after the restart, and the server still
// releases everything when deleted.

// crashOp is one operation: its action body, the operation that brings
// the server where it may start (prep), and the status it ends in.
type crashOp struct {
	name string
	body any
	prep *crashOp
	want string
}

var (
	opStop   = crashOp{name: "stop", body: map[string]any{"os-stop": nil}, want: "SHUTOFF"}
	crashOps = []crashOp{
		{name: "reboot", body: map[string]any{"reboot": map[string]any{"type": "SOFT"}}, want: "ACTIVE"},
		opStop,
		{name: "start", body: map[string]any{"os-start": nil}, prep: &opStop, want: "ACTIVE"},
		{name: "rebuild", body: map[string]any{"rebuild": map[string]any{"imageRef": imageID}}, want: "ACTIVE"},
		{name: "rescue", body: map[string]any{"rescue": map[string]any{"adminPass": "pw"}}, want: "RESCUE"},
	}
)

// opView is what waitRest reads of a server.
type opView struct {
	Status    string  `json:"status"`
	TaskState *string `json:"OS-EXT-STS:task_state"`
}

// waitRest waits until the server has no task left and shows want; ERROR
// fails at once (a crash is no reason for an operation to fail).
func (in *ingot) waitRest(id string, want ...string) {
	in.t.Helper()
	poll.Until(in.t, in.ir.timeout, fmt.Sprintf("server %s at rest in %v", id, want), func() (bool, string) {
		var out struct {
			Server opView `json:"server"`
		}
		code, err := in.call("GET", "/v2.1/servers/"+id, nil, &out)
		s := out.Server
		switch {
		case err != nil:
			return false, err.Error()
		case code == http.StatusNotFound:
			in.t.Fatalf("I6: server %s is 404 after the crash", id)
		case s.Status == "ERROR":
			sv, _ := in.show(id)
			in.t.Fatalf("server %s went to ERROR after a crash: %+v", id, sv.IngotFault)
		}
		if s.TaskState != nil {
			return false, fmt.Sprintf("status %q, task %q", s.Status, *s.TaskState)
		}
		return slices.Contains(want, s.Status), fmt.Sprintf("status %q, no task", s.Status)
	})
}

// checkNode checks Ironic shows the node of a server resting in status.
func (in *ingot) checkNode(id, status string) {
	in.t.Helper()
	want := map[string]nodeInfo{"ACTIVE": {ProvisionState: "active", PowerState: "power on"},
		"SHUTOFF": {ProvisionState: "active", PowerState: "power off"}, "RESCUE": {ProvisionState: "rescue"}}[status]
	for _, node := range in.nodes {
		n := in.ir.node(in.t, node)
		if n.InstanceUUID != id {
			continue
		}
		if n.ProvisionState != want.ProvisionState || (want.PowerState != "" && n.PowerState != want.PowerState) {
			in.t.Errorf("server %s is %s but its node %s is %s, %s", id, status, node, n.ProvisionState, n.PowerState)
		}
		return
	}
	in.t.Errorf("server %s is %s but no node carries it", id, status)
}

// operate asks for op on id; answered is false when the process died
// before the answer.
func (in *ingot) operate(id string, op crashOp) (answered bool) {
	in.t.Helper()
	code, err := in.call("POST", "/v2.1/servers/"+id+"/action", op.body, nil)
	if err != nil {
		return false
	}
	if code != http.StatusAccepted && code != http.StatusOK {
		in.t.Fatalf("%s %s: HTTP %d", op.name, id, code)
	}
	return true
}

// readyFor builds a server and brings it where op may start, with ingot
// then stopped (the caller starts it again as it needs).
func (in *ingot) readyFor(op crashOp) string {
	in.t.Helper()
	in.run()
	id := in.create("op-" + op.name)
	in.waitActive(id)
	if op.prep != nil {
		in.operate(id, *op.prep)
		in.waitRest(id, op.prep.want)
	}
	in.p.Stop()
	return id
}

// learnOp runs op once without a crash and returns its step boundaries.
func learnOp(t *testing.T, ir *ironicSide, rc string, nodes []string, op crashOp) []string {
	t.Helper()
	in := newIngot(t, ir, rc, nodes)
	id := in.readyFor(op)
	logPath := filepath.Join(in.dir, "points-"+op.name+".log")
	in.run("INGOT_CRASH_LOG=" + logPath)
	in.operate(id, op)
	in.waitRest(id, op.want)
	pts := points(readLines(logPath))
	in.deleteAndCheck(id)
	if len(pts) < 2 {
		t.Fatalf("%s: too few step boundaries seen: %v", op.name, pts)
	}
	return pts
}

// crashDuringOp kills ingot at point during op, restarts it and checks the
// accepted operation is carried out (or, if the answer was lost, that the
// server rests where it was or where the operation leads), then deletes
// the server and checks the release.
func crashDuringOp(t *testing.T, ir *ironicSide, rc string, nodes []string, op crashOp, point string) bool {
	in := newIngot(t, ir, rc, nodes)
	id := in.readyFor(op)
	p := in.run("INGOT_CRASH_AT=" + point)
	answered := in.operate(id, op)
	killed := killedBy9(t, p, ir.timeout)
	in.run()
	if answered {
		in.waitRest(id, op.want) // the accepted operation survived the crash (I6)
		in.checkNode(id, op.want)
	} else {
		// Recorded or not: the user would look and find out.
		t.Logf("%s at %s: killed before the answer", op.name, point)
		before := "ACTIVE"
		if op.prep != nil {
			before = op.prep.want
		}
		in.waitRest(id, before, op.want)
	}
	in.deleteAndCheck(id)
	return killed
}

// TestKill9Operations kills ingot at every step boundary of each day-2
// operation against the simulated Ironic.
func TestKill9Operations(t *testing.T) {
	const rc = "baremetal"
	for _, op := range crashOps {
		t.Run(op.name, func(t *testing.T) {
			ir, nodes := simSide(t, 1, rc)
			pts := learnOp(t, ir, rc, nodes, op)
			t.Logf("%s step boundaries: %v", op.name, pts)
			runPoints(t, "points", pts, 1, func(t *testing.T, pt string) bool {
				ir, nodes := simSide(t, 1, rc)
				return crashDuringOp(t, ir, rc, nodes, op, pt)
			})
		})
	}
}
