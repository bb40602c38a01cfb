package identity

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

type limitsBody struct {
	Limits struct {
		Absolute map[string]int `json:"absolute"`
	} `json:"limits"`
}

// TestQuotas: an admin sets project A's quotas; creates past them are
// 403 with Nova's message; two creates racing for the last free instance
// get one 202 and one 403, round after round; /limits and the quota
// detail show the usage; key_pairs and metadata_items are enforced.
func TestQuotas(t *testing.T) {
	s := startStack(t, nil, nil)
	a := s.project("a")
	setQuota := func(q map[string]any) {
		t.Helper()
		s.must("admin", "PUT", "/v2.1/os-quota-sets/"+a, map[string]any{"quota_set": q}, 200)
	}
	setQuota(map[string]any{"instances": 2, "cores": 100})
	s.createServer("member-a", "q1", nil)
	s.createServer("member-a", "q2", nil)
	r := s.do("member-a", "POST", "/v2.1/servers", "2.90", map[string]any{"server": map[string]any{
		"name": "q3", "imageRef": imageID, "flavorRef": "1", "networks": "auto"}})
	var fb struct {
		Forbidden struct{ Message string } `json:"forbidden"`
	}
	r.decode(t, &fb)
	if want := "Quota exceeded for instances: Requested 1, but already used 2 of 2 instances"; r.status != 403 || fb.Forbidden.Message != want {
		t.Fatalf("third server: %d %s, want 403 %q", r.status, r.body, want)
	}
	// Another project is not limited by A's quota.
	s.createServer("member-b", "b1", nil)

	// Cores: 4 per server; 8 of 10 used leaves no room for a third.
	setQuota(map[string]any{"instances": 10, "cores": 10})
	r = s.do("member-a", "POST", "/v2.1/servers", "2.90", map[string]any{"server": map[string]any{
		"name": "q3", "imageRef": imageID, "flavorRef": "1", "networks": "auto"}})
	r.decode(t, &fb)
	if want := "Quota exceeded for cores: Requested 4, but already used 8 of 10 cores"; r.status != 403 || fb.Forbidden.Message != want {
		t.Fatalf("cores: %d %s, want 403 %q", r.status, r.body, want)
	}
	// Lowering a limit below the usage needs force.
	if r := s.do("admin", "PUT", "/v2.1/os-quota-sets/"+a, "2.90", map[string]any{"quota_set": map[string]any{"instances": 1}}); r.status != 400 {
		t.Fatalf("instances below usage: %d %s, want 400", r.status, r.body)
	}

	// The race for the last unit, five rounds.
	setQuota(map[string]any{"cores": -1})
	used := 2
	for round := range 5 {
		setQuota(map[string]any{"instances": used + 1})
		var wg sync.WaitGroup
		status := make([]int, 2)
		bodies := make([][]byte, 2)
		for i := range 2 {
			wg.Go(func() {
				r := s.do("member-a", "POST", "/v2.1/servers", "2.90", map[string]any{"server": map[string]any{
					"name": fmt.Sprintf("race-%d-%d", round, i), "imageRef": imageID, "flavorRef": "1", "networks": "auto"}})
				status[i], bodies[i] = r.status, r.body
			})
		}
		wg.Wait()
		won, lost := 0, 0
		for i := range 2 {
			switch status[i] {
			case http.StatusAccepted:
				won++
			case http.StatusForbidden:
				lost++
				want := fmt.Sprintf("Quota exceeded for instances: Requested 1, but already used %d of %d instances", used+1, used+1)
				if !contains2(bodies[i], want) {
					t.Errorf("round %d: refusal %s, want %q", round, bodies[i], want)
				}
			default:
				t.Errorf("round %d: %d %s", round, status[i], bodies[i])
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("round %d: %d won, %d refused; want one each", round, won, lost)
		}
		used++
	}

	// Usage in /limits and in the quota detail.
	var lim limitsBody
	s.must("member-a", "GET", "/v2.1/limits", nil, 200).decode(t, &lim)
	abs := lim.Limits.Absolute
	if abs["totalInstancesUsed"] != used || abs["maxTotalInstances"] != used || abs["totalCoresUsed"] != 4*used ||
		abs["totalRAMUsed"] != 4096*used || abs["maxTotalCores"] != -1 {
		t.Errorf("limits %v, want %d instances used of %d", abs, used, used)
	}
	r = s.must("member-a", "GET", "/v2.1/os-quota-sets/"+a+"/detail", nil, 200)
	var raw map[string]map[string]any
	r.decode(t, &raw)
	inst, _ := raw["quota_set"]["instances"].(map[string]any)
	if inst["in_use"] != float64(used) || inst["limit"] != float64(used) || inst["reserved"] != 0.0 {
		t.Errorf("quota detail instances %v", inst)
	}
	// B's limits are B's.
	s.must("member-b", "GET", "/v2.1/limits", nil, 200).decode(t, &lim)
	if lim.Limits.Absolute["totalInstancesUsed"] != 1 || lim.Limits.Absolute["maxTotalInstances"] != -1 {
		t.Errorf("B's limits %v", lim.Limits.Absolute)
	}

	// key_pairs and metadata_items.
	setQuota(map[string]any{"key_pairs": 1, "metadata_items": 2})
	s.must("member-a", "POST", "/v2.1/os-keypairs", map[string]any{"keypair": map[string]any{"name": "k1", "public_key": ed25519Key(t)}}, 201)
	r = s.do("member-a", "POST", "/v2.1/os-keypairs", "2.90", map[string]any{"keypair": map[string]any{"name": "k2", "public_key": ed25519Key(t)}})
	if r.status != 403 || !contains2(r.body, "Quota exceeded, too many key pairs.") {
		t.Errorf("second keypair: %d %s", r.status, r.body)
	}
	setQuota(map[string]any{"instances": -1})
	r = s.do("member-a", "POST", "/v2.1/servers", "2.90", map[string]any{"server": map[string]any{
		"name": "meta", "imageRef": imageID, "flavorRef": "1", "networks": "auto", "metadata": map[string]string{"a": "1", "b": "2", "c": "3"}}})
	if r.status != 403 || !contains2(r.body, "metadata_items") {
		t.Errorf("3 metadata items of 2: %d %s", r.status, r.body)
	}
	// Back to the defaults.
	s.must("admin", "DELETE", "/v2.1/os-quota-sets/"+a, nil, 202)
	var q struct {
		QuotaSet map[string]any `json:"quota_set"`
	}
	s.must("member-a", "GET", "/v2.1/os-quota-sets/"+a, nil, 200).decode(t, &q)
	if q.QuotaSet["instances"] != -1.0 || q.QuotaSet["key_pairs"] != 100.0 || q.QuotaSet["id"] != a {
		t.Errorf("after delete: %v", q.QuotaSet)
	}
}

func contains2(body []byte, s string) bool { return contains(body, []string{s}) != "" }
