package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

const (
	nodeA = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	nodeB = "2be26c0b-03f2-4d2e-ae87-c02d7f33c123"
)

// adminFixture has one replica's services registered ("replica-a") and
// two nodes, nodeA held by a server.
func adminFixture(t *testing.T) (*fixture, string) {
	f := newFixture(t)
	for _, b := range []string{store.BinaryCompute, store.BinaryScheduler, store.BinaryConductor} {
		if _, err := f.store.RegisterService(context.Background(), "replica-a", b, t0); err != nil {
			t.Fatal(err)
		}
	}
	f.nodes = []ironic.Node{
		{UUID: nodeA, ProvisionState: "active", ResourceClass: "baremetal"},
		{UUID: nodeB, ProvisionState: "available", ResourceClass: "baremetal", Maintenance: true},
	}
	id := f.create("held")
	f.advance(id, func(s *lifecycle.Server) { s.Phase, s.NodeID = lifecycle.PhaseActive, nodeA })
	return f, id
}

func keysOf(m map[string]any) string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

func TestHypervisorsShape(t *testing.T) {
	f, held := adminFixture(t)
	detail := "cpu_info,current_workload,disk_available_least,free_disk_gb,free_ram_mb,host_ip,hypervisor_hostname," +
		"hypervisor_type,hypervisor_version,id,local_gb,local_gb_used,memory_mb,memory_mb_used,running_vms,service," +
		"state,status,vcpus,vcpus_used"
	for _, tc := range []struct {
		mv, keys string
		cpuInfo  any
		intID    bool
	}{
		{"2.1", detail, "", true},
		{"2.28", detail, map[string]any{}, true},
		{"2.53", detail, map[string]any{}, false},
		{"2.88", "host_ip,hypervisor_hostname,hypervisor_type,hypervisor_version,id,service,state,status", nil, false},
	} {
		r := f.do("GET", "/v2.1/os-hypervisors/detail", tc.mv, nil).want(t, http.StatusOK)
		hs := list(t, r.body, "hypervisors")
		if len(hs) != 2 {
			t.Fatalf("%s: %d hypervisors", tc.mv, len(hs))
		}
		for _, h := range hs {
			h := h.(map[string]any)
			if got := keysOf(h); got != tc.keys {
				t.Fatalf("%s: members %s, want %s", tc.mv, got, tc.keys)
			}
			_, isNum := h["id"].(float64)
			if isNum != tc.intID || h["hypervisor_type"] != "ironic" || h["state"] != "up" || h["status"] != "enabled" {
				t.Fatalf("%s: %v", tc.mv, h)
			}
			if tc.cpuInfo != nil && fmt.Sprint(h["cpu_info"]) != fmt.Sprint(tc.cpuInfo) {
				t.Fatalf("%s: cpu_info %#v", tc.mv, h["cpu_info"])
			}
			svc := h["service"].(map[string]any)
			if svc["host"] != "replica-a" || keysOf(svc) != "disabled_reason,host,id" {
				t.Fatalf("%s: service %v", tc.mv, svc)
			}
			if tc.mv != "2.88" {
				want := 0.0
				if h["hypervisor_hostname"] == nodeA {
					want = 1
				}
				if h["running_vms"] != want || h["vcpus"] != 0.0 || h["memory_mb"] != 0.0 {
					t.Fatalf("%s: %v", tc.mv, h)
				}
			}
		}
	}
	// with_servers (2.53): the held node lists its server, the free one none.
	r := f.do("GET", "/v2.1/os-hypervisors?with_servers=true", "2.53", nil).want(t, http.StatusOK)
	for _, h := range list(t, r.body, "hypervisors") {
		h := h.(map[string]any)
		servers, has := h["servers"].([]any)
		if (h["id"] == nodeA) != has || (has && servers[0].(map[string]any)["uuid"] != held) {
			t.Fatalf("with_servers: %v", h)
		}
		if keysOf(h) != "hypervisor_hostname,id,servers,state,status" && keysOf(h) != "hypervisor_hostname,id,state,status" {
			t.Fatalf("list members %s", keysOf(h))
		}
	}
	if r := f.do("GET", "/v2.1/os-hypervisors", "2.53", nil).want(t, http.StatusOK); strings.Contains(string(r.raw), "servers") {
		t.Fatalf("servers without with_servers: %s", r.raw)
	}
}

func TestHypervisorShowAndSearch(t *testing.T) {
	f, held := adminFixture(t)
	legacy := list(t, f.do("GET", "/v2.1/os-hypervisors", "2.1", nil).want(t, http.StatusOK).body, "hypervisors")
	var idA string
	for _, h := range legacy {
		if h := h.(map[string]any); h["hypervisor_hostname"] == nodeA {
			idA = fmt.Sprintf("%.0f", h["id"])
		}
	}
	r := f.do("GET", "/v2.1/os-hypervisors/"+idA, "2.1", nil).want(t, http.StatusOK)
	if obj(t, r.body, "hypervisor")["hypervisor_hostname"] != nodeA {
		t.Fatalf("show %s: %s", idA, r.raw)
	}
	f.do("GET", "/v2.1/os-hypervisors/"+nodeA, "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/os-hypervisors/12345", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/os-hypervisors/"+idA, "2.53", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("GET", "/v2.1/os-hypervisors/3be26c0b-03f2-4d2e-ae87-c02d7f33c123", "2.53", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	r = f.do("GET", "/v2.1/os-hypervisors/"+nodeA+"?with_servers=1", "2.53", nil).want(t, http.StatusOK)
	if s := obj(t, r.body, "hypervisor")["servers"].([]any); len(s) != 1 || s[0].(map[string]any)["uuid"] != held {
		t.Fatalf("show with_servers: %s", r.raw)
	}
	f.do("GET", "/v2.1/os-hypervisors/"+nodeA+"?with_servers=maybe", "2.53", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("GET", "/v2.1/os-hypervisors/"+nodeA+"?bogus=1", "2.53", nil).novaError(t, http.StatusBadRequest, "badRequest")
	if h := obj(t, f.do("GET", "/v2.1/os-hypervisors/"+nodeA, "2.88", nil).want(t, http.StatusOK).body, "hypervisor"); h["uptime"] != nil || !strings.Contains(keysOf(h), "uptime") {
		t.Fatalf("2.88 show: %v", h)
	}

	// The old search and servers routes (until 2.52), then the query form.
	r = f.do("GET", "/v2.1/os-hypervisors/1be26c0b/search", "2.1", nil).want(t, http.StatusOK)
	if hs := list(t, r.body, "hypervisors"); len(hs) != 1 || keysOf(hs[0].(map[string]any)) != "hypervisor_hostname,id,state,status" {
		t.Fatalf("search: %s", r.raw)
	}
	r = f.do("GET", "/v2.1/os-hypervisors/"+nodeA+"/servers", "2.52", nil).want(t, http.StatusOK)
	if hs := list(t, r.body, "hypervisors"); len(hs) != 1 || hs[0].(map[string]any)["servers"] == nil {
		t.Fatalf("servers: %s", r.raw)
	}
	f.do("GET", "/v2.1/os-hypervisors/nomatch/search", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/os-hypervisors/1be26c0b/search", "2.53", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/os-hypervisors/1be26c0b/servers", "2.53", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	r = f.do("GET", "/v2.1/os-hypervisors?hypervisor_hostname_pattern=2BE26", "2.53", nil).want(t, http.StatusOK)
	if hs := list(t, r.body, "hypervisors"); len(hs) != 1 || hs[0].(map[string]any)["id"] != nodeB {
		t.Fatalf("pattern: %s", r.raw)
	}
	f.do("GET", "/v2.1/os-hypervisors?hypervisor_hostname_pattern=zzz", "2.53", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/os-hypervisors?hypervisor_hostname_pattern=1&limit=1", "2.53", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("GET", "/v2.1/os-hypervisors?bogus=1", "2.53", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("GET", "/v2.1/os-hypervisors?bogus=1", "2.52", nil).want(t, http.StatusOK)
}

func TestHypervisorPagingStatsUptime(t *testing.T) {
	f, _ := adminFixture(t)
	r := f.do("GET", "/v2.1/os-hypervisors?limit=1", "2.53", nil).want(t, http.StatusOK)
	hs := list(t, r.body, "hypervisors")
	links, _ := r.body["hypervisors_links"].([]any)
	if len(hs) != 1 || hs[0].(map[string]any)["id"] != nodeA || len(links) != 1 ||
		!strings.Contains(links[0].(map[string]any)["href"].(string), "marker="+nodeA) {
		t.Fatalf("first page: %s", r.raw)
	}
	r = f.do("GET", "/v2.1/os-hypervisors/detail?limit=1&marker="+nodeA, "2.53", nil).want(t, http.StatusOK)
	if hs := list(t, r.body, "hypervisors"); len(hs) != 1 || hs[0].(map[string]any)["id"] != nodeB {
		t.Fatalf("second page: %s", r.raw)
	}
	f.do("GET", "/v2.1/os-hypervisors?marker=nope", "2.53", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("GET", "/v2.1/os-hypervisors?limit=-1", "2.33", nil).novaError(t, http.StatusBadRequest, "badRequest")
	if r := f.do("GET", "/v2.1/os-hypervisors?limit=1", "2.32", nil).want(t, http.StatusOK); len(list(t, r.body, "hypervisors")) != 2 {
		t.Fatal("limit honoured before 2.33")
	}

	st := obj(t, f.do("GET", "/v2.1/os-hypervisors/statistics", "2.87", nil).want(t, http.StatusOK).body, "hypervisor_statistics")
	if st["count"] != 2.0 || st["running_vms"] != 1.0 || st["vcpus"] != 0.0 || len(st) != 12 {
		t.Fatalf("statistics %v", st)
	}
	f.do("GET", "/v2.1/os-hypervisors/statistics", "2.88", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/os-hypervisors/"+nodeA+"/uptime", "2.53", nil).novaError(t, http.StatusNotImplemented, "notImplemented")
	f.do("GET", "/v2.1/os-hypervisors/3be26c0b-03f2-4d2e-ae87-c02d7f33c123/uptime", "2.53", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/os-hypervisors/"+nodeA+"/uptime", "2.88", nil).novaError(t, http.StatusNotFound, "itemNotFound")

	// A disabled, then silent, compute service shows on its hypervisors.
	svc, _ := f.store.ListServices(context.Background())
	d, reason := true, new(string)
	*reason = "rack 4"
	if _, err := f.store.UpdateService(context.Background(), svc[0].UUID, store.ServiceUpdate{Disabled: &d, DisabledReason: &reason}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Minute)
	h := obj(t, f.do("GET", "/v2.1/os-hypervisors/"+nodeB, "2.53", nil).want(t, http.StatusOK).body, "hypervisor")
	if h["state"] != "down" || h["status"] != "disabled" || h["service"].(map[string]any)["disabled_reason"] != "rack 4" {
		t.Fatalf("disabled and silent: %v", h)
	}
}

// TestHypervisorsNoService: nodes belong to a compute service; with none
// registered there is no hypervisor.
func TestHypervisorsNoService(t *testing.T) {
	f := newFixture(t)
	f.nodes = []ironic.Node{{UUID: nodeA}}
	if hs := list(t, f.do("GET", "/v2.1/os-hypervisors", "2.1", nil).want(t, http.StatusOK).body, "hypervisors"); len(hs) != 0 {
		t.Fatalf("%v", hs)
	}
}

// TestAdminRoutesRefuseMembers: every admin route is 403 for a project
// member (and for a member of another project).
func TestAdminRoutesRefuseMembers(t *testing.T) {
	f, _ := adminFixture(t)
	svc, _ := f.store.ListServices(context.Background())
	for _, tc := range []struct{ method, path, mv string }{
		{"GET", "/v2.1/os-hypervisors", "2.1"},
		{"GET", "/v2.1/os-hypervisors/detail", "2.1"},
		{"GET", "/v2.1/os-hypervisors/statistics", "2.1"},
		{"GET", "/v2.1/os-hypervisors/" + nodeA, "2.53"},
		{"GET", "/v2.1/os-hypervisors/" + nodeA + "/uptime", "2.53"},
		{"GET", "/v2.1/os-hypervisors/1be/search", "2.1"},
		{"GET", "/v2.1/os-hypervisors/1be/servers", "2.1"},
		{"GET", "/v2.1/os-services", "2.1"},
		{"PUT", "/v2.1/os-services/" + svc[0].UUID, "2.53"},
		{"PUT", "/v2.1/os-services/disable", "2.1"},
		{"DELETE", "/v2.1/os-services/" + svc[0].UUID, "2.53"},
		{"GET", "/v2.1/os-hosts", "2.1"},
		{"GET", "/v2.1/os-hosts/replica-a", "2.1"},
		{"PUT", "/v2.1/os-hosts/replica-a", "2.1"},
		{"GET", "/v2.1/os-hosts/replica-a/startup", "2.1"},
		{"GET", "/v2.1/os-hosts/replica-a/shutdown", "2.1"},
		{"GET", "/v2.1/os-hosts/replica-a/reboot", "2.1"},
	} {
		for _, who := range []http.Header{member, stranger} {
			f.doWith(who, tc.method, tc.path, tc.mv, map[string]any{"status": "enabled"}).novaError(t, http.StatusForbidden, "forbidden")
		}
	}
	if s, _ := f.store.ListServices(context.Background()); len(s) != 3 || s[0].Disabled {
		t.Fatalf("a refused call changed the services: %+v", s)
	}
}
