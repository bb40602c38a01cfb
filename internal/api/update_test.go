package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// TestUpdateServer: PUT /servers/{id} changes name, description (2.19)
// and hostname (2.90) and answers with the server, in Nova's smaller body
// below 2.75.
func TestUpdateServer(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("before")
	put := func(h http.Header, mv string, body any) response {
		return f.doWith(h, "PUT", "/v2.1/servers/"+id, mv, body)
	}
	for _, c := range []struct {
		mv   string
		body string
		msg  string
	}{
		{"2.90", `{"server": {"name": ""}}`, "name"},
		{"2.90", `{"server": {"name": " x"}}`, "whitespace"},
		{"2.18", `{"server": {"description": "d"}}`, "description"},
		{"2.90", `{"server": {"description": "` + strings.Repeat("d", 256) + `"}}`, "description"},
		{"2.89", `{"server": {"hostname": "h1"}}`, "hostname"},
		{"2.90", `{"server": {"hostname": "-bad"}}`, "hostname"},
		{"2.90", `{"server": {"hostname": "a.b"}}`, "hostname"},
		{"2.90", `{"server": {"flavorRef": "2"}}`, "flavorRef"},
		{"2.90", `{"server": {"accessIPv4": "1.2.3.4.5"}}`, "accessIPv4"},
		{"2.90", `{"server": {"accessIPv6": "notvalid"}}`, "accessIPv6"},
		{"2.90", `{"servers": {}}`, "servers"},
		{"2.90", `{"server": []}`, "server"},
	} {
		wantMsg(t, put(member, c.mv, c.body), 400, "badRequest", c.msg)
	}
	put(reader, "2.90", `{"server": {"name": "x"}}`).novaError(t, 403, "forbidden")
	put(stranger, "2.90", `{"server": {"name": "x"}}`).novaError(t, 404, "itemNotFound")

	f.clock.Advance(time.Minute)
	r := put(member, "2.90", `{"server": {"name": "after", "description": "web tier", "hostname": "web-1"}}`).want(t, 200)
	v := obj(t, r.body, "server")
	if v["name"] != "after" || v["description"] != "web tier" || v["OS-EXT-SRV-ATTR:hostname"] != "web-1" ||
		v["updated"] != "2026-11-30T01:01:00Z" || v["OS-EXT-STS:vm_state"] != "active" {
		t.Errorf("PUT answer %s", r.raw)
	}
	s := f.server(id)
	if s.Name != "after" || s.Spec.Hostname != "web-1" || *s.Spec.Description != "web tier" {
		t.Fatalf("recorded %q %+v", s.Name, s.Spec)
	}
	if got := f.actionNames(id); len(got) != 1 {
		t.Errorf("PUT recorded an action: %v", got)
	}
	// Below 2.75: no OS-EXT-STS, AZ, key_name, security groups, and bare addresses.
	r = put(member, "2.74", `{"server": {"description": null}}`).want(t, 200)
	v = obj(t, r.body, "server")
	for _, k := range []string{"OS-EXT-STS:vm_state", "OS-EXT-AZ:availability_zone", "key_name", "security_groups", "OS-EXT-SRV-ATTR:hostname"} {
		if _, ok := v[k]; ok {
			t.Errorf("PUT at 2.74 carries %s", k)
		}
	}
	if v["description"] != nil || v["locked"] != false {
		t.Errorf("PUT at 2.74: %s", r.raw)
	}
	if s := f.server(id); s.Spec.Description != nil {
		t.Errorf("description null kept %q", *s.Spec.Description)
	}
	r = put(member, "2.1", `{"server": {"name": "v21", "OS-DCF:diskConfig": "AUTO"}}`).want(t, 200)
	if _, ok := obj(t, r.body, "server")["description"]; ok {
		t.Errorf("PUT at 2.1 carries description: %s", r.raw)
	}
}

// TestServerMetadata: POST merges, PUT replaces, one item is read, set and
// deleted, in Nova's shapes; writes are refused while building or locked
// (409) and past metadata_items (403).
func TestServerMetadata(t *testing.T) {
	f := newFixtureWith(t, func(c *api.Config) { c.Quotas = store.Limits{store.ResMetadataItems: 3} })
	id := f.activeServer("md")
	md := func(method, path string, body any) response {
		return f.doWith(member, method, "/v2.1/servers/"+id+"/metadata"+path, "2.90", body)
	}
	asMap := func(v any) map[string]any { return v.(map[string]any) }
	if r := md("POST", "", `{"metadata": {"a": "1", "b": "2"}}`).want(t, 200); len(asMap(r.body["metadata"])) != 2 {
		t.Errorf("POST answer %s", r.raw)
	}
	if r := md("POST", "", `{"metadata": {"b": "3", "c": "4"}}`).want(t, 200); fmt.Sprint(r.body["metadata"]) != "map[a:1 b:3 c:4]" {
		t.Errorf("merge answer %s", r.raw)
	}
	wantMsg(t, md("POST", "", `{"metadata": {"d": "5"}}`), 403, "forbidden", "Maximum number of metadata items exceeds 3")
	if r := md("PUT", "", `{"metadata": {"x": "9"}}`).want(t, 200); fmt.Sprint(r.body["metadata"]) != "map[x:9]" {
		t.Errorf("replace answer %s", r.raw)
	}
	if r := md("GET", "/x", nil).want(t, 200); fmt.Sprint(r.body["meta"]) != "map[x:9]" {
		t.Errorf("item %s", r.raw)
	}
	md("GET", "/nope", nil).novaError(t, 404, "itemNotFound")
	if r := md("PUT", "/y", `{"meta": {"y": "8"}}`).want(t, 200); fmt.Sprint(r.body["meta"]) != "map[y:8]" {
		t.Errorf("set item %s", r.raw)
	}
	wantMsg(t, md("PUT", "/y", `{"meta": {"z": "8"}}`), 400, "badRequest", "Request body and URI mismatch")
	md("PUT", "/y", `{"meta": {"y": "8", "w": "1"}}`).novaError(t, 400, "badRequest")
	md("PUT", "/y", `{"meta": {}}`).novaError(t, 400, "badRequest")
	md("POST", "", `{"metadata": {"a": 1}}`).novaError(t, 400, "badRequest")
	md("POST", "", `{"meta": {"a": "1"}}`).novaError(t, 400, "badRequest")
	md("PUT", "", `{"metadata": null}`).novaError(t, 400, "badRequest")
	md("DELETE", "/x", nil).want(t, http.StatusNoContent)
	md("DELETE", "/x", nil).novaError(t, 404, "itemNotFound")
	if s := f.server(id); fmt.Sprint(s.Spec.Metadata) != "map[y:8]" {
		t.Errorf("stored %v", s.Spec.Metadata)
	}
	if r := f.do("GET", "/v2.1/servers/"+id, "2.90", nil); fmt.Sprint(obj(t, r.body, "server")["metadata"]) != "map[y:8]" {
		t.Errorf("server body metadata %s", r.raw)
	}
	f.doWith(reader, "PUT", "/v2.1/servers/"+id+"/metadata", "2.90", `{"metadata": {}}`).novaError(t, 403, "forbidden")
	f.doWith(stranger, "GET", "/v2.1/servers/"+id+"/metadata/y", "2.90", nil).novaError(t, 404, "itemNotFound")

	// Nova's state check: not while building, not with a task in progress.
	building := f.create("b")
	wantMsg(t, f.doWith(member, "POST", "/v2.1/servers/"+building+"/metadata", "2.90", `{"metadata": {"a": "1"}}`),
		409, "conflictingRequest", "Cannot 'update metadata' instance "+building+" while it is in vm_state building")
	f.action(member, id, "2.90", `{"os-stop": null}`).want(t, http.StatusAccepted)
	wantMsg(t, md("DELETE", "/y", nil), 409, "conflictingRequest", "Cannot 'delete metadata' instance "+id+" while it is in task_state powering-off")
	f.finishOp(id, lifecycle.PhaseStopped)
	md("PUT", "", `{"metadata": {}}`).want(t, 200)
	if s := f.server(id); s.Spec.Metadata != nil {
		t.Errorf("emptied metadata stored as %v", s.Spec.Metadata)
	}
}

// TestServerTags: every tag route from 2.26 (404 before), Nova's
// validation and limits, the state check, tags at create from 2.52 and
// in the server body.
func TestServerTags(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("tagged")
	tags := func(method, path, mv string, body any) response {
		return f.doWith(member, method, "/v2.1/servers/"+id+"/tags"+path, mv, body)
	}
	tags("GET", "", "2.25", nil).novaError(t, 404, "itemNotFound")
	tags("PUT", "/a", "2.25", nil).novaError(t, 404, "itemNotFound")
	if r := tags("GET", "", "2.26", nil).want(t, 200); len(list(t, r.body, "tags")) != 0 {
		t.Errorf("fresh tags %s", r.raw)
	}
	if r := tags("PUT", "", "2.26", `{"tags": ["b", "a", "b"]}`).want(t, 200); fmt.Sprint(r.body["tags"]) != "[a b]" {
		t.Errorf("replace %s", r.raw)
	}
	r := tags("PUT", "/c", "2.26", nil).want(t, http.StatusCreated)
	if !strings.HasSuffix(r.header.Get("Location"), "/v2.1/servers/"+id+"/tags/c") {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	tags("PUT", "/c", "2.26", nil).want(t, http.StatusNoContent)
	tags("GET", "/c", "2.26", nil).want(t, http.StatusNoContent)
	wantMsg(t, tags("GET", "/zz", "2.26", nil), 404, "itemNotFound", "Server "+id+" has no tag 'zz'")
	tags("DELETE", "/a", "2.26", nil).want(t, http.StatusNoContent)
	wantMsg(t, tags("DELETE", "/a", "2.26", nil), 404, "itemNotFound", "has no tag 'a'")
	if v := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.26", nil).body, "server"); fmt.Sprint(v["tags"]) != "[b c]" {
		t.Errorf("server body tags %v", v["tags"])
	}
	if _, ok := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.25", nil).body, "server")["tags"]; ok {
		t.Error("tags shown below 2.26")
	}
	for _, bad := range []string{"a%2Cb", "a%2Fb", strings.Repeat("t", 61)} {
		wantMsg(t, tags("PUT", "/"+bad, "2.26", nil), 400, "badRequest", "is invalid")
	}
	tags("PUT", "/ok", "2.26", `{"x": 1}`).novaError(t, 400, "badRequest")
	for _, bad := range []string{`{"tags": ["a/b"]}`, `{"tags": [""]}`, `{"tags": "a"}`, `{}`, `{"tags": [], "x": 1}`} {
		tags("PUT", "", "2.26", bad).novaError(t, 400, "badRequest")
	}
	var fifty []string
	for i := range 50 {
		fifty = append(fifty, fmt.Sprintf("t%02d", i))
	}
	tags("PUT", "", "2.26", map[string]any{"tags": fifty}).want(t, 200)
	wantMsg(t, tags("PUT", "/one-more", "2.26", nil), 400, "badRequest", "The number of tags exceeded the per-server limit 50")
	tags("PUT", "", "2.26", map[string]any{"tags": append(fifty, "t50")}).novaError(t, 400, "badRequest")
	tags("DELETE", "", "2.26", nil).want(t, http.StatusNoContent)
	if s := f.server(id); len(s.Spec.Tags) != 0 {
		t.Errorf("tags after delete all: %v", s.Spec.Tags)
	}
	f.doWith(reader, "PUT", "/v2.1/servers/"+id+"/tags/x", "2.26", nil).novaError(t, 403, "forbidden")
	f.doWith(reader, "GET", "/v2.1/servers/"+id+"/tags", "2.26", nil).want(t, 200)
	f.doWith(stranger, "GET", "/v2.1/servers/"+id+"/tags", "2.26", nil).novaError(t, 404, "itemNotFound")
	building := f.create("b")
	wantMsg(t, f.doWith(member, "PUT", "/v2.1/servers/"+building+"/tags/x", "2.26", nil), 409, "conflictingRequest",
		"Cannot 'update tag' instance "+building+" while it is in vm_state building")

	// At create: from 2.52.
	body := validCreate()
	body["server"].(map[string]any)["tags"] = []any{"web", "prod"}
	f.do("POST", "/v2.1/servers", "2.51", body).novaError(t, 400, "badRequest")
	r = f.do("POST", "/v2.1/servers", "2.52", body).want(t, http.StatusAccepted)
	if s := f.server(obj(t, r.body, "server")["id"].(string)); !slices.Equal(s.Spec.Tags, []string{"prod", "web"}) {
		t.Errorf("created with tags %v", s.Spec.Tags)
	}
}

// TestSecurityGroupsOfServer: ingot has none to show.
func TestSecurityGroupsOfServer(t *testing.T) {
	f := newFixture(t)
	id := f.create("sg")
	if r := f.doWith(reader, "GET", "/v2.1/servers/"+id+"/os-security-groups", "2.1", nil).want(t, 200); string(r.raw) != "{\"security_groups\":[]}\n" {
		t.Errorf("answer %q", r.raw)
	}
	f.doWith(stranger, "GET", "/v2.1/servers/"+id+"/os-security-groups", "2.1", nil).novaError(t, 404, "itemNotFound")
}

// TestListFilters: the tag filters (2.26), changes-since (deleted servers
// included) and changes-before (2.66), sort_key/sort_dir with Nova's
// validation, and the status filter of the day-2 statuses.
func TestListFilters(t *testing.T) {
	f := newFixture(t)
	mk := func(name string, tags ...string) string {
		body := validCreate()
		s := body["server"].(map[string]any)
		s["name"] = name
		if len(tags) > 0 {
			s["tags"] = tags
		}
		f.clock.Advance(time.Second)
		return obj(t, f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	}
	a, b, c := mk("c-srv", "red"), mk("a-srv", "red", "blue"), mk("b-srv", "blue")
	names := func(q, mv string) string {
		var out []string
		for _, s := range list(t, f.do("GET", "/v2.1/servers/detail?"+q, mv, nil).want(t, 200).body, "servers") {
			out = append(out, s.(map[string]any)["name"].(string))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct{ q, mv, want string }{
		{"tags=red", "2.26", "c-srv,a-srv"},
		{"tags=red,blue", "2.26", "a-srv"},
		{"tags-any=red,blue", "2.26", "c-srv,a-srv,b-srv"},
		{"not-tags=red,blue", "2.26", "c-srv,b-srv"},
		{"not-tags-any=red", "2.26", "b-srv"},
		{"tags=red", "2.25", "c-srv,a-srv,b-srv"},
		{"sort_key=display_name", "2.90", "c-srv,b-srv,a-srv"},
		{"sort_key=display_name&sort_dir=asc", "2.90", "a-srv,b-srv,c-srv"},
		{"sort_dir=asc", "2.90", "c-srv,a-srv,b-srv"},
		{"sort_dir=desc", "2.90", "b-srv,a-srv,c-srv"},
		{"sort_key=vm_state&sort_dir=asc", "2.90", "c-srv,a-srv,b-srv"},
		{"sort_key=id&sort_dir=asc", "2.74", "c-srv,a-srv,b-srv"},
		{"sort_key=display_name&sort_dir=asc&limit=1&marker=" + b, "2.90", "b-srv"},
	} {
		if got := names(tc.q, tc.mv); got != tc.want {
			t.Errorf("%s at %s: %s, want %s", tc.q, tc.mv, got, tc.want)
		}
	}
	for _, q := range []string{"sort_key=bogus", "sort_dir=up", "sort_key=display_name&sort_dir=asc&sort_dir=desc", "changes-since=yesterday",
		"changes-since=2026-11-30T02:00:00Z&changes-before=2026-11-30T01:00:00Z"} {
		f.do("GET", "/v2.1/servers/detail?"+q, "2.90", nil).novaError(t, 400, "badRequest")
	}
	f.do("GET", "/v2.1/servers?sort_key=id", "2.75", nil).novaError(t, 400, "badRequest")
	wantMsg(t, f.doWith(member, "GET", "/v2.1/servers?sort_key=host", "2.90", nil), 403, "forbidden", "Only administrators can sort servers by host")
	f.do("GET", "/v2.1/servers?sort_key=host", "2.90", nil).want(t, 200)

	// changes-since: servers updated since, deleted ones too (as Nova).
	f.clock.Advance(time.Minute)
	since := f.clock.Now().UTC().Format(time.RFC3339)
	f.clock.Advance(time.Second)
	f.do("DELETE", "/v2.1/servers/"+c, "2.90", nil).want(t, http.StatusNoContent)
	f.advance(c, func(s *lifecycle.Server) { s.Phase = lifecycle.PhaseDeleted })
	f.advance(a, activeSetup)
	if got := names("changes-since="+since, "2.90"); got != "c-srv,b-srv" {
		t.Errorf("changes-since %s: %s, want the active and the deleted one", since, got)
	}
	var deleted map[string]any
	for _, s := range list(t, f.do("GET", "/v2.1/servers/detail?changes-since="+since, "2.90", nil).body, "servers") {
		if m := s.(map[string]any); m["id"] == c {
			deleted = m
		}
	}
	if deleted == nil || deleted["status"] != "DELETED" {
		t.Errorf("deleted server in changes-since: %v", deleted)
	}
	if got := names("changes-before="+since, "2.66"); got != "a-srv" {
		t.Errorf("changes-before: %s, want a-srv", got)
	}
	if got := names("changes-before="+since, "2.65"); got != "c-srv,a-srv" {
		t.Errorf("changes-before below 2.66 (ignored): %s", got)
	}
	if got := names("changes-since="+since+"&changes-before="+since, "2.66"); got != "" {
		t.Errorf("an empty window: %s", got)
	}
	if got := names("changes-since=2026-11-30T01:00:00", "2.90"); got != "c-srv,a-srv,b-srv" {
		t.Errorf("changes-since without a zone: %s", got)
	}

	// The status filter follows the day-2 statuses.
	f.advance(b, activeSetup)
	f.action(member, a, "2.90", `{"reboot": {"type": "HARD"}}`).want(t, http.StatusAccepted)
	f.action(member, b, "2.90", `{"os-stop": null}`).want(t, http.StatusAccepted)
	f.finishOp(b, lifecycle.PhaseStopped)
	for _, tc := range []struct{ status, want string }{
		{"ACTIVE", ""}, {"HARD_REBOOT", "c-srv"}, {"SHUTOFF", "a-srv"}, {"BUILD", ""}, {"REBOOT", ""},
	} {
		if got := names("status="+tc.status, "2.90"); got != tc.want {
			t.Errorf("status=%s: %q, want %q", tc.status, got, tc.want)
		}
	}
}
