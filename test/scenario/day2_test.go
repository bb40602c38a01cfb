package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Day-2 operations on the simulator (docs/DESIGN.md §2.9, S16–S20).

// day2View is what these tests read of a server.
type day2View struct {
	Status       string              `json:"status"`
	TaskState    *string             `json:"OS-EXT-STS:task_state"`
	VMState      string              `json:"OS-EXT-STS:vm_state"`
	PowerState   int                 `json:"OS-EXT-STS:power_state"`
	Node         *string             `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Image        struct{ ID string } `json:"image"`
	Name         string              `json:"name"`
	Locked       bool                `json:"locked"`
	LockedReason *string             `json:"locked_reason"`
	Fault        *struct {
		Message string `json:"message"`
	} `json:"fault"`
	IngotFault *struct {
		Reason string `json:"reason"`
		Step   string `json:"step"`
	} `json:"ingot:fault"`
	// IngotPhase tells an operation Nova shows no task_state for (an
	// interface or volume attach or detach) from the rest after it.
	IngotPhase string `json:"ingot:phase"`
}

// restPhase is the resting phase of each status waitRest waits for.
var restPhase = map[string]string{"ACTIVE": "active", "SHUTOFF": "stopped", "RESCUE": "rescued", "ERROR": "error"}

func (e *env) view(id string) (day2View, int) {
	e.t.Helper()
	var out struct {
		Server day2View `json:"server"`
	}
	code := e.Call("GET", "/v2.1/servers/"+id, nil, &out)
	return out.Server, code
}

// act posts a server action and fails unless it answers want.
func (e *env) act(id string, body any, want int) map[string]any {
	e.t.Helper()
	var out map[string]any
	if code := e.Call("POST", "/v2.1/servers/"+id+"/action", body, &out); code != want {
		e.t.Fatalf("action %v on %s: HTTP %d (%v), want %d", body, id, code, out, want)
	}
	return out
}

// waitRest waits until the server has no task left and shows status
// want; an ERROR it does not want fails at once.
func (e *env) waitRest(id, want string, timeout time.Duration) day2View {
	e.t.Helper()
	var v day2View
	e.WaitFor(id+" at rest in "+want, timeout, func() bool {
		var code int
		v, code = e.view(id)
		if code != http.StatusOK {
			e.t.Fatalf("GET %s: HTTP %d while waiting for %s", id, code, want)
		}
		if v.Status == "ERROR" && want != "ERROR" {
			e.t.Fatalf("server %s is ERROR (%+v), want %s", id, v.IngotFault, want)
		}
		rest, known := restPhase[want]
		return v.TaskState == nil && v.Status == want && (!known || v.IngotPhase == "" || v.IngotPhase == rest)
	})
	return v
}

// opEvents are the events of the server's latest action named action.
func (e *env) opEvents(id, action string) []map[string]any {
	e.t.Helper()
	var acts struct {
		InstanceActions []struct {
			Action    string `json:"action"`
			RequestID string `json:"request_id"`
		} `json:"instanceActions"`
	}
	e.Call("GET", "/v2.1/servers/"+id+"/os-instance-actions", nil, &acts)
	for _, a := range acts.InstanceActions {
		if a.Action != action {
			continue
		}
		var detail struct {
			InstanceAction struct {
				Events []map[string]any `json:"events"`
			} `json:"instanceAction"`
		}
		e.Call("GET", "/v2.1/servers/"+id+"/os-instance-actions/"+a.RequestID, nil, &detail)
		return detail.InstanceAction.Events
	}
	e.t.Fatalf("server %s has no %s action", id, action)
	return nil
}

func (e *env) activeOn(name string) (id, node string) {
	e.t.Helper()
	id = e.create(name)
	e.WaitStatus(id, "ACTIVE", 20*time.Second)
	return id, e.record(id).NodeID
}

// TestS16RebootSoftHard: a soft reboot is sent to Ironic as soft
// rebooting, a hard one as rebooting; each ends ACTIVE with the node
// powered on and a finished reboot action.
func TestS16RebootSoftHard(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1})
	id, node := e.activeOn("r1")
	for _, tc := range []struct{ typ, call, status string }{{"SOFT", "power soft rebooting", "REBOOT"}, {"HARD", "power rebooting", "HARD_REBOOT"}} {
		from := e.stateCallCount()
		e.act(id, map[string]any{"reboot": map[string]any{"type": tc.typ}}, http.StatusAccepted)
		if v, _ := e.view(id); v.Status != tc.status && v.TaskState != nil {
			t.Errorf("%s reboot shows %s (task %v)", tc.typ, v.Status, *v.TaskState)
		}
		v := e.waitRest(id, "ACTIVE", 10*time.Second)
		if got := e.stateCalls(node, from); !slices.Equal(got, []string{tc.call}) {
			t.Errorf("%s reboot sent %v to Ironic, want [%s]", tc.typ, got, tc.call)
		}
		if n, _ := e.sim.Node(node); n.PowerState != "power on" || v.PowerState != lifecycle.PowerRunning {
			t.Errorf("after the %s reboot: node %s, power_state %d", tc.typ, n.PowerState, v.PowerState)
		}
		evs := e.opEvents(id, "reboot")
		if len(evs) == 0 || evs[len(evs)-1]["event"] != "compute_reboot_instance" || evs[len(evs)-1]["result"] != "Success" {
			t.Errorf("%s reboot events %v", tc.typ, evs)
		}
	}
	e.checkInvariants(id)
}

// TestS16StopStart: stop powers the node off (SHUTOFF, power_state 4 as
// Ironic shows it), start powers it on (ACTIVE, 1).
func TestS16StopStart(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1})
	id, node := e.activeOn("ss")
	from := e.stateCallCount()
	e.act(id, map[string]any{"os-stop": nil}, http.StatusAccepted)
	v := e.waitRest(id, "SHUTOFF", 10*time.Second)
	n, _ := e.sim.Node(node)
	if v.PowerState != lifecycle.PowerShutdown || v.VMState != "stopped" || n.PowerState != "power off" || n.ProvisionState != "active" {
		t.Errorf("stopped: power_state %d vm_state %s; node %s %s", v.PowerState, v.VMState, n.PowerState, n.ProvisionState)
	}
	e.checkInvariants(id) // a stopped server keeps its node, ports and VIFs
	e.act(id, map[string]any{"os-stop": nil}, http.StatusConflict)
	e.act(id, map[string]any{"os-start": nil}, http.StatusAccepted)
	v = e.waitRest(id, "ACTIVE", 10*time.Second)
	if n, _ := e.sim.Node(node); v.PowerState != lifecycle.PowerRunning || n.PowerState != "power on" {
		t.Errorf("started: power_state %d, node %s", v.PowerState, n.PowerState)
	}
	if got := e.stateCalls(node, from); !slices.Equal(got, []string{"power power off", "power power on"}) {
		t.Errorf("Ironic was asked %v", got)
	}
	e.checkInvariants(id)
}

// TestS17Rebuild: a rebuild to a new image redeploys the same node with
// the new instance_info and a config drive with the new name, metadata,
// user_data and hostname, keeping the server's address; what the old
// image set and the new one does not (its checksum) is removed.
func TestS17Rebuild(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 2, configure: func(c *config.Config) { c.Images[0].Checksum = "0123456789abcdef0123456789abcdef" }})
	id, node := e.activeOn("before")
	if n, _ := e.sim.Node(node); n.InstanceInfo["image_checksum"] != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("the first image's checksum not deployed: %v", n.InstanceInfo)
	}
	ip := e.record(id)
	ports, _ := e.app.Store.Ports(t.Context(), ip.ID)
	img2 := e.app.Config.Images[1].ID
	from := e.stateCallCount()
	out := e.act(id, map[string]any{"rebuild": map[string]any{"imageRef": img2, "name": "after",
		"metadata": map[string]any{"role": "db"}, "user_data": "I2Nsb3VkLWNvbmZpZwo=", "hostname": "db-1"}}, http.StatusAccepted)
	if srv, _ := out["server"].(map[string]any); srv["status"] != "REBUILD" || srv["adminPass"] == "" {
		t.Errorf("rebuild answer %v", out)
	}
	v := e.waitRest(id, "ACTIVE", 10*time.Second)
	if v.Image.ID != img2 || v.Name != "after" || deref(v.Node) != node {
		t.Errorf("after the rebuild: image %s name %s node %s", v.Image.ID, v.Name, deref(v.Node))
	}
	n, _ := e.sim.Node(node)
	if n.InstanceInfo["image_source"] != "http://images.example/ubuntu-24.04.qcow2" || n.InstanceUUID != id || n.ProvisionState != "active" {
		t.Errorf("node after the rebuild: %s %s %v", n.ProvisionState, n.InstanceUUID, n.InstanceInfo["image_source"])
	}
	if sum, ok := n.InstanceInfo["image_checksum"]; ok {
		t.Errorf("the old image's checksum %v kept after the rebuild: Ironic would check the new image against it", sum)
	}
	cd, _ := n.InstanceInfo["configdrive"].(map[string]any)
	meta, _ := cd["meta_data"].(map[string]any)
	srv, _ := out["server"].(map[string]any)
	if meta["admin_pass"] != srv["adminPass"] {
		t.Errorf("config drive after the rebuild: admin_pass %v, the rebuild answered %v", meta["admin_pass"], srv["adminPass"])
	}
	if meta["name"] != "after" || meta["hostname"] != "db-1" || fmt.Sprint(meta["meta"]) != "map[role:db]" || cd["user_data"] != "#cloud-config\n" {
		t.Errorf("config drive after the rebuild: meta_data %v, user_data %q", meta, cd["user_data"])
	}
	after, _ := e.app.Store.Ports(t.Context(), id)
	if len(after) != 1 || after[0].IP != ports[0].IP || after[0].ID != ports[0].ID {
		t.Errorf("ports before %+v, after %+v", ports, after)
	}
	if got := e.stateCalls(node, from); !slices.Equal(got, []string{"provision rebuild"}) {
		t.Errorf("Ironic was asked %v", got)
	}
	e.checkInvariants(id)
}

// TestS18NodeLostDuringRebuild: a rebuild whose node is deleted, or torn
// down, out-of-band ends in ERROR with the fault and the step; nothing is
// rescheduled and ports are released.
func TestS18NodeLostDuringRebuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lose   func(e *env, node string) error
		reason string
	}{
		{"deleted", func(e *env, node string) error { return e.sim.DeleteOutOfBand(node) }, "node_deleted"},
		{"torn_down", func(e *env, node string) error { return e.sim.TeardownOutOfBand(node) }, "node_torn_down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{nodes: 2})
			id, node := e.activeOn("rb")
			if err := e.sim.HoldDeploy(node); err != nil {
				t.Fatal(err)
			}
			e.act(id, map[string]any{"rebuild": map[string]any{"imageRef": e.imgID}}, http.StatusAccepted)
			e.WaitFor("the rebuild in wait call-back", 10*time.Second, func() bool {
				n, _ := e.sim.Node(node)
				return n.ProvisionState == "wait call-back" && e.record(id).OpSent
			})
			if err := tc.lose(e, node); err != nil {
				t.Fatal(err)
			}
			v := e.waitRest(id, "ERROR", 10*time.Second)
			if v.IngotFault == nil || v.IngotFault.Reason != tc.reason || v.IngotFault.Step != "rebuild" || v.Fault == nil {
				t.Errorf("fault %+v / %+v, want %s at step rebuild", v.IngotFault, v.Fault, tc.reason)
			}
			if rec := e.record(id); len(rec.Attempts) != 1 || rec.Phase != lifecycle.PhaseError {
				t.Errorf("record %s, attempts %+v: no reschedule", rec.Phase, rec.Attempts)
			}
			e.checkInvariants(id)
		})
	}
}

// TestS19DeleteDuringOperation: a delete while Ironic is at a rebuild, a
// reboot or a stop answers 204, the server is then 404, and its node is
// released; the operation never comes back.
func TestS19DeleteDuringOperation(t *testing.T) {
	for _, tc := range []struct{ name, target string }{{"rebuild", "provision"}, {"reboot", "power"}, {"stop", "power"}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{nodes: 1})
			id, node := e.activeOn(tc.name)
			body := map[string]any{"reboot": map[string]any{"type": "HARD"}}
			switch tc.name {
			case "rebuild":
				body = map[string]any{"rebuild": map[string]any{"imageRef": e.imgID}}
			case "stop":
				body = map[string]any{"os-stop": nil}
			}
			// Ironic takes the operation's call only once the delete is in.
			held := e.holdNext(func(r *http.Request) bool {
				return r.Method == http.MethodPut && r.URL.Path == "/v1/nodes/"+node+"/states/"+tc.target
			})
			e.act(id, body, http.StatusAccepted)
			held.wait("the "+tc.name+" call", 10*time.Second)
			e.Delete(id)
			if v, _ := e.view(id); v.TaskState == nil || *v.TaskState != "deleting" {
				t.Errorf("after the delete: %s, task_state %v", v.Status, v.TaskState)
			}
			held.release()
			e.WaitGone(id, 15*time.Second)
			e.checkInvariants(id)
			if n, _ := e.sim.Node(node); n.InstanceUUID != "" || n.ProvisionState != "available" {
				t.Errorf("node %s %q after the delete", n.ProvisionState, n.InstanceUUID)
			}
		})
	}
}

// TestRebootIronicDown: a reboot asked while Ironic is unreachable is
// retried and done once it is back (within reboot_timeout).
func TestRebootIronicDown(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1})
	id, node := e.activeOn("down")
	from := e.stateCallCount()
	e.gate.down.Store(true)
	e.act(id, map[string]any{"reboot": map[string]any{"type": "HARD"}}, http.StatusAccepted)
	e.waitRefused(5)
	if v, _ := e.view(id); v.Status != "HARD_REBOOT" {
		t.Errorf("while Ironic is down: %s", v.Status)
	}
	e.gate.down.Store(false)
	e.waitRest(id, "ACTIVE", 10*time.Second)
	if got := e.stateCalls(node, from); !slices.Equal(got, []string{"power rebooting"}) {
		t.Errorf("Ironic was asked %v once back", got)
	}
	evs := e.opEvents(id, "reboot")
	if last := evs[len(evs)-1]; last["result"] != "Success" {
		t.Errorf("reboot events %v", evs)
	}
	e.checkInvariants(id)
}

// TestS20PowerOffOutOfBand: a node powered off behind ingot's back makes
// its ACTIVE server SHUTOFF (as Nova's power sync), not ERROR; powered on
// again, ACTIVE.
func TestS20PowerOffOutOfBand(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1})
	id, node := e.activeOn("oob")
	power := func(target string) {
		req, _ := http.NewRequest(http.MethodPut, e.ironS.URL+"/v1/nodes/"+node+"/states/power",
			bytes.NewBufferString(`{"target": "`+target+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("power %s: %v %v", target, resp, err)
		}
		resp.Body.Close()
	}
	power("power off")
	if v := e.waitRest(id, "SHUTOFF", 10*time.Second); v.PowerState != lifecycle.PowerShutdown {
		t.Errorf("power_state %d", v.PowerState)
	}
	power("power on")
	e.waitRest(id, "ACTIVE", 10*time.Second)
	e.checkInvariants(id)
}

// TestRescueUnrescue: rescue boots the node into rescue with the password
// given (RESCUE), unrescue brings it back (ACTIVE); a node whose rescue
// interface is no-rescue is refused with 409 before anything is asked.
func TestRescueUnrescue(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, rescueIface: "fake"})
	id, node := e.activeOn("resc")
	out := e.act(id, map[string]any{"rescue": map[string]any{"adminPass": "let-me-in"}}, http.StatusOK)
	if out["adminPass"] != "let-me-in" {
		t.Errorf("rescue answer %v", out)
	}
	e.waitRest(id, "RESCUE", 10*time.Second)
	if n, _ := e.sim.Node(node); n.ProvisionState != "rescue" || n.InstanceUUID != id {
		t.Errorf("node %s %s", n.ProvisionState, n.InstanceUUID)
	}
	e.checkInvariants(id)
	e.act(id, map[string]any{"unrescue": nil}, http.StatusAccepted)
	e.waitRest(id, "ACTIVE", 10*time.Second)
	if n, _ := e.sim.Node(node); n.ProvisionState != "active" {
		t.Errorf("node %s after unrescue", n.ProvisionState)
	}
	e.checkInvariants(id)

	plain := e.sim.AddNodes(1, nodeSpecNoRescue())[0]
	if err := e.sim.SetMaintenance(node, true, "keep the next build off it"); err != nil {
		t.Fatal(err)
	}
	other := e.create("plain")
	e.WaitStatus(other, "ACTIVE", 20*time.Second)
	if e.record(other).NodeID != plain {
		t.Fatalf("second server not on the no-rescue node")
	}
	var msg map[string]map[string]any
	if code := e.Call("POST", "/v2.1/servers/"+other+"/action", map[string]any{"rescue": nil}, &msg); code != http.StatusConflict ||
		!strings.Contains(fmt.Sprint(msg["conflictingRequest"]["message"]), "no-rescue") {
		t.Errorf("rescue on a no-rescue node: %d %v", code, msg)
	}
	if got := e.stateCalls(plain, 0); slices.Contains(got, "provision rescue") {
		t.Errorf("a refused rescue reached Ironic: %v", got)
	}
	_ = e.sim.SetMaintenance(node, false, "")
	e.checkInvariants(id, other)
}

// TestLockRefusesMembers: a member's locked server refuses its member's
// reboot and delete (409) until unlocked.
func TestLockRefusesMembers(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1})
	id, _ := e.activeOn("lk")
	asMember := func(method, path string, body any) int {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, e.URL+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
		req.Header.Set("X-Ingot-Extensions", "true")
		req.Header.Set("X-Roles", "member,reader")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	action := "/v2.1/servers/" + id + "/action"
	if c := asMember("POST", action, map[string]any{"lock": map[string]any{"locked_reason": "audit"}}); c != http.StatusAccepted {
		t.Fatalf("lock: %d", c)
	}
	if v, _ := e.view(id); !v.Locked || deref(v.LockedReason) != "audit" {
		t.Errorf("locked %v reason %v", v.Locked, deref(v.LockedReason))
	}
	if c := asMember("POST", action, map[string]any{"reboot": map[string]any{"type": "SOFT"}}); c != http.StatusConflict {
		t.Errorf("reboot of a locked server: %d", c)
	}
	if c := asMember("DELETE", "/v2.1/servers/"+id, nil); c != http.StatusConflict {
		t.Errorf("delete of a locked server: %d", c)
	}
	if c := asMember("POST", action, map[string]any{"unlock": nil}); c != http.StatusAccepted {
		t.Errorf("unlock: %d", c)
	}
	if c := asMember("DELETE", "/v2.1/servers/"+id, nil); c != http.StatusNoContent {
		t.Errorf("delete after unlock: %d", c)
	}
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func nodeSpecNoRescue() ironicsim.NodeSpec {
	return ironicsim.NodeSpec{ResourceClass: rc, Ports: 4, NamePrefix: "plain"}
}
