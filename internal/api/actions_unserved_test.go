package api_test

import (
	"strings"
	"testing"
)

// TestUnservedActionOnMissingServer: as in Nova, an action on a server that
// is not there, or is another project's, is a 404 whatever the action, even
// one ingot does not serve; on a visible server such an action is what Nova
// in front of Ironic answers: 409 for what needs a hypervisor, 501 for what
// the driver lacks, 400 for a console type not enabled; and an action Nova
// does not know is its 400 before anything else.
func TestUnservedActionOnMissingServer(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("web")
	for _, tc := range []struct {
		body   map[string]any
		status int
		text   string
	}{
		{map[string]any{"migrate": nil}, 409, "Cannot 'migrate' instance " + id},
		{map[string]any{"os-getConsoleOutput": map[string]any{"length": 10}}, 501, "The requested functionality is not supported."},
		{map[string]any{"pause": nil}, 501, "The requested functionality is not supported."},
		{map[string]any{"changePassword": map[string]any{"adminPass": "x"}}, 501, "Unable to set password on instance"},
		{map[string]any{"createImage": map[string]any{"name": "snap"}}, 409, "Cannot 'createImage' instance " + id},
		{map[string]any{"os-getVNCConsole": map[string]any{"type": "novnc"}}, 400, "Unavailable console type novnc."},
	} {
		f.action(otherAdmin, unknownID, "2.1", tc.body).want(t, 404)
		f.action(stranger, id, "2.1", tc.body).want(t, 404)
		r := f.action(member, id, "2.1", tc.body).want(t, tc.status)
		if !strings.Contains(string(r.raw), tc.text) {
			t.Errorf("%v: %s", tc.body, r.raw)
		}
	}
	r := f.action(member, unknownID, "2.1", map[string]any{"frobnicate": nil}).want(t, 400)
	if !strings.Contains(string(r.raw), "There is no such action: frobnicate") {
		t.Errorf("unknown action: %s", r.raw)
	}
}

// TestRemoteConsoles: no console type is enabled, so every one is Nova's
// 400 Unavailable console type (rdp named by its protocol); a bad protocol
// is the schema's 400, an unknown server 404, and below 2.6 no route.
func TestRemoteConsoles(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("web")
	path := "/v2.1/servers/" + id + "/remote-consoles"
	for proto, typ := range map[string]string{"vnc": "novnc", "serial": "serial", "spice": "spice-html5", "rdp": "rdp-html5"} {
		body := map[string]any{"remote_console": map[string]any{"protocol": proto, "type": typ}}
		r := f.doWith(member, "POST", path, "2.8", body).want(t, 400)
		want := map[bool]string{true: proto, false: typ}[proto == "rdp"]
		if !strings.Contains(string(r.raw), "Unavailable console type "+want+".") {
			t.Errorf("%s: %s", proto, r.raw)
		}
	}
	ok := map[string]any{"remote_console": map[string]any{"protocol": "vnc", "type": "novnc"}}
	f.doWith(member, "POST", path, "2.8", map[string]any{"remote_console": map[string]any{"protocol": "x", "type": "novnc"}}).novaError(t, 400, "badRequest")
	f.doWith(member, "POST", "/v2.1/servers/"+unknownID+"/remote-consoles", "2.8", ok).want(t, 404)
	f.doWith(member, "POST", path, "2.5", ok).want(t, 404)
}

// TestRestore: ingot never soft-deletes, so restoring a visible server is
// Nova's 409 (wrong vm_state); an unknown or another project's server 404;
// a reader may not (os-deferred-delete:restore is a member's rule).
func TestRestore(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("web")
	r := f.action(member, id, "2.1", map[string]any{"restore": nil}).want(t, 409)
	if !strings.Contains(string(r.raw), "Cannot 'restore' instance "+id+" while it is in vm_state active") {
		t.Errorf("restore: %s", r.raw)
	}
	f.action(member, unknownID, "2.1", map[string]any{"restore": nil}).want(t, 404)
	f.action(stranger, id, "2.1", map[string]any{"restore": nil}).want(t, 404)
	f.action(reader, id, "2.1", map[string]any{"restore": nil}).want(t, 403)
}
