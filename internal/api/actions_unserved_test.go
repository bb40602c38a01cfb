package api_test

import (
	"strings"
	"testing"
)

// TestUnservedActionOnMissingServer: as in Nova, an action on a server that
// is not there, or is another project's, is a 404 whatever the action, even
// one ingot does not serve (migrate, os-getConsoleOutput, createImage);
// on a visible server such an action is the 400 that says so.
func TestUnservedActionOnMissingServer(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("web")
	for _, body := range []map[string]any{
		{"migrate": nil},
		{"os-getConsoleOutput": map[string]any{"length": 10}},
		{"createImage": map[string]any{"name": "snap"}},
	} {
		f.action(otherAdmin, unknownID, "2.1", body).want(t, 404)
		f.action(stranger, id, "2.1", body).want(t, 404)
		r := f.action(member, id, "2.1", body).want(t, 400)
		if !strings.Contains(string(r.raw), "not supported by ingot") {
			t.Errorf("%v: %s", body, r.raw)
		}
	}
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
