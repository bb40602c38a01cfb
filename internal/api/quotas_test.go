package api_test

import (
	"net/http"
	"testing"
)

// TestQuotaUpdateLegacyKeys: where Nova's schema still has them, the
// nova-network quotas (≤2.35) and the personality ones (≤2.56) are stored
// and shown, as Nova's (the personality ones limit injected files; Nova's
// defaults 5, 10240 and 255, shown by /limits too). Past those
// microversions they are unknown members (400), as in Nova, and a
// non-integer is a 400 anywhere.
func TestQuotaUpdateLegacyKeys(t *testing.T) {
	f := newFixture(t)
	if q := obj(t, f.do("GET", "/v2.1/os-quota-sets/p1", "2.1", nil).want(t, http.StatusOK).body, "quota_set"); q["injected_files"] != 5.0 ||
		q["injected_file_content_bytes"] != 10240.0 || q["injected_file_path_bytes"] != 255.0 || q["fixed_ips"] != -1.0 {
		t.Errorf("defaults: %v", q)
	}
	abs := obj(t, f.do("GET", "/v2.1/limits", "2.56", nil).want(t, http.StatusOK).body, "limits", "absolute")
	if abs["maxPersonality"] != 5.0 || abs["maxPersonalitySize"] != 10240.0 {
		t.Errorf("limits at 2.56: %v", abs)
	}
	legacy := map[string]any{"fixed_ips": 11, "floating_ips": 12, "security_groups": 13,
		"security_group_rules": 21, "injected_files": 3, "injected_file_content_bytes": 2048,
		"injected_file_path_bytes": 100, "instances": 7}
	q := obj(t, f.do("PUT", "/v2.1/os-quota-sets/p1", "2.35", map[string]any{"quota_set": legacy}).want(t, http.StatusOK).body, "quota_set")
	for k, v := range legacy {
		if q[k] != float64(v.(int)) {
			t.Errorf("after PUT at 2.35: %s = %v, want %v", k, q[k], v)
		}
	}
	if got := obj(t, f.do("GET", "/v2.1/os-quota-sets/p1", "2.1", nil).want(t, http.StatusOK).body, "quota_set"); got["instances"] != 7.0 || got["fixed_ips"] != 11.0 || got["injected_files"] != 3.0 {
		t.Errorf("shown after PUT: %v", got)
	}
	if got := obj(t, f.do("GET", "/v2.1/os-quota-sets/p1", "2.36", nil).want(t, http.StatusOK).body, "quota_set"); got["fixed_ips"] != nil || got["injected_files"] != 3.0 {
		t.Errorf("shown at 2.36: %v", got)
	}
	if got := obj(t, f.do("GET", "/v2.1/os-quota-sets/p1", "2.57", nil).want(t, http.StatusOK).body, "quota_set"); got["injected_files"] != nil {
		t.Errorf("shown at 2.57: %v", got)
	}
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.56", map[string]any{"quota_set": map[string]any{"injected_files": 5}}).want(t, http.StatusOK)
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.36", map[string]any{"quota_set": map[string]any{"fixed_ips": 10}}).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.57", map[string]any{"quota_set": map[string]any{"injected_files": 5}}).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.35", map[string]any{"quota_set": map[string]any{"floating_ips": "many"}}).novaError(t, http.StatusBadRequest, "badRequest")
}
