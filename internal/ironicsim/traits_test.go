package ironicsim

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTraitsAPI(t *testing.T) {
	h := newHarness(t, Options{DeployTime: time.Minute})
	id := h.addNode(NodeSpec{NamePrefix: "tr"})
	tr := "/v1/nodes/" + id + "/traits"
	traitsOf := func() []any {
		t.Helper()
		r := h.do("GET", tr, nil)
		h.want(r, 200, "")
		l, _ := r.json()["traits"].([]any)
		return l
	}
	h.want(h.do("PUT", tr, map[string]any{"traits": []string{"HW_CPU_X86_AVX2", "CUSTOM_GOLD", "CUSTOM_GOLD"}}), 204, "")
	if got := traitsOf(); !reflect.DeepEqual(got, []any{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}) {
		t.Fatalf("after PUT: %v", got)
	}
	r := h.do("PUT", "/v1/nodes/tr-0/traits/CUSTOM_SILVER", nil)
	h.want(r, 204, "")
	if loc := r.header.Get("Location"); loc != h.srv.URL+"/v1/nodes/tr-0/traits/CUSTOM_SILVER" {
		t.Errorf("Location %q", loc)
	}
	h.want(h.do("PUT", tr+"/CUSTOM_SILVER", "{}"), 204, "") // idempotent, an empty object is no body
	want := []any{"CUSTOM_GOLD", "CUSTOM_SILVER", "HW_CPU_X86_AVX2"}
	if got := h.do("GET", "/v1/nodes/"+id+"?fields=traits", nil).json()["traits"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("fields=traits: %v", got)
	}
	nodes := h.do("GET", "/v1/nodes?fields=uuid,traits", nil).json()["nodes"].([]any)
	if got := nodes[0].(map[string]any)["traits"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed traits: %v", got)
	}
	h.want(h.do("DELETE", tr+"/CUSTOM_GOLD", nil), 204, "")
	h.want(h.do("DELETE", tr+"/CUSTOM_GOLD", nil), 404, "Node "+id+" doesn't have a trait 'CUSTOM_GOLD'")
	h.want(h.do("DELETE", tr+"/lower", nil), 404, "Node "+id+" doesn't have a trait 'lower'")
	h.want(h.do("DELETE", tr+"/CUSTOM_SILVER", map[string]any{"traits": []string{}}), 400, "Unexpected arguments: traits")

	// Schema errors, as jsonschema's best_match words them.
	usage := "A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> with no body, " +
		"or all node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with the list of traits specified in the request body."
	long := "CUSTOM_" + strings.Repeat("A", 250)
	for _, tc := range []struct {
		path string
		body any
		code int
		msg  string
	}{
		{tr, map[string]any{"traits": []string{"lower"}}, 400,
			"Schema error for body: 'lower' is not valid under any of the given schemas. Possible root cause: 'lower' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{tr, map[string]any{"traits": []any{"lower", 1}}, 400, "Schema error for body: 1 is not of type 'string'"},
		{tr, map[string]any{"traits": []any{"lower", ""}}, 400, "Schema error for body: '' is too short"},
		{tr, map[string]any{"traits": []any{long, nil}}, 400, "Schema error for body: None is not of type 'string'"},
		{tr, map[string]any{"traits": []any{long}}, 400, "Schema error for body: '" + long + "' is too long"},
		{tr, map[string]any{"traits": nil}, 400, "Schema error for body: None is not of type 'array'"},
		{tr, map[string]any{"traits": []string{"lower"}, "x": 1}, 400, "Schema error for body: Additional properties are not allowed ('x' was unexpected)"},
		{tr, map[string]any{"b": 1, "a": 1}, 400, "Schema error for body: Additional properties are not allowed ('a', 'b' were unexpected)"},
		{tr, "[]", 400, "Schema error for body: [] is not of type 'object'"},
		{tr, nil, 400, usage},
		{tr, "{}", 400, usage},
		{tr + "/CUSTOM_A", map[string]any{"traits": []string{"CUSTOM_A"}}, 400, usage},
		{tr + "/lower", nil, 400,
			"Schema error for trait: 'lower' is not valid under any of the given schemas. Possible root cause: 'lower' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{tr + "/HW_NOPE", nil, 400,
			"Schema error for trait: 'HW_NOPE' is not valid under any of the given schemas. Possible root cause: 'HW_NOPE' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"/v1/nodes/nope/traits", map[string]any{"traits": []string{"CUSTOM_A"}}, 404, "Node nope could not be found."},
		{"/v1/nodes/nope/traits", map[string]any{"traits": []string{"lower"}}, 400, ""},
	} {
		h.want(h.do("PUT", tc.path, tc.body), tc.code, tc.msg)
	}
	if got := traitsOf(); !reflect.DeepEqual(got, []any{"CUSTOM_SILVER", "HW_CPU_X86_AVX2"}) {
		t.Fatalf("after refused calls: %v", got)
	}

	// Other methods, and below 1.37.
	h.want(h.do("GET", tr+"/CUSTOM_SILVER", nil), 405, "")
	h.want(h.do("POST", tr, map[string]any{"traits": []string{}}), 405, "")
	h.want(h.doVer("1.36", "GET", tr, nil), 406, "Request not acceptable.")
	h.want(h.doVer("1.36", "PUT", tr, map[string]any{"traits": []string{}}), 405, "")
	h.want(h.doVer("1.36", "PUT", tr+"/CUSTOM_A", nil), 405, "")
	h.want(h.doVer("1.36", "DELETE", tr, nil), 404, "Resource could not be found.")
	h.want(h.doVer("1.36", "DELETE", tr+"/CUSTOM_A", nil), 404, "Resource could not be found.")

	// At most 50 traits per node (Ironic's internal node id in the text).
	var fifty []string
	for i := 0; i < 50; i++ {
		fifty = append(fifty, fmt.Sprintf("CUSTOM_T%d", i))
	}
	too := "Could not modify traits for node 1 as it would exceed the maximum number of traits per node (51 vs. 50)"
	h.want(h.do("PUT", tr, map[string]any{"traits": append(append([]string{}, fifty...), "CUSTOM_X")}), 400, too)
	h.want(h.do("PUT", tr, map[string]any{"traits": fifty}), 204, "")
	h.want(h.do("PUT", tr+"/CUSTOM_X", nil), 400, too)
	h.want(h.do("PUT", tr+"/CUSTOM_T0", nil), 204, "")
	h.want(h.do("DELETE", tr, nil), 204, "")
	h.want(h.do("DELETE", tr, nil), 204, "")
	if got := traitsOf(); len(got) != 0 {
		t.Fatalf("after DELETE: %v", got)
	}

	// instance_info.traits must be node traits; the lock guards changes.
	h.want(h.do("PUT", tr, map[string]any{"traits": []string{"CUSTOM_SILVER"}}), 204, "")
	h.want(h.patch(id, op("add", "/instance_info", map[string]any{"traits": []string{"CUSTOM_SILVER", "CUSTOM_X"}})), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 400, "Failed to validate deploy or power info for node "+id+
		": Cannot specify instance traits that are not also set on the node. Node "+id+" is missing traits CUSTOM_X")
	h.want(h.patch(id, op("add", "/instance_info", map[string]any{"traits": "CUSTOM_SILVER"})), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 400, "Failed to validate deploy or power info for node "+id+
		": Error parsing traits from Node "+id+" instance_info field. A list of strings is expected.")
	h.want(h.patch(id, op("add", "/instance_info", map[string]any{"traits": []string{"CUSTOM_SILVER"}})), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	locked := fmt.Sprintf("Node %s is locked by host localhost, please retry after the current operation is completed.", id)
	h.want(h.do("PUT", tr+"/CUSTOM_Y", nil), 409, locked)
	h.want(h.do("PUT", tr, map[string]any{"traits": []string{}}), 409, locked)
	h.want(h.do("DELETE", tr+"/CUSTOM_SILVER", nil), 409, locked)
	h.want(h.do("DELETE", tr, nil), 409, locked)
	h.clk.Advance(time.Minute)
	h.want(h.do("PUT", tr+"/CUSTOM_Y", nil), 204, "")
}
