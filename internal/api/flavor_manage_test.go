package api_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
)

func flavorBody(fields map[string]any) map[string]any {
	f := map[string]any{"name": "test_flavor", "ram": 512, "vcpus": 1, "disk": 10}
	for k, v := range fields {
		if v == nil {
			delete(f, k)
		} else {
			f[k] = v
		}
	}
	return map[string]any{"flavor": f}
}

func TestFlavorCreate(t *testing.T) {
	f := newFixture(t)
	r := f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"id": 1234, "ram": "1024"})).want(t, http.StatusOK)
	fl := obj(t, r.body, "flavor")
	if fl["id"] != "1234" || fl["ram"] != 1024.0 || fl["swap"] != "" || fl["rxtx_factor"] != 1.0 ||
		fl["OS-FLV-EXT-DATA:ephemeral"] != 0.0 || fl["os-flavor-access:is_public"] != true || fl["OS-FLV-DISABLED:disabled"] != false {
		t.Fatalf("created %s", r.raw)
	}
	if keysOf(fl) != "OS-FLV-DISABLED:disabled,OS-FLV-EXT-DATA:ephemeral,disk,id,links,name,os-flavor-access:is_public,ram,rxtx_factor,swap,vcpus" {
		t.Fatalf("members %s", keysOf(fl))
	}
	fl = obj(t, f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"name": "n2", "id": nil})).want(t, http.StatusOK).body, "flavor")
	if _, err := uuid.Parse(fl["id"].(string)); err != nil {
		t.Fatalf("no id: %v", fl["id"])
	}
	id := uuid.NewString()
	fl = obj(t, f.do("POST", "/v2.1/flavors", "2.75", flavorBody(map[string]any{"name": "n3", "id": id, "swap": 1024,
		"OS-FLV-EXT-DATA:ephemeral": 10, "rxtx_factor": 2, "os-flavor-access:is_public": "False"})).want(t, http.StatusOK).body, "flavor")
	if fl["id"] != id || fl["swap"] != 1024.0 || fl["OS-FLV-EXT-DATA:ephemeral"] != 10.0 || fl["rxtx_factor"] != 2.0 || fl["os-flavor-access:is_public"] != false {
		t.Fatalf("full create %v", fl)
	}
	if fl = obj(t, f.do("GET", "/v2.1/flavors/1234", "2.75", nil).want(t, http.StatusOK).body, "flavor"); fl["swap"] != 0.0 {
		t.Fatalf("no swap at 2.75: %v", fl["swap"])
	}
	// 2.55: description; 2.61: extra_specs.
	fl = obj(t, f.do("POST", "/v2.1/flavors", "2.61", flavorBody(map[string]any{"name": "n4", "description": "for tests"})).want(t, http.StatusOK).body, "flavor")
	if fl["description"] != "for tests" || fl["extra_specs"] == nil {
		t.Fatalf("2.61 create %v", fl)
	}
	f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"name": "test_flavor", "id": "other"})).novaError(t, http.StatusConflict, "conflictingRequest")
	f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"name": "fresh", "id": "1234"})).novaError(t, http.StatusConflict, "conflictingRequest")
	for _, bad := range []map[string]any{
		{"name": nil}, {"name": ""}, {"name": " padded "}, {"ram": nil}, {"ram": 0}, {"ram": "x"}, {"ram": 1.5},
		{"vcpus": -1}, {"disk": nil}, {"disk": -1}, {"swap": -1}, {"OS-FLV-EXT-DATA:ephemeral": "a"},
		{"rxtx_factor": 0}, {"rxtx_factor": "fast"}, {"os-flavor-access:is_public": "maybe"}, {"id": "bad/id"},
		{"id": " lead"}, {"id": true}, {"description": "too early"}, {"bogus": 1}, {"ram": 1 << 40},
	} {
		body := flavorBody(bad)
		body["flavor"].(map[string]any)["name"] = firstNonNil(bad["name"], "bad-"+keysOf(bad))
		if _, drop := bad["name"]; drop && bad["name"] == nil {
			delete(body["flavor"].(map[string]any), "name")
		}
		if r := f.do("POST", "/v2.1/flavors", "2.54", body); r.status != http.StatusBadRequest {
			t.Errorf("%v: %d %s", bad, r.status, r.raw)
		}
	}
	f.do("POST", "/v2.1/flavors", "2.1", "[]").novaError(t, http.StatusBadRequest, "badRequest")
	f.doWith(member, "POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"name": "mine"})).novaError(t, http.StatusForbidden, "forbidden")
}

func firstNonNil(v any, def string) any {
	if v == nil {
		return def
	}
	return v
}

func TestFlavorUpdateDelete(t *testing.T) {
	f := newFixture(t)
	f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"id": "f1"})).want(t, http.StatusOK)
	f.do("PUT", "/v2.1/flavors/f1", "2.54", map[string]any{"flavor": map[string]any{"description": "x"}}).novaError(t, http.StatusNotFound, "itemNotFound")
	r := f.do("PUT", "/v2.1/flavors/f1", "2.55", map[string]any{"flavor": map[string]any{"description": "new"}}).want(t, http.StatusOK)
	if obj(t, r.body, "flavor")["description"] != "new" {
		t.Fatalf("update %s", r.raw)
	}
	for _, bad := range []any{map[string]any{"flavor": map[string]any{}}, map[string]any{"flavor": map[string]any{"description": "x", "name": "y"}},
		map[string]any{"flavor": map[string]any{"description": 5}}, map[string]any{"description": "x"}} {
		f.do("PUT", "/v2.1/flavors/f1", "2.55", bad).novaError(t, http.StatusBadRequest, "badRequest")
	}
	f.do("PUT", "/v2.1/flavors/none", "2.55", map[string]any{"flavor": map[string]any{"description": "x"}}).novaError(t, http.StatusNotFound, "itemNotFound")
	f.doWith(member, "PUT", "/v2.1/flavors/f1", "2.55", map[string]any{"flavor": map[string]any{"description": "x"}}).novaError(t, http.StatusForbidden, "forbidden")
	// A server built with a flavor keeps showing it after the flavor is gone.
	body := validCreate()
	body["server"].(map[string]any)["flavorRef"] = "f1"
	id := obj(t, f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	f.doWith(member, "DELETE", "/v2.1/flavors/f1", "2.1", nil).novaError(t, http.StatusForbidden, "forbidden")
	f.do("DELETE", "/v2.1/flavors/f1", "2.1", nil).want(t, http.StatusAccepted)
	f.do("DELETE", "/v2.1/flavors/f1", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/flavors/f1", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	if fl := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.47", nil).want(t, http.StatusOK).body, "server", "flavor"); fl["original_name"] != "f1" {
		t.Fatalf("server flavor after delete: %v", fl)
	}
	// Configured flavors belong to the configuration file.
	f.do("DELETE", "/v2.1/flavors/1", "2.1", nil).novaError(t, http.StatusConflict, "conflictingRequest")
	f.do("PUT", "/v2.1/flavors/1", "2.55", map[string]any{"flavor": map[string]any{"description": "x"}}).novaError(t, http.StatusConflict, "conflictingRequest")
	f.do("POST", "/v2.1/flavors/1/os-extra_specs", "2.1", map[string]any{"extra_specs": map[string]any{"a:b": "c"}}).novaError(t, http.StatusConflict, "conflictingRequest")
	f.do("DELETE", "/v2.1/flavors/1/os-extra_specs/resources:VCPU", "2.1", nil).novaError(t, http.StatusConflict, "conflictingRequest")
}

func flavorNames(t *testing.T, r response) string {
	var n []string
	for _, fl := range list(t, r.body, "flavors") {
		n = append(n, fl.(map[string]any)["id"].(string))
	}
	return strings.Join(n, ",")
}

func TestFlavorAccess(t *testing.T) {
	f := newFixture(t)
	f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"id": "priv", "os-flavor-access:is_public": false})).want(t, http.StatusOK)
	f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"id": "pub", "name": "pub"})).want(t, http.StatusOK)
	for _, tc := range []struct {
		who   http.Header
		query string
		want  string
	}{
		{nil, "", "1,2,pub"}, {nil, "?is_public=false", "priv"}, {nil, "?is_public=f", "priv"}, {nil, "?is_public=None", "1,2,priv,pub"},
		{nil, "?is_public=yes", "1,2,pub"}, {member, "", "1,2,pub"}, {member, "?is_public=false", "1,2,pub"},
		{member, "?is_public=none", "1,2,pub"},
	} {
		if got := flavorNames(t, f.doWith(tc.who, "GET", "/v2.1/flavors/detail"+tc.query, "2.1", nil).want(t, http.StatusOK)); got != tc.want {
			t.Errorf("%v %s: %s, want %s", tc.who, tc.query, got, tc.want)
		}
	}
	f.doWith(member, "GET", "/v2.1/flavors/priv", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.doWith(member, "GET", "/v2.1/flavors/priv/os-extra_specs", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	body := validCreate()
	body["server"].(map[string]any)["flavorRef"] = "priv"
	f.doWith(member, "POST", "/v2.1/servers", "2.1", body).novaError(t, http.StatusBadRequest, "badRequest")

	list0 := f.do("GET", "/v2.1/flavors/priv/os-flavor-access", "2.1", nil).want(t, http.StatusOK)
	if acc := list(t, list0.body, "flavor_access"); len(acc) != 0 {
		t.Fatalf("new private flavor: %s", list0.raw)
	}
	add := map[string]any{"addTenantAccess": map[string]any{"tenant": "ingot"}}
	r := f.do("POST", "/v2.1/flavors/priv/action", "2.1", add).want(t, http.StatusOK)
	if acc := list(t, r.body, "flavor_access"); len(acc) != 1 || acc[0].(map[string]any)["tenant_id"] != "ingot" || acc[0].(map[string]any)["flavor_id"] != "priv" {
		t.Fatalf("add: %s", r.raw)
	}
	if got := flavorNames(t, f.doWith(member, "GET", "/v2.1/flavors", "2.1", nil)); got != "1,2,priv,pub" {
		t.Fatalf("member with access: %s", got)
	}
	f.doWith(member, "GET", "/v2.1/flavors/priv", "2.1", nil).want(t, http.StatusOK)
	f.doWith(member, "POST", "/v2.1/servers", "2.1", body).want(t, http.StatusAccepted)
	if got := flavorNames(t, f.doWith(stranger, "GET", "/v2.1/flavors", "2.1", nil)); got != "1,2,pub" {
		t.Fatalf("another project: %s", got)
	}
	f.do("POST", "/v2.1/flavors/priv/action", "2.1", add).novaError(t, http.StatusConflict, "conflictingRequest")
	f.do("POST", "/v2.1/flavors/pub/action", "2.1", add).novaError(t, http.StatusConflict, "conflictingRequest")
	f.do("GET", "/v2.1/flavors/pub/os-flavor-access", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/flavors/none/os-flavor-access", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.doWith(member, "GET", "/v2.1/flavors/priv/os-flavor-access", "2.1", nil).novaError(t, http.StatusForbidden, "forbidden")
	f.doWith(member, "POST", "/v2.1/flavors/priv/action", "2.1", add).novaError(t, http.StatusForbidden, "forbidden")
	remove := map[string]any{"removeTenantAccess": map[string]any{"tenant": "ingot"}}
	f.doWith(member, "POST", "/v2.1/flavors/priv/action", "2.1", remove).novaError(t, http.StatusForbidden, "forbidden")
	for _, bad := range []any{map[string]any{"addTenantAccess": map[string]any{}}, map[string]any{"addTenantAccess": map[string]any{"tenant": 5}},
		map[string]any{"dance": map[string]any{"tenant": "x"}}, map[string]any{}} {
		f.do("POST", "/v2.1/flavors/priv/action", "2.1", bad).novaError(t, http.StatusBadRequest, "badRequest")
	}
	r = f.do("POST", "/v2.1/flavors/priv/action", "2.1", remove).want(t, http.StatusOK)
	if len(list(t, r.body, "flavor_access")) != 0 {
		t.Fatalf("remove: %s", r.raw)
	}
	f.do("POST", "/v2.1/flavors/priv/action", "2.1", remove).novaError(t, http.StatusNotFound, "itemNotFound")
	if got := flavorNames(t, f.doWith(member, "GET", "/v2.1/flavors", "2.1", nil)); got != "1,2,pub" {
		t.Fatalf("member after remove: %s", got)
	}
}

func TestFlavorExtraSpecs(t *testing.T) {
	f := newFixture(t)
	f.mu.Lock()
	f.nodes = []ironic.Node{{UUID: nodeA, ResourceClass: "bm-gold.v2"}}
	f.mu.Unlock()
	f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"id": "x"})).want(t, http.StatusOK)
	specs := map[string]any{"hw:numa_nodes": "1", "hw:cpu_policy": "shared"}
	r := f.do("POST", "/v2.1/flavors/x/os-extra_specs", "2.1", map[string]any{"extra_specs": specs}).want(t, http.StatusOK)
	if got := obj(t, r.body, "extra_specs"); len(got) != 2 || got["hw:numa_nodes"] != "1" {
		t.Fatalf("set: %s", r.raw)
	}
	r = f.do("PUT", "/v2.1/flavors/x/os-extra_specs/hw:numa_nodes", "2.1", map[string]any{"hw:numa_nodes": "2"}).want(t, http.StatusOK)
	if len(r.body) != 1 || r.body["hw:numa_nodes"] != "2" {
		t.Fatalf("update: %s", r.raw)
	}
	if got := obj(t, f.doWith(member, "GET", "/v2.1/flavors/x/os-extra_specs", "2.1", nil).want(t, http.StatusOK).body, "extra_specs"); got["hw:numa_nodes"] != "2" || got["hw:cpu_policy"] != "shared" {
		t.Fatalf("read back %v", got)
	}
	f.do("PUT", "/v2.1/flavors/x/os-extra_specs/hw:numa_nodes", "2.1", map[string]any{"hw:cpu_policy": "shared"}).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("PUT", "/v2.1/flavors/x/os-extra_specs/hw:numa_nodes", "2.1", map[string]any{"hw:numa_nodes": "1", "hw:cpu_policy": "shared"}).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("DELETE", "/v2.1/flavors/x/os-extra_specs/hw:cpu_thread_policy", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.doWith(member, "GET", "/v2.1/flavors/x/os-extra_specs/hw:cpu_thread_policy", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	for _, tc := range []struct{ method, path string }{
		{"POST", "/v2.1/flavors/x/os-extra_specs"}, {"PUT", "/v2.1/flavors/x/os-extra_specs/hw:numa_nodes"},
		{"DELETE", "/v2.1/flavors/x/os-extra_specs/hw:numa_nodes"},
	} {
		f.doWith(member, tc.method, tc.path, "2.1", map[string]any{"extra_specs": specs, "hw:numa_nodes": "1"}).novaError(t, http.StatusForbidden, "forbidden")
	}
	for _, bad := range []map[string]any{
		{"resources:CUSTOM_X": "one"}, {"resources:CUSTOM_X": "-1"}, {"resources:custom_x": "1"}, {"trait:CUSTOM_Y": "maybe"},
		{"trait:lower": "required"}, {"capabilities:": "x"}, {"bad/key": "x"}, {"k": map[string]any{}}, {"k": strings.Repeat("v", 256)},
	} {
		f.do("POST", "/v2.1/flavors/x/os-extra_specs", "2.1", map[string]any{"extra_specs": bad}).novaError(t, http.StatusBadRequest, "badRequest")
	}
	f.do("POST", "/v2.1/flavors/none/os-extra_specs", "2.1", map[string]any{"extra_specs": specs}).novaError(t, http.StatusNotFound, "itemNotFound")
	// The scheduler's namespaces reach the build: the custom class (matched
	// to the inventory's spelling), traits and capabilities.
	f.do("POST", "/v2.1/flavors/x/os-extra_specs", "2.1", map[string]any{"extra_specs": map[string]any{
		"resources:CUSTOM_BM_GOLD_V2": 1, "resources:VCPU": "0", "trait:CUSTOM_RAID": "required",
		"trait:CUSTOM_SLOW": "forbidden", "capabilities:boot_mode": "uefi", "quota:cpu": true}}).want(t, http.StatusOK)
	if got := obj(t, f.do("GET", "/v2.1/flavors/x", "2.61", nil).want(t, http.StatusOK).body, "flavor", "extra_specs"); got["resources:CUSTOM_BM_GOLD_V2"] != "1" || got["quota:cpu"] != "True" {
		t.Fatalf("2.61 extra_specs %v", got)
	}
	body := validCreate()
	body["server"].(map[string]any)["flavorRef"] = "x"
	id := obj(t, f.do("POST", "/v2.1/servers", "2.1", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	sv, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if sv.Spec.ResourceClass != "bm-gold.v2" || strings.Join(sv.Spec.RequiredTraits, ",") != "CUSTOM_RAID" ||
		strings.Join(sv.Spec.ForbiddenTraits, ",") != "CUSTOM_SLOW" || sv.Spec.Capabilities["boot_mode"] != "uefi" {
		t.Fatalf("spec %+v", sv.Spec)
	}
	f.do("DELETE", "/v2.1/flavors/x/os-extra_specs/hw:numa_nodes", "2.1", nil).want(t, http.StatusOK)
	f.do("DELETE", "/v2.1/flavors/x/os-extra_specs/resources:CUSTOM_BM_GOLD_V2", "2.1", nil).want(t, http.StatusOK)
	id = obj(t, f.do("POST", "/v2.1/servers", "2.1", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	if sv, _ = f.store.GetServer(context.Background(), id); sv.Spec.ResourceClass != "" {
		t.Fatalf("no custom class: %q", sv.Spec.ResourceClass)
	}
}

// TestServerShowsFlavorAsItIs: a server's embedded flavor (2.47) shows the
// flavor's extra specs as they are at each read, though the rendering
// keeps the flavors between reads: every flavor write moves the store's
// admin revision.
func TestServerShowsFlavorAsItIs(t *testing.T) {
	f := newFixture(t)
	f.do("POST", "/v2.1/flavors", "2.1", flavorBody(map[string]any{"id": "f1"})).want(t, http.StatusOK)
	body := validCreate()
	body["server"].(map[string]any)["flavorRef"] = "f1"
	id := obj(t, f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	specs := func(where string) map[string]any {
		t.Helper()
		show := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.47", nil).want(t, http.StatusOK).body, "server", "flavor")["extra_specs"].(map[string]any)
		page := list(t, f.do("GET", "/v2.1/servers/detail", "2.47", nil).want(t, http.StatusOK).body, "servers")
		listed := page[0].(map[string]any)["flavor"].(map[string]any)["extra_specs"].(map[string]any)
		if !reflect.DeepEqual(show, listed) {
			t.Fatalf("%s: shown %v, listed %v", where, show, listed)
		}
		return show
	}
	if got := specs("before"); len(got) != 0 {
		t.Fatalf("before: %v", got)
	}
	f.do("POST", "/v2.1/flavors/f1/os-extra_specs", "2.1", map[string]any{"extra_specs": map[string]any{"hw:cpu_policy": "shared"}}).want(t, http.StatusOK)
	if got := specs("set"); got["hw:cpu_policy"] != "shared" {
		t.Fatalf("after the set: %v", got)
	}
	f.do("DELETE", "/v2.1/flavors/f1/os-extra_specs/hw:cpu_policy", "2.1", nil).want(t, http.StatusOK)
	if got := specs("unset"); len(got) != 0 {
		t.Fatalf("after the unset: %v", got)
	}
}
