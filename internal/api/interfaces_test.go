package api_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-interface attach, show and detach on the embedded IPAM: Nova's codes
// and bodies. The fixture has no reconciler; playReconciler carries out an
// attach as it would (the port row, the operation done).

func (f *fixture) attachIface(h http.Header, id, mv string, att any) response {
	f.t.Helper()
	body := map[string]any{"interfaceAttachment": att}
	if att == nil {
		body = map[string]any{}
	}
	return f.doWith(h, "POST", "/v2.1/servers/"+id+"/os-interface", mv, body)
}

// playReconciler waits for an interface attach on id and carries it out:
// a port on its network, or (fail) the roll-back's end with its fault.
func (f *fixture) playReconciler(id string, fail lifecycle.Reason) {
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s, err := f.store.GetServer(ctx, id)
		if err != nil || !s.OpPending() {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if fail == "" {
			if err := f.store.CreatePort(ctx, store.Port{ID: s.Op.Port, ServerID: id, NetworkID: s.Op.Network,
				IP: "10.1.0.9", MAC: "52:54:00:00:00:09", VIFNode: s.NodeID, Slot: s.Op.Port}); err != nil {
				f.t.Errorf("port: %v", err)
			}
		} else {
			s.OpFault = &lifecycle.Fault{Reason: fail, Message: "no", At: t0}
		}
		s.OpDone = s.OpGen
		if err := f.store.SaveServer(ctx, s); err != nil {
			f.t.Errorf("save: %v", err)
		}
		return
	}
	f.t.Errorf("no attach to carry out on %s", id)
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestInterfaceAttachCodes(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("vm")
	other := map[string]any{"net_id": net2ID}

	wantMsg(t, f.attachIface(member, id, "2.1", map[string]any{"net_id": net2ID, "port_id": net2ID}), 400, "badRequest", "Must not input both network_id and port_id")
	wantMsg(t, f.attachIface(member, id, "2.1", map[string]any{"fixed_ips": []any{map[string]any{"ip_address": "10.1.0.5"}}}), 400, "badRequest",
		"Must input network_id when request IP address")
	wantMsg(t, f.attachIface(member, id, "2.1", map[string]any{"net_id": "nope"}), 400, "badRequest", "is not a 'uuid'")
	wantMsg(t, f.attachIface(member, id, "2.48", map[string]any{"net_id": net2ID, "tag": "t"}), 400, "badRequest", "('tag' was unexpected)")
	wantMsg(t, f.attachIface(member, id, "2.49", map[string]any{"net_id": net2ID, "tag": "t"}), 400, "badRequest",
		"Tagged network interface attachment is not supported for this server instance.")
	wantMsg(t, f.attachIface(member, id, "2.1", map[string]any{"net_id": "6d2c5f7e-0b1a-4c3d-9e8f-7a6b5c4d3e2f"}), 404, "itemNotFound",
		"Network 6d2c5f7e-0b1a-4c3d-9e8f-7a6b5c4d3e2f could not be found.")
	wantMsg(t, f.attachIface(member, id, "2.1", map[string]any{"port_id": "6d2c5f7e-0b1a-4c3d-9e8f-7a6b5c4d3e2f"}), 404, "itemNotFound", "could not be found")
	// Two configured networks and none named: Nova's NetworkAmbiguous.
	wantMsg(t, f.attachIface(member, id, "2.1", nil), 400, "badRequest", "More than one possible network found.")
	f.attachIface(reader, id, "2.1", other).want(t, http.StatusForbidden)
	f.attachIface(stranger, id, "2.1", other).want(t, http.StatusNotFound)
	if f.server(id).OpGen != 0 {
		t.Fatalf("a refused attach recorded an operation")
	}

	// Rescued: Nova's check_instance_state.
	rescued := f.activeServer("rescued")
	f.advance(rescued, func(s *lifecycle.Server) { s.Phase = lifecycle.PhaseRescued })
	wantMsg(t, f.attachIface(member, rescued, "2.1", other), 409, "conflictingRequest",
		"Cannot 'attach_interface' instance "+rescued+" while it is in vm_state rescued")

	// Done: 200 with the port; tag null from 2.70.
	go f.playReconciler(id, "")
	r := f.attachIface(member, id, "2.70", other).want(t, http.StatusOK)
	a := obj(t, r.body, "interfaceAttachment")
	port := f.server(id).Op.Port
	if a["net_id"] != net2ID || a["port_id"] != port || a["mac_addr"] != "52:54:00:00:00:09" || a["port_state"] != "ACTIVE" {
		t.Errorf("attach answered %v", a)
	}
	if tag, ok := a["tag"]; !ok || tag != nil {
		t.Errorf("tag at 2.70: %v (present %v), want null", tag, ok)
	}
	if s := f.server(id); s.Op.Kind != lifecycle.OpAttachInterface || s.Op.Network != net2ID || s.Op.RequestID == "" {
		t.Errorf("recorded operation %+v", s.Op)
	}
	if names := f.actionNames(id); len(names) == 0 || names[0] != "attach_interface" {
		t.Errorf("actions %v", names)
	}
	if !uuidRE.MatchString(port) {
		t.Errorf("attach's port id %q", port)
	}

	// Show: the server's port, 404 for another.
	show := f.do("GET", "/v2.1/servers/"+id+"/os-interface/"+port, "2.1", nil).want(t, http.StatusOK)
	if s := obj(t, show.body, "interfaceAttachment"); s["net_id"] != net2ID {
		t.Errorf("show %v", s)
	} else if _, ok := s["tag"]; ok {
		t.Errorf("tag shown below 2.70: %v", s)
	}
	wantMsg(t, f.do("GET", "/v2.1/servers/"+id+"/os-interface/6d2c5f7e-0b1a-4c3d-9e8f-7a6b5c4d3e2f", "2.1", nil), 404, "itemNotFound", "could not be found")
	if l := list(t, f.do("GET", "/v2.1/servers/"+id+"/os-interface", "2.70", nil).want(t, 200).body, "interfaceAttachments"); len(l) != 1 {
		t.Errorf("list: %v", l)
	} else if tag, ok := l[0].(map[string]any)["tag"]; !ok || tag != nil {
		t.Errorf("list tag at 2.70: %v", l[0])
	}
}

func TestInterfaceAttachFailed(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("vm")
	go f.playReconciler(id, lifecycle.ReasonVIFAttachFailed)
	wantMsg(t, f.attachIface(member, id, "2.1", map[string]any{"net_id": net2ID}), 500, "computeFault", "Failed to attach network adapter device to "+id)
	id2 := f.activeServer("vm2")
	go f.playReconciler(id2, lifecycle.ReasonNetworkAllocationFailed)
	wantMsg(t, f.attachIface(member, id2, "2.1", map[string]any{"net_id": net2ID}), 400, "badRequest", "No fixed IP addresses available for network: "+net2ID)
	// A locked server refuses the attach and the detach to its owner.
	f.action(member, id, "2.90", map[string]any{"lock": nil}).want(t, http.StatusAccepted)
	wantMsg(t, f.attachIface(member, id, "2.1", map[string]any{"net_id": net2ID}), 409, "conflictingRequest", "is locked")
}

func TestInterfaceDetachCodes(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("vm")
	port := "11111111-2222-4333-8444-555555555555"
	if err := f.store.CreatePort(context.Background(), store.Port{ID: port, ServerID: id, NetworkID: netID, IP: "10.0.0.9",
		MAC: "52:54:00:00:00:09", VIFNode: f.server(id).NodeID}); err != nil {
		t.Fatal(err)
	}
	path := "/v2.1/servers/" + id + "/os-interface/"
	wantMsg(t, f.doWith(member, "DELETE", path+"6d2c5f7e-0b1a-4c3d-9e8f-7a6b5c4d3e2f", "2.1", nil), 404, "itemNotFound", "is not attached")
	f.doWith(reader, "DELETE", path+port, "2.1", nil).want(t, http.StatusForbidden)
	f.doWith(stranger, "DELETE", path+port, "2.1", nil).want(t, http.StatusNotFound)
	f.doWith(member, "DELETE", path+port, "2.1", nil).want(t, http.StatusAccepted)
	s := f.server(id)
	if s.Op.Kind != lifecycle.OpDetachInterface || s.Op.Network != netID || s.Op.Port != port || !s.OpPending() {
		t.Errorf("recorded %+v pending %v", s.Op, s.OpPending())
	}
	// One operation at a time, as Nova's task_state check.
	wantMsg(t, f.doWith(member, "DELETE", path+port, "2.1", nil), 409, "conflictingRequest", "Cannot 'detach_interface'")
	if st := lifecycle.Nova(s); st.Status != "ACTIVE" || st.TaskState != "" {
		t.Errorf("during the detach: %+v, want ACTIVE with no task_state", st)
	}
}
