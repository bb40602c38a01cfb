package api_test

import (
	"net/http"
	"testing"
)

// TestNovaNetworkProxy: os-networks lists the configured networks in Nova's
// shape (id and label, the rest null; the admin members for admins only),
// shows one by id, and is gone (404) from 2.36 like every network proxy.
func TestNovaNetworkProxy(t *testing.T) {
	f := newFixture(t)
	nets := list(t, f.doWith(member, "GET", "/v2.1/os-networks", "2.35", nil).want(t, 200).body, "networks")
	if len(nets) != 2 {
		t.Fatalf("networks: %v", nets)
	}
	n := nets[0].(map[string]any)
	if n["id"] != netID || n["label"] != "provisioning" || n["cidr"] != nil {
		t.Errorf("network: %v", n)
	}
	if _, ok := n["cidr"]; !ok {
		t.Errorf("cidr missing (Nova sends it as null): %v", n)
	}
	if _, ok := n["bridge"]; ok || len(n) != 11 {
		t.Errorf("a member sees %d members (want Nova's 11, no admin fields): %v", len(n), n)
	}
	admin := list(t, f.doWith(otherAdmin, "GET", "/v2.1/os-networks", "2.1", nil).want(t, 200).body, "networks")
	if a := admin[0].(map[string]any); len(a) != 32 || a["label"] != "provisioning" {
		t.Errorf("an admin sees %d members (want 32): %v", len(a), a)
	}
	one := f.doWith(member, "GET", "/v2.1/os-networks/"+net2ID, "2.35", nil).want(t, 200).body["network"].(map[string]any)
	if one["id"] != net2ID || one["label"] != "storage" {
		t.Errorf("show: %v", one)
	}
	f.doWith(member, "GET", "/v2.1/os-networks/"+unknownID, "2.35", nil).want(t, 404)
	f.doWith(member, "GET", "/v2.1/os-networks", "2.36", nil).want(t, 404)
	f.doWith(member, "GET", "/v2.1/os-networks/"+netID, "2.36", nil).want(t, 404)
	// Without a role there is no reading (project_reader_or_admin).
	nobody := http.Header{"X-Auth-Project-Id": {"ingot"}, "X-Auth-User-Id": {"x"}, "X-Roles": {""}}
	f.doWith(nobody, "GET", "/v2.1/os-networks", "2.35", nil).want(t, 403)
}
