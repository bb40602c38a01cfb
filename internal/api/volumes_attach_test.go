package api_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// attachBody is os-volume_attachments' POST body.
func attachBody(vol string, extra map[string]any) map[string]any {
	a := map[string]any{"volumeId": vol}
	for k, v := range extra {
		a[k] = v
	}
	return map[string]any{"volumeAttachment": a}
}

// withAttached is an ACTIVE server with a volume attached after its build
// (the reconciler's part played), its os-volume_attachments path, and a
// volume it does not hold.
func (f *fixture) withAttached(name string) (id, path, vol, loose string) {
	f.t.Helper()
	id = f.activeServer(name)
	path = "/v2.1/servers/" + id + "/os-volume_attachments"
	vol, loose = f.newVolume("data"), f.newVolume("loose")
	f.doWith(member, "POST", path, "2.1", attachBody(vol, nil)).want(f.t, http.StatusOK)
	f.finishOp(id, lifecycle.PhaseActive)
	return id, path, vol, loose
}

// TestAttachVolume: POST os-volume_attachments records the attach (the
// volume held, listed, the operation pending) before its 200, with Nova's
// body at each microversion and Nova's refusals.
func TestAttachVolume(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("attach")
	path := "/v2.1/servers/" + id + "/os-volume_attachments"
	vol, other := f.newVolume("data"), f.newVolume("other")

	// The body is validated first, per microversion.
	wantMsg(t, f.doWith(member, "POST", path, "2.48", attachBody(vol, map[string]any{"tag": "t"})), 400, "badRequest", "('tag' was unexpected)")
	wantMsg(t, f.doWith(member, "POST", path, "2.78", attachBody(vol, map[string]any{"delete_on_termination": true})), 400, "badRequest",
		"('delete_on_termination' was unexpected)")
	wantMsg(t, f.doWith(member, "POST", path, "2.1", attachBody("nope", nil)), 400, "badRequest", "is not a 'uuid'")
	wantMsg(t, f.doWith(member, "POST", path, "2.49", attachBody(vol, map[string]any{"tag": "t"})), 400, "badRequest",
		"Tagged volume attachment is not supported for this server instance.")
	// Policy: another project sees no server; a reader may not attach.
	f.doWith(stranger, "POST", path, "2.1", attachBody(vol, nil)).novaError(t, 404, "itemNotFound")
	f.doWith(reader, "POST", path, "2.1", attachBody(vol, nil)).novaError(t, 403, "forbidden")
	missing := uuid.NewString()
	wantMsg(t, f.doWith(member, "POST", path, "2.1", attachBody(missing, nil)), 404, "itemNotFound", "Volume "+missing+" could not be found.")

	r := f.doWith(member, "POST", path, "2.1", attachBody(vol, nil)).want(t, http.StatusOK)
	a := obj(t, r.body, "volumeAttachment")
	if a["id"] != vol || a["volumeId"] != vol || a["serverId"] != id || a["device"] != nil || len(a) != 4 {
		t.Errorf("volumeAttachment at 2.1: %v", a)
	}
	// Recorded before the answer: the volume held, listed, the attach pending.
	if v := f.volume(vol); v.ServerID != id || v.Status != store.VolumeReserved {
		t.Errorf("volume after the POST: %s held by %q", v.Status, v.ServerID)
	}
	s := f.server(id)
	if !s.OpPending() || s.Op.Kind != lifecycle.OpAttachVolume || s.Op.VolumeID != vol ||
		len(s.Spec.Volumes) != 1 || s.Spec.Volumes[0] != (lifecycle.VolumeRef{ID: vol, BootIndex: -1}) {
		t.Errorf("record after the POST: op %+v, volumes %+v", s.Op, s.Spec.Volumes)
	}
	if got := f.actionNames(id); len(got) == 0 || got[0] != "attach_volume" {
		t.Errorf("instance actions %v", got)
	}
	atts := list(t, f.do("GET", path, "2.1", nil).want(t, http.StatusOK).body, "volumeAttachments")
	if len(atts) != 1 || atts[0].(map[string]any)["volumeId"] != vol {
		t.Errorf("volumeAttachments %v", atts)
	}
	// One operation at a time (Nova's task_state rule); then the volume is
	// attached already (400), and another server's volume not available.
	wantMsg(t, f.doWith(member, "POST", path, "2.1", attachBody(other, nil)), 409, "conflictingRequest",
		"Cannot 'attach_volume' instance "+id+" while it is in task_state None")
	f.finishOp(id, lifecycle.PhaseActive)
	wantMsg(t, f.doWith(member, "POST", path, "2.1", attachBody(vol, nil)), 400, "badRequest", "Invalid volume: volume "+vol+" already attached")
	id2 := f.activeServer("attach-2")
	wantMsg(t, f.doWith(member, "POST", "/v2.1/servers/"+id2+"/os-volume_attachments", "2.1", attachBody(vol, nil)), 400, "badRequest",
		"Invalid volume: volume '"+vol+"' status must be 'available'. Currently in 'reserved'")

	// 2.79: delete_on_termination asked and shown, tag null (2.70).
	r = f.doWith(member, "POST", path, "2.79", attachBody(other, map[string]any{"delete_on_termination": true})).want(t, http.StatusOK)
	a = obj(t, r.body, "volumeAttachment")
	if tag, ok := a["tag"]; !ok || tag != nil || a["delete_on_termination"] != true || len(a) != 6 {
		t.Errorf("volumeAttachment at 2.79: %v", a)
	}
	if v := f.volume(other); !v.DeleteOnTermination || v.ServerID != id {
		t.Errorf("volume %s: %+v", other, v)
	}
	f.finishOp(id, lifecycle.PhaseActive)

	// A locked server refuses the owner (409), not an admin.
	f.action(otherAdmin, id2, "2.73", `{"lock": null}`).want(t, http.StatusAccepted)
	third := f.newVolume("third")
	wantMsg(t, f.doWith(member, "POST", "/v2.1/servers/"+id2+"/os-volume_attachments", "2.1", attachBody(third, nil)), 409,
		"conflictingRequest", "Instance "+id2+" is locked")
}

// TestDetachVolume: DELETE os-volume_attachments/{volume} records the
// detach (202, empty body) from ACTIVE (the reconciler powers the machine
// off and on again for it) and from SHUTOFF; the server stays ACTIVE with
// no task_state, as Nova sets none.
func TestDetachVolume(t *testing.T) {
	f := newFixture(t)
	id, path, vol, loose := f.withAttached("detach")

	missing := uuid.NewString()
	wantMsg(t, f.doWith(member, "DELETE", path+"/"+missing, "2.1", nil), 404, "itemNotFound", "Volume "+missing+" could not be found.")
	wantMsg(t, f.doWith(member, "DELETE", path+"/"+loose, "2.1", nil), 404, "itemNotFound",
		"Instance "+id+" is not attached to volume "+loose)
	f.doWith(reader, "DELETE", path+"/"+vol, "2.1", nil).novaError(t, 403, "forbidden")
	f.doWith(stranger, "DELETE", path+"/"+vol, "2.1", nil).novaError(t, 404, "itemNotFound")
	if r := f.doWith(member, "DELETE", path+"/"+vol, "2.1", nil).want(t, http.StatusAccepted); len(r.raw) != 0 {
		t.Errorf("detach from ACTIVE: body %q, want none", r.raw)
	}
	sv := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.1", nil).want(t, http.StatusOK).body, "server")
	if sv["status"] != "ACTIVE" || sv["OS-EXT-STS:task_state"] != nil {
		t.Errorf("during a detach from ACTIVE: %v %v", sv["status"], sv["OS-EXT-STS:task_state"])
	}
	f.finishOp(id, lifecycle.PhaseActive)

	f.advance(id, func(s *lifecycle.Server) { s.Phase, s.PowerSeen = lifecycle.PhaseStopped, lifecycle.PowerOff })
	if r := f.doWith(member, "DELETE", path+"/"+vol, "2.79", nil).want(t, http.StatusAccepted); len(r.raw) != 0 {
		t.Errorf("detach from SHUTOFF: body %q, want none", r.raw)
	}
	if s := f.server(id); !s.OpPending() || s.Op.Kind != lifecycle.OpDetachVolume || s.Op.VolumeID != vol {
		t.Errorf("op after the DELETE: %+v", s.Op)
	}
	if got := f.actionNames(id); got[0] != "detach_volume" {
		t.Errorf("instance actions %v", got)
	}
	// Still listed until the reconciler has detached it, as Nova's BDM.
	if atts := list(t, f.do("GET", path, "2.1", nil).want(t, http.StatusOK).body, "volumeAttachments"); len(atts) != 1 {
		t.Errorf("volumeAttachments during the detach: %v", atts)
	}

	// A boot volume cannot be detached.
	boot := f.newVolume("boot")
	r := f.do("POST", "/v2.1/servers", "2.90", createBody(false, bdm(boot, 0, false))).want(t, http.StatusAccepted)
	bid := obj(t, r.body, "server")["id"].(string)
	f.advance(bid, func(s *lifecycle.Server) {
		s.Phase, s.NodeID, s.LaunchedAt, s.PowerSeen = lifecycle.PhaseStopped, "node-b", t0, lifecycle.PowerOff
	})
	wantMsg(t, f.do("DELETE", "/v2.1/servers/"+bid+"/os-volume_attachments/"+boot, "2.1", nil), 400, "badRequest",
		"Cannot detach a root device volume")

}

// TestUpdateVolumeAttachment: PUT os-volume_attachments/{volume} is
// Cinder's swap (an admin's; refused for a volume not migrating) below
// 2.85 and for another volumeId; from 2.85 with the same volumeId the
// owner changes delete_on_termination, the registry's flag with it.
func TestUpdateVolumeAttachment(t *testing.T) {
	f := newFixture(t)
	id, path, vol, loose := f.withAttached("update")

	f.doWith(member, "PUT", path+"/"+vol, "2.1", attachBody(loose, nil)).novaError(t, 403, "forbidden")
	f.doWith(member, "PUT", path+"/"+vol, "2.85", attachBody(loose, nil)).novaError(t, 403, "forbidden")
	wantMsg(t, f.doWith(otherAdmin, "PUT", path+"/"+vol, "2.1", attachBody(loose, nil)), 409, "conflictingRequest",
		"volume "+vol+" is not migrating; this API should only be called by Cinder")
	// Nova reads both volumes first: a missing new one (the body's) is 400.
	missing := "6f1c2d3e-4b5a-4c6d-8e7f-901234567890"
	wantMsg(t, f.doWith(otherAdmin, "PUT", path+"/"+vol, "2.1", attachBody(missing, nil)), 400, "badRequest",
		"Volume "+missing+" could not be found.")
	wantMsg(t, f.doWith(member, "PUT", path+"/"+vol, "2.84", attachBody(vol, map[string]any{"delete_on_termination": true})), 400,
		"badRequest", "('delete_on_termination' was unexpected)")
	wantMsg(t, f.doWith(member, "PUT", path+"/"+vol, "2.85", attachBody(vol, map[string]any{"device": "/dev/sdz"})), 400,
		"badRequest", "The device property is not mutable")
	wantMsg(t, f.doWith(member, "PUT", path+"/"+loose, "2.85", attachBody(loose, map[string]any{"delete_on_termination": true})), 404,
		"itemNotFound", "No volume Block Device Mapping with id "+loose)

	f.doWith(member, "PUT", path+"/"+vol, "2.85", attachBody(vol, map[string]any{"delete_on_termination": true, "serverId": id})).
		want(t, http.StatusAccepted)
	if v := f.volume(vol); !v.DeleteOnTermination || v.ServerID != id {
		t.Errorf("registry after the update: %+v", v)
	}
	if s := f.server(id); s.Spec.Volumes[0].DeleteOnTermination != true {
		t.Errorf("Spec.Volumes after the update: %+v", s.Spec.Volumes)
	}
	one := obj(t, f.do("GET", path+"/"+vol, "2.85", nil).want(t, http.StatusOK).body, "volumeAttachment")
	if one["delete_on_termination"] != true {
		t.Errorf("shown after the update: %v", one)
	}
}
