package api_test

import (
	"net/http"
	"testing"
)

func TestQuotaClassShape(t *testing.T) {
	f := newFixture(t)
	files := "injected_file_content_bytes,injected_file_path_bytes,injected_files,"
	for _, tc := range []struct{ mv, keys string }{
		{"2.1", "cores,fixed_ips,floating_ips,id," + files + "instances,key_pairs,metadata_items,ram,security_group_rules,security_groups"},
		{"2.50", "cores,id," + files + "instances,key_pairs,metadata_items,ram,server_group_members,server_groups"},
		{"2.57", "cores,id,instances,key_pairs,metadata_items,ram,server_group_members,server_groups"},
	} {
		set := obj(t, f.do("GET", "/v2.1/os-quota-class-sets/default", tc.mv, nil).want(t, http.StatusOK).body, "quota_class_set")
		if keysOf(set) != tc.keys || set["id"] != "default" || set["key_pairs"] != 100.0 || set["instances"] != -1.0 {
			t.Errorf("%s: %v\nwant %s", tc.mv, keysOf(set), tc.keys)
		}
	}
}

// Tempest's test_update_default_quotas: every member read, raised by 100,
// written and read back.
func TestQuotaClassRoundTrip(t *testing.T) {
	f := newFixture(t)
	for _, mv := range []string{"2.1", "2.57"} {
		set := obj(t, f.do("GET", "/v2.1/os-quota-class-sets/default", mv, nil).want(t, 200).body, "quota_class_set")
		delete(set, "id")
		for k, v := range set {
			set[k] = v.(float64) + 100
		}
		got := obj(t, f.do("PUT", "/v2.1/os-quota-class-sets/default", mv, map[string]any{"quota_class_set": set}).want(t, 200).body, "quota_class_set")
		if _, ok := got["id"]; ok {
			t.Errorf("%s: the update answer has an id", mv)
		}
		for k, v := range set {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", mv, k, got[k], v)
			}
		}
	}
}

// The default class is what every project gets.
func TestQuotaClassDefaultsApply(t *testing.T) {
	f := newFixture(t)
	f.create("before")
	f.do("PUT", "/v2.1/os-quota-class-sets/default", "2.1", `{"quota_class_set": {"instances": 1, "key_pairs": 7}}`).want(t, 200)
	d := obj(t, f.do("GET", "/v2.1/os-quota-sets/ingot/defaults", "2.1", nil).want(t, 200).body, "quota_set")
	q := obj(t, f.do("GET", "/v2.1/os-quota-sets/ingot", "2.1", nil).want(t, 200).body, "quota_set")
	if d["instances"] != 1.0 || d["key_pairs"] != 7.0 || q["instances"] != 1.0 {
		t.Fatalf("defaults %v, project %v", d, q)
	}
	lim := obj(t, f.do("GET", "/v2.1/limits", "2.1", nil).want(t, 200).body, "limits", "absolute")
	if lim["maxTotalInstances"] != 1.0 {
		t.Fatalf("limits %v", lim)
	}
	f.do("POST", "/v2.1/servers", "2.90", validCreate()).novaError(t, 403, "forbidden")
	// A project's own override still wins over the class.
	f.do("PUT", "/v2.1/os-quota-sets/ingot", "2.1", `{"quota_set": {"instances": 5}}`).want(t, 200)
	f.do("POST", "/v2.1/servers", "2.90", validCreate()).want(t, http.StatusAccepted)
	// Another class is stored and applies to nobody.
	f.do("PUT", "/v2.1/os-quota-class-sets/gold", "2.1", `{"quota_class_set": {"key_pairs": 3}}`).want(t, 200)
	if g := obj(t, f.do("GET", "/v2.1/os-quota-class-sets/gold", "2.1", nil).want(t, 200).body, "quota_class_set"); g["key_pairs"] != 3.0 || g["id"] != "gold" {
		t.Fatalf("gold %v", g)
	}
	if d := obj(t, f.do("GET", "/v2.1/os-quota-sets/ingot/defaults", "2.1", nil).want(t, 200).body, "quota_set"); d["key_pairs"] != 7.0 {
		t.Fatalf("another class changed the defaults: %v", d)
	}
}

func TestQuotaClassErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ mv, body string }{
		{"2.1", `{"quota_class_set": {"instances": "x"}}`},
		{"2.1", `{"quota_class_set": {"instances": -2}}`},
		{"2.1", `{"quota_class_set": {"instances": 2147483648}}`},
		{"2.1", `{"quota_class_set": {"bogus": 1}}`},
		{"2.1", `{"quota_class_set": []}`},
		{"2.1", `{"quota_set": {"instances": 1}}`},
		{"2.50", `{"quota_class_set": {"floating_ips": 1}}`},
		{"2.57", `{"quota_class_set": {"injected_files": 1}}`},
	} {
		f.do("PUT", "/v2.1/os-quota-class-sets/default", tc.mv, tc.body).novaError(t, 400, "badRequest")
	}
	f.do("PUT", "/v2.1/os-quota-class-sets/default", "2.1", `{"quota_class_set": {"server_groups": 3}}`).want(t, 200)
	f.doWith(member, "GET", "/v2.1/os-quota-class-sets/default", "2.1", nil).novaError(t, 403, "forbidden")
	f.doWith(member, "PUT", "/v2.1/os-quota-class-sets/default", "2.1", `{"quota_class_set": {"instances": 0}}`).novaError(t, 403, "forbidden")
	if d := obj(t, f.do("GET", "/v2.1/os-quota-sets/ingot/defaults", "2.1", nil).want(t, 200).body, "quota_set"); d["instances"] != -1.0 {
		t.Fatalf("a member changed the defaults: %v", d)
	}
}
