package api_test

import "testing"

// TestServerPassword: the password is always empty (no metadata service
// for a guest to post one to) and clearing it is 204; another project's
// server or an unknown one is 404; a reader may read, not clear.
func TestServerPassword(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("web")
	path := "/v2.1/servers/" + id + "/os-server-password"
	r := f.doWith(reader, "GET", path, "2.1", nil).want(t, 200)
	if p, ok := r.body["password"]; !ok || p != "" || len(r.body) != 1 {
		t.Errorf("show: %s", r.raw)
	}
	f.doWith(member, "DELETE", path, "2.90", nil).want(t, 204)
	f.doWith(reader, "DELETE", path, "2.90", nil).want(t, 403)
	f.doWith(stranger, "GET", path, "2.1", nil).want(t, 404)
	f.doWith(stranger, "DELETE", path, "2.1", nil).want(t, 404)
	f.doWith(member, "GET", "/v2.1/servers/"+unknownID+"/os-server-password", "2.1", nil).want(t, 404)
	f.doWith(otherAdmin, "GET", path, "2.1", nil).want(t, 200)
}
