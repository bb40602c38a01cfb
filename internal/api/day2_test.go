package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// Identities of the day-2 tests (noauth headers): the owner's member and
// reader, another project's member, and an admin of another project.
var (
	member      = http.Header{"X-Auth-Project-Id": {"ingot"}, "X-Auth-User-Id": {"alice"}, "X-Roles": {"member,reader"}}
	reader      = http.Header{"X-Auth-Project-Id": {"ingot"}, "X-Auth-User-Id": {"bob"}, "X-Roles": {"reader"}}
	stranger    = http.Header{"X-Auth-Project-Id": {"other"}, "X-Auth-User-Id": {"eve"}, "X-Roles": {"member,reader"}}
	otherAdmin  = http.Header{"X-Auth-Project-Id": {"admins"}, "X-Auth-User-Id": {"root"}, "X-Roles": {"admin,member,reader"}}
	activeSetup = func(s *lifecycle.Server) {
		s.Phase, s.NodeID, s.LaunchedAt = lifecycle.PhaseActive, "node-"+s.ID[:8], t0
	}
)

func (f *fixture) action(h http.Header, id, mv string, body any) response {
	f.t.Helper()
	return f.doWith(h, "POST", "/v2.1/servers/"+id+"/action", mv, body)
}

// activeServer is a server the reconciler has built.
func (f *fixture) activeServer(name string) string {
	f.t.Helper()
	id := f.create(name)
	f.advance(id, activeSetup)
	return id
}

// volumeBacked makes the server one booted from a volume (no image).
func (f *fixture) volumeBacked(id string) {
	f.t.Helper()
	if _, err := f.store.UpdateServer(context.Background(), id, nil, func(s *lifecycle.Server) error {
		s.Spec.ImageID = ""
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) server(id string) *lifecycle.Server {
	f.t.Helper()
	s, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// finishOp plays the reconciler: the operation done, the server at rest in p.
func (f *fixture) finishOp(id string, p lifecycle.Phase) {
	f.t.Helper()
	f.advance(id, func(s *lifecycle.Server) { s.Phase, s.OpDone = p, s.OpGen })
}

// actionNames lists the server's instance actions, newest first.
func (f *fixture) actionNames(id string) []string {
	f.t.Helper()
	var out []string
	for _, a := range list(f.t, f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions", "2.90", nil).want(f.t, 200).body, "instanceActions") {
		out = append(out, a.(map[string]any)["action"].(string))
	}
	return out
}

func wantMsg(t *testing.T, r response, status int, key, sub string) {
	t.Helper()
	if msg := r.novaError(t, status, key); !strings.Contains(msg, sub) {
		t.Errorf("message %q does not say %q", msg, sub)
	}
}

// TestRebootStopStart: each power action is validated, refused in a state
// Nova refuses it in (409 with Nova's text), recorded with its instance
// action and the kick before its 202, and shown as Nova shows it.
func TestRebootStopStart(t *testing.T) {
	f := newFixture(t)
	building := f.create("building")
	wantMsg(t, f.action(member, building, "2.90", map[string]any{"reboot": map[string]any{"type": "SOFT"}}), 409, "conflictingRequest",
		"Cannot 'reboot' instance "+building+" while it is in vm_state building")
	wantMsg(t, f.action(member, building, "2.90", map[string]any{"os-stop": nil}), 409, "conflictingRequest", "Cannot 'stop' instance")

	id := f.activeServer("vm1")
	for _, bad := range []string{`{"reboot": {}}`, `{"reboot": {"type": "WARM"}}`, `{"reboot": {"type": "HARD", "x": 1}}`,
		`{"reboot": "HARD"}`, `{"reboot": {"type": "HARD"}, "os-stop": null}`} {
		f.action(member, id, "2.90", bad).novaError(t, 400, "badRequest")
	}
	f.action(reader, id, "2.90", `{"reboot": {"type": "HARD"}}`).novaError(t, 403, "forbidden")
	f.action(stranger, id, "2.90", `{"reboot": {"type": "HARD"}}`).novaError(t, 404, "itemNotFound")
	f.action(member, unknownID, "2.90", `{"os-start": null}`).novaError(t, 404, "itemNotFound")
	if s := f.server(id); s.OpGen != 0 {
		t.Fatalf("a refused action recorded an operation: %+v", s.Op)
	}

	kicks := len(f.kicks)
	r := f.action(member, id, "2.90", `{"reboot": {"type": "soft"}}`).want(t, http.StatusAccepted)
	if len(r.raw) != 0 {
		t.Errorf("reboot answered a body: %s", r.raw)
	}
	if len(f.kicks) != kicks+1 {
		t.Errorf("reboot did not kick the reconciler")
	}
	s := f.server(id)
	if s.Op.Kind != lifecycle.OpReboot || s.Op.Hard || s.OpGen != 1 || s.Op.RequestID != r.header.Get("X-Openstack-Request-Id") {
		t.Fatalf("recorded %+v gen %d", s.Op, s.OpGen)
	}
	show := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server")
	if show["status"] != "REBOOT" || show["OS-EXT-STS:task_state"] != "reboot_pending" {
		t.Errorf("after reboot: %v / %v", show["status"], show["OS-EXT-STS:task_state"])
	}
	wantMsg(t, f.action(member, id, "2.90", `{"reboot": {"type": "HARD"}}`), 409, "conflictingRequest",
		"Cannot 'reboot' instance "+id+" while it is in task_state reboot_pending")
	f.finishOp(id, lifecycle.PhaseActive)

	wantMsg(t, f.action(member, id, "2.90", `{"os-start": null}`), 409, "conflictingRequest", "while it is in vm_state active")
	f.action(member, id, "2.90", `{"os-stop": null}`).want(t, http.StatusAccepted)
	show = obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server")
	if show["status"] != "ACTIVE" || show["OS-EXT-STS:task_state"] != "powering-off" {
		t.Errorf("after stop: %v / %v", show["status"], show["OS-EXT-STS:task_state"])
	}
	f.finishOp(id, lifecycle.PhaseStopped)
	wantMsg(t, f.action(member, id, "2.90", `{"reboot": {"type": "SOFT"}}`), 409, "conflictingRequest", "vm_state stopped")
	f.action(member, id, "2.90", `{"os-start": {}}`).want(t, http.StatusAccepted)
	if s := f.server(id); s.Op.Kind != lifecycle.OpStart || s.OpGen != 3 {
		t.Fatalf("start recorded %+v gen %d", s.Op, s.OpGen)
	}
	if got := f.actionNames(id); strings.Join(got, ",") != "start,stop,reboot,create" {
		t.Errorf("instance actions %v", got)
	}
}

// TestRacingActionsOneWins: of concurrent operations on one server, the
// store's re-check lets exactly one through; the others get 409.
func TestRacingActionsOneWins(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("race")
	const n = 8
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := `{"reboot": {"type": "HARD"}}`
			if i%2 == 1 {
				body = `{"os-stop": null}`
			}
			codes[i] = f.action(member, id, "2.90", body).status
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case http.StatusAccepted:
			won++
		case http.StatusConflict:
		default:
			t.Errorf("status %d", c)
		}
	}
	if s := f.server(id); won != 1 || s.OpGen != 1 {
		t.Fatalf("%d requests won (codes %v), OpGen %d: want exactly one", won, codes, s.OpGen)
	}
}

// TestLock: a locked server refuses actions and deletes from non-admins
// with Nova's 409; the reason shows from 2.73; an admin's lock is not the
// owner's to lift.
func TestLock(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("locked")
	show := func(mv string) map[string]any {
		return obj(t, f.do("GET", "/v2.1/servers/"+id, mv, nil).want(t, 200).body, "server")
	}
	if v := show("2.9"); v["locked"] != false {
		t.Errorf("locked at 2.9 before lock: %v", v["locked"])
	}
	if _, ok := show("2.8")["locked"]; ok {
		t.Error("locked shown below 2.9")
	}
	f.action(reader, id, "2.73", `{"lock": null}`).novaError(t, 403, "forbidden")
	f.action(stranger, id, "2.73", `{"lock": null}`).novaError(t, 404, "itemNotFound")
	f.action(member, id, "2.73", `{"lock": {"locked_reason": ""}}`).novaError(t, 400, "badRequest")
	f.action(member, id, "2.73", `{"lock": {"reason": "x"}}`).novaError(t, 400, "badRequest")
	f.action(member, id, "2.73", `{"lock": {"locked_reason": "maintenance window"}}`).want(t, http.StatusAccepted)
	if v := show("2.73"); v["locked"] != true || v["locked_reason"] != "maintenance window" {
		t.Errorf("after lock: locked %v reason %v", v["locked"], v["locked_reason"])
	}
	if _, ok := show("2.72")["locked_reason"]; ok {
		t.Error("locked_reason shown below 2.73")
	}
	for _, body := range []string{`{"reboot": {"type": "HARD"}}`, `{"os-stop": null}`, `{"rescue": null}`, `{"forceDelete": null}`,
		`{"rebuild": {"imageRef": "` + imageID + `"}}`} {
		wantMsg(t, f.action(member, id, "2.90", body), 409, "conflictingRequest", "Instance "+id+" is locked")
	}
	wantMsg(t, f.doWith(member, "DELETE", "/v2.1/servers/"+id, "2.90", nil), 409, "conflictingRequest", "Instance "+id+" is locked")
	wantMsg(t, f.doWith(member, "PUT", "/v2.1/servers/"+id+"/metadata/k", "2.90", `{"meta": {"k": "v"}}`), 409, "conflictingRequest", "is locked")
	if s := f.server(id); s.OpGen != 0 || s.Desired != lifecycle.DesiredActive {
		t.Fatalf("a locked server changed: %+v", s)
	}
	// Tags and the name are not lock-checked (as in Nova).
	f.doWith(member, "PUT", "/v2.1/servers/"+id+"/tags/t1", "2.90", nil).want(t, http.StatusCreated)
	// An owner locking a locked server changes nothing (no second action).
	f.action(member, id, "2.73", `{"lock": null}`).want(t, http.StatusAccepted)
	if got := f.actionNames(id); strings.Join(got, ",") != "lock,create" {
		t.Errorf("instance actions %v", got)
	}
	// An admin passes the lock.
	f.action(otherAdmin, id, "2.90", `{"reboot": {"type": "HARD"}}`).want(t, http.StatusAccepted)
	f.finishOp(id, lifecycle.PhaseActive)
	f.action(member, id, "2.73", `{"unlock": null}`).want(t, http.StatusAccepted)
	if v := show("2.73"); v["locked"] != false || v["locked_reason"] != nil {
		t.Errorf("after unlock: locked %v reason %v", v["locked"], v["locked_reason"])
	}
	// Locked by an admin of another project: the owner may not unlock it.
	f.action(otherAdmin, id, "2.1", `{"lock": {}}`).want(t, http.StatusAccepted)
	if s := f.server(id); s.Lock.By != "admin" {
		t.Fatalf("admin lock recorded as %+v", s.Lock)
	}
	f.action(member, id, "2.90", `{"unlock": null}`).novaError(t, 403, "forbidden")
	f.action(otherAdmin, id, "2.90", `{"unlock": null}`).want(t, http.StatusAccepted)
	f.doWith(member, "DELETE", "/v2.1/servers/"+id, "2.90", nil).want(t, http.StatusNoContent)
	if got := f.actionNames(id); got[0] != "delete" || got[1] != "unlock" || got[2] != "lock" {
		t.Errorf("instance actions %v", got)
	}
}

// TestRescue: 200 with the password (given or generated), a volume-backed
// server refused (400), a node without a rescue interface refused (409,
// read from Ironic), unrescue only from RESCUE; with instance passwords
// disabled the answer is {}.
func TestRescue(t *testing.T) {
	var mu sync.Mutex
	ifaces := map[string]string{}
	iface := func(_ context.Context, node string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if v, ok := ifaces[node]; ok {
			return v, nil
		}
		return "", ironic.ErrUnavailable
	}
	f := newFixtureWith(t, func(c *api.Config) { c.RescueInterface = iface })
	id := f.activeServer("resc")
	node := f.server(id).NodeID
	for _, bad := range []string{`{"rescue": {"adminPass": 5}}`, `{"rescue": {"rescue_image_ref": "x"}}`, `{"rescue": {"foo": 1}}`, `{"rescue": 3}`} {
		f.action(member, id, "2.90", bad).novaError(t, 400, "badRequest")
	}
	mu.Lock()
	ifaces[node] = "no-rescue"
	mu.Unlock()
	wantMsg(t, f.action(member, id, "2.90", `{"rescue": null}`), 409, "conflictingRequest", "no-rescue")
	mu.Lock()
	ifaces[node] = "fake"
	mu.Unlock()
	wantMsg(t, f.action(member, id, "2.90", `{"unrescue": null}`), 409, "conflictingRequest", "Cannot 'unrescue' instance "+id+" while it is in vm_state active")
	r := f.action(member, id, "2.90", `{"rescue": {"adminPass": "s3cret", "rescue_image_ref": "`+imageID+`"}}`).want(t, http.StatusOK)
	if r.body["adminPass"] != "s3cret" || len(r.body) != 1 {
		t.Errorf("rescue answered %s", r.raw)
	}
	if s := f.server(id); s.Op.Kind != lifecycle.OpRescue || s.Op.RescuePassword != "s3cret" {
		t.Fatalf("rescue recorded %+v", s.Op)
	}
	if v := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).body, "server"); v["OS-EXT-STS:task_state"] != "rescuing" ||
		strings.Contains(string(f.do("GET", "/v2.1/servers/"+id, "2.90", nil).raw), "s3cret") {
		t.Errorf("while rescuing: task_state %v (and the password must never show)", v["OS-EXT-STS:task_state"])
	}
	f.finishOp(id, lifecycle.PhaseRescued)
	if v := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).body, "server"); v["status"] != "RESCUE" {
		t.Errorf("rescued shows %v", v["status"])
	}
	f.action(member, id, "2.90", `{"unrescue": null}`).want(t, http.StatusAccepted)
	f.finishOp(id, lifecycle.PhaseActive)

	// Ironic unreachable: recorded anyway (the reconciler's call tells).
	other := f.activeServer("resc2")
	r = f.action(member, other, "2.90", `{"rescue": null}`).want(t, http.StatusOK)
	if pw, _ := r.body["adminPass"].(string); len(pw) != 12 {
		t.Errorf("generated password %q", pw)
	}

	quiet := newFixtureWith(t, func(c *api.Config) { c.DisableInstancePassword = true })
	id = quiet.activeServer("q")
	if r := quiet.action(member, id, "2.90", `{"rescue": null}`).want(t, http.StatusOK); len(r.body) != 0 {
		t.Errorf("with instance passwords disabled: %s", r.raw)
	}
	vb := quiet.create("vb")
	quiet.advance(vb, activeSetup)
	quiet.volumeBacked(vb)
	wantMsg(t, quiet.action(member, vb, "2.90", `{"rescue": null}`), 400, "badRequest", "volume-backed")
}

// TestRebuild: Nova's schema per microversion, the image and keypair
// resolved, the Spec and name changed in the record with the operation,
// and the answer Nova gives (202, adminPass, user_data from 2.57, the
// smaller body below 2.75).
func TestRebuild(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("rb")
	f.doWith(member, "POST", "/v2.1/os-keypairs", "2.90", map[string]any{"keypair": map[string]any{"name": "k2", "public_key": ed25519Key(t)}}).want(t, http.StatusCreated)
	rb := func(mv string, fields map[string]any) response {
		m := map[string]any{"imageRef": image2ID}
		for k, v := range fields {
			m[k] = v
		}
		return f.action(member, id, mv, map[string]any{"rebuild": m})
	}
	for _, c := range []struct {
		mv     string
		fields map[string]any
		msg    string
	}{
		{"2.90", map[string]any{"imageRef": nil}, "imageRef"},
		{"2.90", map[string]any{"imageRef": unknownID}, "Cannot find image for rebuild"},
		{"2.90", map[string]any{"imageRef": "debian-12"}, "uuid"},
		{"2.53", map[string]any{"key_name": "k2"}, "key_name"},
		{"2.90", map[string]any{"key_name": "nope"}, "Invalid key_name provided."},
		{"2.56", map[string]any{"user_data": "aGk="}, "user_data"},
		{"2.90", map[string]any{"user_data": "not base64!"}, "base64"},
		{"2.18", map[string]any{"description": "d"}, "description"},
		{"2.89", map[string]any{"hostname": "h1"}, "hostname"},
		{"2.90", map[string]any{"hostname": "bad_host"}, "hostname"},
		{"2.90", map[string]any{"name": ""}, "name"},
		{"2.90", map[string]any{"metadata": map[string]any{"a": 1}}, "metadata"},
		{"2.90", map[string]any{"preserve_ephemeral": "maybe"}, "preserve_ephemeral"},
		{"2.90", map[string]any{"accessIPv4": "1.2.3.4.5"}, "accessIPv4"},
		{"2.90", map[string]any{"accessIPv6": "1.2.3.4"}, "accessIPv6"},
		{"2.90", map[string]any{"frobnicate": 1}, "frobnicate"},
	} {
		wantMsg(t, rb(c.mv, c.fields), 400, "badRequest", c.msg)
	}
	if s := f.server(id); s.OpGen != 0 || s.Spec.ImageID != imageID {
		t.Fatalf("a refused rebuild changed the server: %+v", s.Spec)
	}

	r := rb("2.90", map[string]any{"name": "rebuilt", "metadata": map[string]any{"role": "db"}, "user_data": "aGVsbG8=",
		"key_name": "k2", "hostname": "db-1", "preserve_ephemeral": true, "description": "second life", "adminPass": "pw1"}).want(t, http.StatusAccepted)
	v := obj(t, r.body, "server")
	if v["adminPass"] != "pw1" || v["user_data"] != "aGVsbG8=" || v["status"] != "REBUILD" || v["name"] != "rebuilt" ||
		obj(t, v, "image")["id"] != image2ID || v["key_name"] != "k2" || v["OS-EXT-STS:task_state"] != "rebuilding" {
		t.Errorf("rebuild answer %s", r.raw)
	}
	if _, ok := v["OS-EXT-SRV-ATTR:user_data"]; ok {
		t.Error("the rebuild answer carries OS-EXT-SRV-ATTR:user_data")
	}
	if !strings.HasSuffix(r.header.Get("Location"), "/v2.1/servers/"+id) {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	s := f.server(id)
	if s.Op.Kind != lifecycle.OpRebuild || s.Spec.ImageSource != "http://images/ubuntu.qcow2" || s.Spec.Metadata["role"] != "db" ||
		s.Spec.UserData != "aGVsbG8=" || s.Spec.KeyName != "k2" || !strings.HasPrefix(s.Spec.PublicKey, "ssh-ed25519 ") ||
		s.Spec.Hostname != "db-1" || s.Name != "rebuilt" || s.Spec.Description == nil || *s.Spec.Description != "second life" {
		t.Fatalf("rebuild recorded %+v %+v", s.Op, s.Spec)
	}
	wantMsg(t, rb("2.90", nil), 409, "conflictingRequest", "task_state rebuilding")
	f.finishOp(id, lifecycle.PhaseStopped)

	// From SHUTOFF; key_name null drops the key, user_data null clears it;
	// below 2.75 the answer has Nova's smaller set of members.
	r = rb("2.57", map[string]any{"key_name": nil, "user_data": nil}).want(t, http.StatusAccepted)
	v = obj(t, r.body, "server")
	for _, k := range []string{"OS-EXT-STS:vm_state", "OS-EXT-AZ:availability_zone", "security_groups", "config_drive", "OS-SRV-USG:launched_at"} {
		if _, ok := v[k]; ok {
			t.Errorf("rebuild answer at 2.57 carries %s", k)
		}
	}
	if v["key_name"] != nil || v["user_data"] != nil || v["adminPass"] == "" {
		t.Errorf("rebuild at 2.57: %s", r.raw)
	}
	if s := f.server(id); s.Spec.KeyName != "" || s.Spec.PublicKey != "" || s.Spec.UserData != "" || s.Spec.Metadata["role"] != "db" || s.Spec.Hostname != "db-1" {
		t.Errorf("rebuild with nulls recorded %+v", s.Spec)
	}
	f.finishOp(id, lifecycle.PhaseActive)
	r = rb("2.1", nil).want(t, http.StatusAccepted)
	for _, k := range []string{"key_name", "user_data", "locked", "description", "tags"} {
		if _, ok := obj(t, r.body, "server")[k]; ok {
			t.Errorf("rebuild at 2.1 carries %s: %s", k, r.raw)
		}
	}
	f.finishOp(id, lifecycle.PhaseActive)
	r = rb("2.75", nil).want(t, http.StatusAccepted)
	if v := obj(t, r.body, "server"); v["OS-EXT-STS:vm_state"] != "active" || v["OS-EXT-AZ:availability_zone"] != "nova" {
		t.Errorf("rebuild at 2.75 lacks what GET shows: %s", r.raw)
	}

	vb := f.create("vb")
	f.advance(vb, activeSetup)
	f.volumeBacked(vb)
	wantMsg(t, f.action(member, vb, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID}}), 400, "badRequest", "volume-backed")
	f.action(reader, id, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID}}).novaError(t, 403, "forbidden")
}

// TestMetadataQuotaOnRebuild: a rebuild's metadata counts against
// metadata_items (403 as Nova).
func TestMetadataQuotaOnRebuild(t *testing.T) {
	f := newFixtureWith(t, func(c *api.Config) { c.Quotas = store.Limits{store.ResMetadataItems: 1} })
	id := f.activeServer("q")
	wantMsg(t, f.action(member, id, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID,
		"metadata": map[string]any{"a": "1", "b": "2"}}}), 403, "forbidden", "Maximum number of metadata items exceeds 1")
}
