package api_test

import (
	"context"
	"net/http"
	"testing"
)

func groupBody(fields map[string]any) map[string]any {
	return map[string]any{"server_group": fields}
}

func TestServerGroupShapes(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		mv   string
		body map[string]any
		keys string
	}{
		{"2.1", map[string]any{"name": "g", "policies": []string{"affinity"}}, "id,members,metadata,name,policies"},
		{"2.13", map[string]any{"name": "g", "policies": []string{"anti-affinity"}}, "id,members,metadata,name,policies,project_id,user_id"},
		{"2.15", map[string]any{"name": "g", "policies": []string{"soft-affinity"}}, "id,members,metadata,name,policies,project_id,user_id"},
		{"2.64", map[string]any{"name": "g", "policy": "anti-affinity", "rules": map[string]any{"max_server_per_host": 3}}, "id,members,name,policy,project_id,rules,user_id"},
		{"2.64", map[string]any{"name": "g", "policy": "soft-anti-affinity"}, "id,members,name,policy,project_id,rules,user_id"},
	} {
		r := f.do("POST", "/v2.1/os-server-groups", tc.mv, groupBody(tc.body)).want(t, http.StatusOK)
		g := obj(t, r.body, "server_group")
		if keysOf(g) != tc.keys || len(g["members"].([]any)) != 0 {
			t.Fatalf("%s: %s", tc.mv, r.raw)
		}
		show := obj(t, f.do("GET", "/v2.1/os-server-groups/"+g["id"].(string), tc.mv, nil).want(t, http.StatusOK).body, "server_group")
		if keysOf(show) != tc.keys {
			t.Fatalf("%s show: %v", tc.mv, show)
		}
		if tc.mv == "2.64" && tc.body["rules"] != nil && show["rules"].(map[string]any)["max_server_per_host"] != 3.0 {
			t.Fatalf("rules %v", show)
		}
	}
	for _, tc := range []struct {
		mv   string
		body map[string]any
	}{
		{"2.1", map[string]any{"name": "g", "policies": []string{"affinity", "anti-affinity"}}},
		{"2.1", map[string]any{"name": "g", "policies": []string{}}},
		{"2.14", map[string]any{"name": "g", "policies": []string{"soft-affinity"}}},
		{"2.1", map[string]any{"name": "g", "policies": []string{"spread"}}},
		{"2.1", map[string]any{"name": "g", "policy": "affinity"}},
		{"2.1", map[string]any{"policies": []string{"affinity"}}},
		{"2.1", map[string]any{"name": "", "policies": []string{"affinity"}}},
		{"2.64", map[string]any{"name": "g", "policies": []string{"affinity"}}},
		{"2.64", map[string]any{"name": "g", "policy": "affinity", "rules": map[string]any{"max_server_per_host": 2}}},
		{"2.64", map[string]any{"name": "g", "policy": "anti-affinity", "rules": map[string]any{"max_server_per_host": 0}}},
		{"2.64", map[string]any{"name": "g", "policy": "anti-affinity", "rules": map[string]any{"other": 1}}},
		{"2.64", map[string]any{"name": "g", "policy": "anti-affinity", "rules": []any{}}},
		{"2.64", map[string]any{"name": "g"}},
	} {
		if r := f.do("POST", "/v2.1/os-server-groups", tc.mv, groupBody(tc.body)); r.status != http.StatusBadRequest {
			t.Errorf("%s %v: %d %s", tc.mv, tc.body, r.status, r.raw)
		}
	}
	f.doWith(reader, "POST", "/v2.1/os-server-groups", "2.1", groupBody(map[string]any{"name": "g", "policies": []string{"affinity"}})).
		novaError(t, http.StatusForbidden, "forbidden")
}

func TestServerGroupTenancy(t *testing.T) {
	f := newFixture(t)
	mk := func(who http.Header) string {
		r := f.doWith(who, "POST", "/v2.1/os-server-groups", "2.13", groupBody(map[string]any{"name": "g", "policies": []string{"affinity"}}))
		return obj(t, r.want(t, http.StatusOK).body, "server_group")["id"].(string)
	}
	mine, theirs := mk(member), mk(stranger)
	count := func(who http.Header, q string) int {
		return len(list(t, f.doWith(who, "GET", "/v2.1/os-server-groups"+q, "2.13", nil).want(t, http.StatusOK).body, "server_groups"))
	}
	if count(member, "") != 1 || count(member, "?all_projects=True") != 1 || count(otherAdmin, "") != 0 || count(otherAdmin, "?all_projects") != 2 ||
		count(otherAdmin, "?all_projects=1&limit=1") != 1 || count(otherAdmin, "?all_projects=1&offset=1") != 1 {
		t.Fatal("group listings")
	}
	f.doWith(member, "GET", "/v2.1/os-server-groups?limit=x", "2.13", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.doWith(reader, "GET", "/v2.1/os-server-groups/"+mine, "2.13", nil).want(t, http.StatusOK)
	f.doWith(member, "GET", "/v2.1/os-server-groups/"+theirs, "2.13", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.doWith(member, "DELETE", "/v2.1/os-server-groups/"+theirs, "2.13", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.doWith(reader, "DELETE", "/v2.1/os-server-groups/"+mine, "2.13", nil).novaError(t, http.StatusForbidden, "forbidden")
	f.doWith(otherAdmin, "GET", "/v2.1/os-server-groups/"+theirs, "2.13", nil).want(t, http.StatusOK)
	// A create may not name another project's group.
	body := validCreate()
	body["os:scheduler_hints"] = map[string]any{"group": theirs}
	f.doWith(member, "POST", "/v2.1/servers", "2.1", body).novaError(t, http.StatusBadRequest, "badRequest")
	f.doWith(member, "DELETE", "/v2.1/os-server-groups/"+mine, "2.13", nil).want(t, http.StatusNoContent)
	f.doWith(member, "DELETE", "/v2.1/os-server-groups/"+mine, "2.13", nil).novaError(t, http.StatusNotFound, "itemNotFound")
}

func TestServerGroupMembersAndQuotas(t *testing.T) {
	f := newFixture(t)
	g := obj(t, f.do("POST", "/v2.1/os-server-groups", "2.64", groupBody(map[string]any{"name": "g", "policy": "anti-affinity"})).
		want(t, http.StatusOK).body, "server_group")["id"].(string)
	body := validCreate()
	body["os:scheduler_hints"] = map[string]any{"group": g}
	id := obj(t, f.do("POST", "/v2.1/servers", "2.1", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	sv, _ := f.store.GetServer(context.Background(), id)
	if sv.Spec.Group == nil || sv.Spec.Group.ID != g || sv.Spec.Group.Policy != "anti-affinity" {
		t.Fatalf("spec group %+v", sv.Spec.Group)
	}
	if m := obj(t, f.do("GET", "/v2.1/os-server-groups/"+g, "2.64", nil).body, "server_group")["members"].([]any); len(m) != 1 || m[0] != id {
		t.Fatalf("members %v", m)
	}
	if gs, _ := f.store.ServerGroupsOf(context.Background(), id); len(gs) != 1 || gs[0] != g {
		t.Fatalf("ServerGroupsOf %v", gs)
	}
	// 2.71: the server shows its group (as Nova: Tempest and an adopted
	// server's comparison with Nova's read it).
	if gs := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.71", nil).want(t, http.StatusOK).body, "server")["server_groups"].([]any); len(gs) != 1 || gs[0] != g {
		t.Fatalf("server_groups %v, want [%s]", gs, g)
	}
	// A server whose group is deleted shows none (Nova's membership is
	// gone with the group).
	other := obj(t, f.do("POST", "/v2.1/os-server-groups", "2.64", groupBody(map[string]any{"name": "gone", "policy": "anti-affinity"})).
		want(t, http.StatusOK).body, "server_group")["id"].(string)
	ob := validCreate()
	ob["os:scheduler_hints"] = map[string]any{"group": other}
	oid := obj(t, f.do("POST", "/v2.1/servers", "2.1", ob).want(t, http.StatusAccepted).body, "server")["id"].(string)
	f.do("DELETE", "/v2.1/os-server-groups/"+other, "2.64", nil).want(t, http.StatusNoContent)
	if gs := obj(t, f.do("GET", "/v2.1/servers/"+oid, "2.71", nil).want(t, http.StatusOK).body, "server")["server_groups"].([]any); len(gs) != 0 {
		t.Fatalf("server_groups %v after its group was deleted, want []", gs)
	}
	f.do("DELETE", "/v2.1/servers/"+oid, "2.1", nil).want(t, http.StatusNoContent)
	for _, hint := range []any{map[string]any{"group": "not-a-uuid"}, map[string]any{"group": 5},
		map[string]any{"group": "9be26c0b-03f2-4d2e-ae87-c02d7f33c123"}, "hints"} {
		b := validCreate()
		b["os:scheduler_hints"] = hint
		f.do("POST", "/v2.1/servers", "2.1", b).novaError(t, http.StatusBadRequest, "badRequest")
	}
	// Quotas: members per group, groups per project (os-quota-sets).
	f.do("PUT", "/v2.1/os-quota-sets/ingot", "2.1", map[string]any{"quota_set": map[string]any{"server_group_members": 1, "server_groups": 1}}).
		want(t, http.StatusOK)
	f.do("POST", "/v2.1/servers", "2.1", body).novaError(t, http.StatusForbidden, "forbidden")
	f.do("POST", "/v2.1/os-server-groups", "2.64", groupBody(map[string]any{"name": "g2", "policy": "affinity"})).novaError(t, http.StatusForbidden, "forbidden")
	lim := obj(t, f.do("GET", "/v2.1/limits", "2.1", nil).want(t, http.StatusOK).body, "limits", "absolute")
	if lim["maxServerGroups"] != 1.0 || lim["maxServerGroupMembers"] != 1.0 || lim["totalServerGroupsUsed"] != 1.0 {
		t.Fatalf("limits %v", lim)
	}
	if q := obj(t, f.do("GET", "/v2.1/os-quota-sets/ingot", "2.1", nil).want(t, http.StatusOK).body, "quota_set"); q["server_groups"] != 1.0 {
		t.Fatalf("quota set %v", q)
	}
	// A deleted member leaves room.
	f.do("DELETE", "/v2.1/servers/"+id, "2.1", nil).want(t, http.StatusNoContent)
	f.do("POST", "/v2.1/servers", "2.1", body).want(t, http.StatusAccepted)
}
