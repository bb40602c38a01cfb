package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func aggPath(id any) string { return fmt.Sprintf("/v2.1/os-aggregates/%v", id) }

// createAgg creates an aggregate and returns its id.
func createAgg(t *testing.T, f *fixture, body string) float64 {
	t.Helper()
	a := obj(t, f.do("POST", "/v2.1/os-aggregates", "2.1", body).want(t, http.StatusOK).body, "aggregate")
	return a["id"].(float64)
}

func TestAggregatesShape(t *testing.T) {
	f, _ := adminFixture(t)
	base := "availability_zone,created_at,deleted,deleted_at,id,name,updated_at"
	for _, mv := range []string{"2.1", "2.40", "2.41", "2.90"} {
		uuid := mv >= "2.41"
		keys := func(k string) string {
			if uuid {
				return k + ",uuid" // sorts last
			}
			return k
		}
		name := "agg-" + mv
		created := obj(t, f.do("POST", "/v2.1/os-aggregates", mv, `{"aggregate": {"name": "`+name+`"}}`).want(t, 200).body, "aggregate")
		if keysOf(created) != keys(base) || created["availability_zone"] != nil || created["deleted"] != false || created["updated_at"] != nil {
			t.Fatalf("%s create: %v", mv, created)
		}
		id := created["id"]
		full := "availability_zone,created_at,deleted,deleted_at,hosts,id,metadata,name,updated_at"
		got := obj(t, f.do("GET", aggPath(id), mv, nil).want(t, 200).body, "aggregate")
		if keysOf(got) != keys(full) || len(got["hosts"].([]any)) != 0 || len(got["metadata"].(map[string]any)) != 0 {
			t.Fatalf("%s show: %v", mv, got)
		}
		if uuid && got["uuid"] != created["uuid"] {
			t.Fatalf("%s uuid %v vs %v", mv, got["uuid"], created["uuid"])
		}
		l := list(t, f.do("GET", "/v2.1/os-aggregates", mv, nil).want(t, 200).body, "aggregates")
		if keysOf(l[len(l)-1].(map[string]any)) != keys(full) {
			t.Fatalf("%s list: %v", mv, l)
		}
	}
}

func TestAggregateLifecycle(t *testing.T) {
	f, _ := adminFixture(t)
	id := createAgg(t, f, `{"aggregate": {"name": "a1", "availability_zone": "z1"}}`)
	a := obj(t, f.do("GET", aggPath(id), "2.1", nil).want(t, 200).body, "aggregate")
	if a["availability_zone"] != "z1" || obj(t, a, "metadata")["availability_zone"] != "z1" {
		t.Fatalf("zone as metadata: %v", a)
	}
	up := obj(t, f.do("PUT", aggPath(id), "2.1", `{"aggregate": {"name": " a1_new ", "availability_zone": "z1_new"}}`).want(t, 200).body, "aggregate")
	if up["name"] != "a1_new" || up["availability_zone"] != "z1_new" || up["updated_at"] == nil {
		t.Fatalf("update: %v", up)
	}
	md := obj(t, f.do("POST", aggPath(id)+"/action", "2.1", `{"set_metadata": {"metadata": {"key": "value", "k2": "v"}}}`).want(t, 200).body, "aggregate")
	md = obj(t, f.do("POST", aggPath(id)+"/action", "2.1", `{"set_metadata": {"metadata": {"k2": null}}}`).want(t, 200).body, "aggregate")
	if m := obj(t, md, "metadata"); len(m) != 2 || m["key"] != "value" || m["availability_zone"] != "z1_new" {
		t.Fatalf("metadata: %v", m)
	}
	// The zone goes with its metadata key.
	md = obj(t, f.do("POST", aggPath(id)+"/action", "2.1", `{"set_metadata": {"metadata": {"availability_zone": null}}}`).want(t, 200).body, "aggregate")
	if md["availability_zone"] != nil {
		t.Fatalf("zone unset: %v", md)
	}

	h := obj(t, f.do("POST", aggPath(id)+"/action", "2.1", `{"add_host": {"host": "replica-a"}}`).want(t, 200).body, "aggregate")
	if hs := h["hosts"].([]any); len(hs) != 1 || hs[0] != "replica-a" {
		t.Fatalf("add_host: %v", h)
	}
	f.do("POST", aggPath(id)+"/action", "2.1", `{"add_host": {"host": "replica-a"}}`).novaError(t, 409, "conflictingRequest")
	f.do("POST", aggPath(id)+"/action", "2.1", `{"add_host": {"host": "nonexist_host"}}`).novaError(t, 404, "itemNotFound")
	f.do("DELETE", aggPath(id), "2.1", nil).novaError(t, 400, "badRequest")
	h = obj(t, f.do("POST", aggPath(id)+"/action", "2.1", `{"remove_host": {"host": "replica-a"}}`).want(t, 200).body, "aggregate")
	if len(h["hosts"].([]any)) != 0 {
		t.Fatalf("remove_host: %v", h)
	}
	f.do("POST", aggPath(id)+"/action", "2.1", `{"remove_host": {"host": "replica-a"}}`).novaError(t, 404, "itemNotFound")
	f.do("POST", aggPath(id)+"/action", "2.1", `{"remove_host": {"host": "nonexist_host"}}`).novaError(t, 404, "itemNotFound")
	if r := f.do("DELETE", aggPath(id), "2.1", nil).want(t, 200); len(r.raw) != 0 {
		t.Fatalf("delete answers a body: %q", r.raw)
	}
	f.do("GET", aggPath(id), "2.1", nil).novaError(t, 404, "itemNotFound")
	f.do("DELETE", aggPath(id), "2.1", nil).novaError(t, 404, "itemNotFound")
}

func TestAggregateErrors(t *testing.T) {
	f, _ := adminFixture(t)
	id := createAgg(t, f, `{"aggregate": {"name": "taken"}}`)
	long := strings.Repeat("a", 256)
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": ""}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "` + long + `"}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": " lead"}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "x", "hosts": []}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": "x"}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"name": "x"}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "x", "availability_zone": "a:b"}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "x", "availability_zone": ""}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "x", "availability_zone": "internal"}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "x", "availability_zone": 5}}`, 400},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "taken"}}`, 409},
		{"GET", aggPath(-1), "", 404},
		{"GET", aggPath("abc"), "", 400},
		{"DELETE", aggPath(-1), "", 404},
		{"PUT", aggPath(id), `{"aggregate": {}}`, 400},
		{"PUT", aggPath(id), `{"aggregate": {"name": ""}}`, 400},
		{"PUT", aggPath(-1), `{"aggregate": {"name": "n"}}`, 404},
		{"POST", aggPath(id) + "/action", `{"reboot": {}}`, 400},
		{"POST", aggPath(id) + "/action", `{"add_host": {"host": "replica-a"}, "remove_host": {"host": "replica-a"}}`, 400},
		{"POST", aggPath(id) + "/action", `{"add_host": {}}`, 400},
		{"POST", aggPath(id) + "/action", `{"add_host": {"host": "h", "x": 1}}`, 400},
		{"POST", aggPath(id) + "/action", `{"add_host": {"host": "bad host"}}`, 400},
		{"POST", aggPath(-1) + "/action", `{"add_host": {"host": "replica-a"}}`, 404},
		{"POST", aggPath(-1) + "/action", `{"remove_host": {"host": "replica-a"}}`, 404},
		{"POST", aggPath(id) + "/action", `{"set_metadata": {}}`, 400},
		{"POST", aggPath(id) + "/action", `{"set_metadata": {"metadata": {"bad/key": "v"}}}`, 400},
		{"POST", aggPath(id) + "/action", `{"set_metadata": {"metadata": {"k": 1}}}`, 400},
		{"POST", aggPath(id) + "/action", `{"set_metadata": {"metadata": {"k": "` + long + `"}}}`, 400},
		{"POST", aggPath(id) + "/action", `{"set_metadata": {"metadata": {"availability_zone": "internal"}}}`, 400},
		{"POST", aggPath(-1) + "/action", `{"set_metadata": {"metadata": {"k": "v"}}}`, 404},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		if r := f.do(tc.method, tc.path, "2.1", body); r.status != tc.status {
			t.Errorf("%s %s %s: %d %s, want %d", tc.method, tc.path, tc.body, r.status, r.raw, tc.status)
		}
	}
	other := createAgg(t, f, `{"aggregate": {"name": "other"}}`)
	f.do("PUT", aggPath(other), "2.1", `{"aggregate": {"name": "taken"}}`).novaError(t, 409, "conflictingRequest")
}

// A host is in one availability zone at most.
func TestAggregateZoneClash(t *testing.T) {
	f, _ := adminFixture(t)
	z1 := createAgg(t, f, `{"aggregate": {"name": "a1", "availability_zone": "z1"}}`)
	z2 := createAgg(t, f, `{"aggregate": {"name": "a2", "availability_zone": "z2"}}`)
	plain := createAgg(t, f, `{"aggregate": {"name": "a3"}}`)
	f.do("POST", aggPath(z1)+"/action", "2.1", `{"add_host": {"host": "replica-a"}}`).want(t, 200)
	f.do("POST", aggPath(z2)+"/action", "2.1", `{"add_host": {"host": "replica-a"}}`).novaError(t, 409, "conflictingRequest")
	f.do("POST", aggPath(plain)+"/action", "2.1", `{"add_host": {"host": "replica-a"}}`).want(t, 200)
	f.do("PUT", aggPath(plain), "2.1", `{"aggregate": {"availability_zone": "z2"}}`).novaError(t, 400, "badRequest")
	f.do("POST", aggPath(plain)+"/action", "2.1", `{"set_metadata": {"metadata": {"availability_zone": "z2"}}}`).novaError(t, 400, "badRequest")
	f.do("PUT", aggPath(plain), "2.1", `{"aggregate": {"availability_zone": "z1"}}`).want(t, 200)
}

func TestAggregatesAreForAdmins(t *testing.T) {
	f, _ := adminFixture(t)
	id := createAgg(t, f, `{"aggregate": {"name": "a1"}}`)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v2.1/os-aggregates", ""},
		{"POST", "/v2.1/os-aggregates", `{"aggregate": {"name": "m"}}`},
		{"GET", aggPath(id), ""},
		{"PUT", aggPath(id), `{"aggregate": {"name": "m"}}`},
		{"DELETE", aggPath(id), ""},
		{"POST", aggPath(id) + "/action", `{"add_host": {"host": "replica-a"}}`},
		{"POST", aggPath(id) + "/action", `{"remove_host": {"host": "replica-a"}}`},
		{"POST", aggPath(id) + "/action", `{"set_metadata": {"metadata": {"k": "v"}}}`},
		{"GET", aggPath(-1), ""}, // no 404 before the policy check
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		f.doWith(member, tc.method, tc.path, "2.1", body).novaError(t, 403, "forbidden")
	}
	if a := obj(t, f.do("GET", aggPath(id), "2.1", nil).want(t, 200).body, "aggregate"); a["name"] != "a1" {
		t.Fatalf("a member changed it: %v", a)
	}
}
