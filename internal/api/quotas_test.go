package api_test

import (
	"net/http"
	"testing"
)

// TestQuotaUpdateLegacyKeys: where Nova's schema still has them, the
// nova-network quotas (≤2.35) and the personality ones (≤2.56) are accepted
// and ignored (Tempest's quota tests send the defaults back in their
// cleanup); they keep their fixed values. Past those microversions they are
// unknown members (400), as in Nova, and a non-integer is a 400 anywhere.
func TestQuotaUpdateLegacyKeys(t *testing.T) {
	f := newFixture(t)
	legacy := map[string]any{"fixed_ips": 10, "floating_ips": 10, "security_groups": 10,
		"security_group_rules": 20, "injected_files": 5, "injected_file_content_bytes": 10240,
		"injected_file_path_bytes": 255, "instances": 7}
	q := obj(t, f.do("PUT", "/v2.1/os-quota-sets/p1", "2.35", map[string]any{"quota_set": legacy}).want(t, http.StatusOK).body, "quota_set")
	want := map[string]float64{"instances": 7, "fixed_ips": -1, "floating_ips": -1, "security_groups": -1,
		"security_group_rules": -1, "injected_files": 0, "injected_file_content_bytes": 0, "injected_file_path_bytes": 0}
	for k, v := range want {
		if q[k] != v {
			t.Errorf("after PUT at 2.35: %s = %v, want %v", k, q[k], v)
		}
	}
	if got := obj(t, f.do("GET", "/v2.1/os-quota-sets/p1", "2.1", nil).want(t, http.StatusOK).body, "quota_set"); got["instances"] != 7.0 || got["fixed_ips"] != -1.0 {
		t.Errorf("shown after PUT: %v", got)
	}
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.56", map[string]any{"quota_set": map[string]any{"injected_files": 5}}).want(t, http.StatusOK)
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.36", map[string]any{"quota_set": map[string]any{"fixed_ips": 10}}).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.57", map[string]any{"quota_set": map[string]any{"injected_files": 5}}).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("PUT", "/v2.1/os-quota-sets/p1", "2.35", map[string]any{"quota_set": map[string]any{"floating_ips": "many"}}).novaError(t, http.StatusBadRequest, "badRequest")
}
