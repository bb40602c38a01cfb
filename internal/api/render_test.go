package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// TestServerBodyPerMicroversion checks the members the OpenStack CLI needs
// (docs/clients.md) and the version-dependent ones, in show and in the detail list.
func TestServerBodyPerMicroversion(t *testing.T) {
	f := newFixture(t)
	id := f.create("vm1")
	portID := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	if err := f.store.CreatePort(context.Background(), store.Port{ID: portID, ServerID: id, NetworkID: netID,
		IP: "10.0.0.11", MAC: "52:54:00:00:00:01", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(90 * time.Second)
	f.advance(id, func(s *lifecycle.Server) {
		s.Phase, s.NodeID, s.PortsAllocated = lifecycle.PhaseActive, "node-7", true
		s.LaunchedAt = f.clock.Now()
	})

	for _, mv := range []string{"", "2.1", "2.47", "2.90", "latest"} {
		t.Run("v"+mv, func(t *testing.T) {
			show := f.do("GET", "/v2.1/servers/"+id, mv, nil).want(t, 200)
			detail := f.do("GET", "/v2.1/servers/detail", mv, nil).want(t, 200)
			l := list(t, detail.body, "servers")
			if len(l) != 1 {
				t.Fatalf("detail lists %d", len(l))
			}
			for i, s := range []map[string]any{obj(t, show.body, "server"), l[0].(map[string]any)} {
				checkServer(t, s, id, mv, i == 1)
			}
		})
	}
}

func checkServer(t *testing.T, s map[string]any, id, mv string, detailList bool) {
	t.Helper()
	minor := map[string]int{"": 1, "2.1": 1, "2.47": 47, "2.90": 90, "latest": 92}[mv]
	for k, want := range map[string]any{
		"id": id, "name": "vm1", "status": "ACTIVE", "OS-EXT-STS:vm_state": "active",
		"OS-EXT-STS:power_state": 1.0, "OS-EXT-SRV-ATTR:hypervisor_hostname": "node-7",
		"OS-EXT-SRV-ATTR:host": "ingot", "OS-EXT-AZ:availability_zone": "nova", "progress": 100.0,
		"created": "2026-11-30T01:00:00Z", "updated": "2026-11-30T01:01:30Z",
		"OS-SRV-USG:launched_at": "2026-11-30T01:01:30.000000", "config_drive": "True",
		"accessIPv4": "", "OS-DCF:diskConfig": "MANUAL",
	} {
		if s[k] != want {
			t.Errorf("%s = %#v, want %#v", k, s[k], want)
		}
	}
	for _, k := range []string{"OS-EXT-STS:task_state", "OS-SRV-USG:terminated_at", "key_name"} {
		if v, ok := s[k]; !ok || v != nil {
			t.Errorf("%s = %#v (present %v), want null", k, v, ok)
		}
	}
	if rd, ok := s["OS-EXT-SRV-ATTR:root_device_name"]; minor >= 3 && rd != "/dev/sda" || minor < 3 && ok {
		t.Errorf("OS-EXT-SRV-ATTR:root_device_name = %#v (present %v)", rd, ok)
	}
	if _, ok := s["metadata"].(map[string]any); !ok {
		t.Errorf("metadata %#v: must always be an object", s["metadata"])
	}
	if img := obj(t, s, "image"); img["id"] != imageID {
		t.Errorf("image %v", img)
	}
	fl := obj(t, s, "flavor")
	if minor < 47 {
		if fl["id"] != "1" || fl["links"] == nil {
			t.Errorf("flavor below 2.47: %v", fl)
		}
	} else {
		if fl["original_name"] != "bm.small" || fl["vcpus"] != 2.0 || fl["ram"] != 4096.0 || fl["disk"] != 40.0 ||
			fl["ephemeral"] != 0.0 || fl["swap"] != 0.0 {
			t.Errorf("flavor from 2.47: %v", fl)
		}
		if specs := obj(t, fl, "extra_specs"); specs["resources:CUSTOM_BAREMETAL"] != "1" {
			t.Errorf("flavor extra_specs %v", specs)
		}
	}
	addrs := list(t, obj(t, s, "addresses"), "provisioning")
	if a := addrs[0].(map[string]any); len(addrs) != 1 || a["addr"] != "10.0.0.11" || a["version"] != 4.0 ||
		a["OS-EXT-IPS-MAC:mac_addr"] != "52:54:00:00:00:01" || a["OS-EXT-IPS:type"] != "fixed" {
		t.Errorf("addresses %v", addrs)
	}
	if h, _ := s["hostId"].(string); len(h) != 56 {
		t.Errorf("hostId %q", h)
	}
	if sg := s["security_groups"].([]any); len(sg) != 1 {
		t.Errorf("security_groups %v", sg)
	}
	if v := s["os-extended-volumes:volumes_attached"].([]any); len(v) != 0 {
		t.Errorf("volumes %v", v)
	}
	for _, k := range []string{"ingot:phase", "ingot:attempts", "ingot:fault"} {
		if _, ok := s[k]; ok {
			t.Errorf("%s shown without %s", k, "X-Ingot-Extensions")
		}
	}
	if _, ok := s["fault"]; ok {
		t.Errorf("fault on an ACTIVE server")
	}
	present := func(k string, from int) {
		t.Helper()
		if _, ok := s[k]; ok != (minor >= from) {
			t.Errorf("%s present=%v at 2.%d (from 2.%d)", k, ok, minor, from)
		}
	}
	present("OS-EXT-SRV-ATTR:hostname", 3)
	if h, ok := s["OS-EXT-SRV-ATTR:hostname"]; ok && h != s["name"] {
		t.Errorf("hostname %v: want the name %v (no hostname was requested)", h, s["name"])
	}
	present("locked", 9)
	present("description", 19)
	present("tags", 26)
	if _, ok := s["server_groups"]; ok != (minor >= 71 && !detailList) {
		t.Errorf("server_groups present=%v at 2.%d (from 2.71, not in /servers/detail)", ok, minor)
	}
	present("locked_reason", 73)
}

func TestErrorServerShowsFault(t *testing.T) {
	f := newFixture(t)
	id := f.create("broken")
	at := t0.Add(5 * time.Minute)
	f.advance(id, func(s *lifecycle.Server) {
		s.Phase = lifecycle.PhaseError
		s.Attempts = []lifecycle.Attempt{
			{Node: "node-1", Step: lifecycle.StepDeploy, Reason: lifecycle.ReasonDeployFailed, Message: "deploy failed on node-1: bad disk", At: at},
			{Node: "node-2", Step: lifecycle.StepDeploy, Reason: lifecycle.ReasonNodeDeleted, Message: "node-2 deleted while deploying", At: at},
		}
		s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonNodeDeleted, Message: "node-2 deleted while deploying",
			Node: "node-2", Step: lifecycle.StepDeploy, At: at}
	})
	ext := http.Header{"X-Ingot-Extensions": {"true"}}
	s := obj(t, f.doWith(ext, "GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server")
	if s["status"] != "ERROR" || s["OS-EXT-STS:vm_state"] != "error" || s["ingot:phase"] != "error" {
		t.Errorf("status %v vm_state %v phase %v", s["status"], s["OS-EXT-STS:vm_state"], s["ingot:phase"])
	}
	if p, ok := s["progress"]; ok {
		t.Errorf("progress %v on an ERROR server (Nova shows it only in its progress statuses)", p)
	}
	fault := obj(t, s, "fault")
	if fault["code"] != 500.0 || fault["message"] != "node_deleted: node-2 deleted while deploying" || fault["created"] != "2026-11-30T01:05:00Z" {
		t.Errorf("fault %v", fault)
	}
	details, _ := fault["details"].(string)
	for _, want := range []string{"node_deleted", "node-2", "attempt 1: node node-1", "deploy_failed"} {
		if !strings.Contains(details, want) {
			t.Errorf("fault details %q lack %q", details, want)
		}
	}
	ing := obj(t, s, "ingot:fault")
	if ing["reason"] != "node_deleted" || ing["node"] != "node-2" || ing["step"] != "deploy" {
		t.Errorf("ingot:fault %v", ing)
	}
	if a := s["ingot:attempts"].([]any); len(a) != 2 || a[0].(map[string]any)["reason"] != "deploy_failed" {
		t.Errorf("ingot:attempts %v", a)
	}
	// A member sees the reason code in the message, but neither the
	// details (Nova shows a 500 fault's details to admins only) nor, without
	// the header, the extension members.
	s = obj(t, f.doWith(member, "GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server")
	fault = obj(t, s, "fault")
	if _, ok := fault["details"]; ok || fault["message"] != "node_deleted: node-2 deleted while deploying" {
		t.Errorf("member's fault %v", fault)
	}
	if _, ok := s["ingot:fault"]; ok {
		t.Errorf("ingot:fault without the header")
	}
	// While its delete is carried out the server stays ERROR with its
	// fault and task_state deleting, as Nova shows it.
	f.do("DELETE", "/v2.1/servers/"+id, "2.90", nil).want(t, http.StatusNoContent)
	s = obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server")
	if s["status"] != "ERROR" || s["OS-EXT-STS:task_state"] != "deleting" || s["fault"] == nil {
		t.Errorf("after delete: status %v task_state %v fault %v", s["status"], s["OS-EXT-STS:task_state"], s["fault"])
	}
}

func TestMicroversions(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		hdr, val string
		status   int
		answered string
	}{
		{"", "", 200, "2.1"},
		{"X-OpenStack-Nova-API-Version", "2.1", 200, "2.1"},
		{"X-OpenStack-Nova-API-Version", "2.90", 200, "2.90"},
		{"X-OpenStack-Nova-API-Version", "2.92", 200, "2.92"},
		{"X-OpenStack-Nova-API-Version", "latest", 200, "2.92"},
		{"OpenStack-API-Version", "compute 2.60", 200, "2.60"},
		{"OpenStack-API-Version", "compute latest", 200, "2.92"},
		{"OpenStack-API-Version", "image 2.5", 200, "2.1"}, // not ours: the minimum
		{"X-OpenStack-Nova-API-Version", "2.93", 406, ""},
		{"X-OpenStack-Nova-API-Version", "2.0", 406, ""},
		{"X-OpenStack-Nova-API-Version", "3.1", 406, ""},
		{"OpenStack-API-Version", "compute 2.100", 406, ""},
		{"X-OpenStack-Nova-API-Version", "abc", 400, ""},
		{"X-OpenStack-Nova-API-Version", "2.x", 400, ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("GET", f.url+"/v2.1/servers/detail", nil)
		if c.hdr != "" {
			req.Header.Set(c.hdr, c.val)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %s -> %d, want %d", c.hdr, c.val, resp.StatusCode, c.status)
			continue
		}
		if c.answered != "" {
			if got := resp.Header.Get("X-OpenStack-Nova-API-Version"); got != c.answered {
				t.Errorf("%s: %s answered as %q, want %q", c.hdr, c.val, got, c.answered)
			}
			if got := resp.Header.Get("OpenStack-API-Version"); got != "compute "+c.answered {
				t.Errorf("OpenStack-API-Version %q", got)
			}
			if v := strings.Join(resp.Header.Values("Vary"), ","); !strings.Contains(v, "OpenStack-API-Version") {
				t.Errorf("Vary %q", v)
			}
		}
	}
	msg := f.do("GET", "/v2.1/servers", "2.93", nil).novaError(t, 406, "notAcceptable")
	if !strings.Contains(msg, "Minimum is 2.1 and maximum is 2.92") {
		t.Errorf("406 message %q", msg)
	}
	f.do("POST", "/v2.1/servers", "2.99", validCreate()).novaError(t, 406, "notAcceptable")
	if f.serverCount() != 0 {
		t.Fatalf("a 406 create was stored")
	}
}

func TestVersionDocuments(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/v2.1", "/v2.1/"} {
		// Unauthenticated, whatever microversion header (none here).
		req, _ := http.NewRequest("GET", f.url+p, nil)
		req.Host = "api.example:8774"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", p, resp.StatusCode)
		}
		v := obj(t, f.do("GET", p, "", nil).want(t, 200).body, "version")
		if v["id"] != "v2.1" || v["status"] != "CURRENT" || v["version"] != "2.92" || v["min_version"] != "2.1" {
			t.Errorf("%s: %v", p, v)
		}
		self := v["links"].([]any)[0].(map[string]any)
		if self["rel"] != "self" || self["href"] != f.url+"/v2.1/" {
			t.Errorf("%s self link %v", p, self)
		}
	}
	vs := list(t, f.do("GET", "/", "", nil).want(t, 200).body, "versions")
	if len(vs) != 2 || vs[0].(map[string]any)["id"] != "v2.0" || vs[1].(map[string]any)["id"] != "v2.1" {
		t.Errorf("versions %v", vs)
	}
	// Links never follow what the client writes (Host, X-Forwarded-*)
	// unless a trusted proxy sent it (hardening_test.go).
	req, _ := http.NewRequest("GET", f.url+"/v2.1", nil)
	req.Host = "evil.example"
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-Host", "cloud.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Version struct {
			Links []struct{ Href string }
		}
	}
	if err := decodeJSON(resp, &doc); err != nil || doc.Version.Links[0].Href != f.url+"/v2.1/" {
		t.Errorf("forwarded self link %+v (%v)", doc, err)
	}
}

func TestRoutingErrorsAreNovaShaped(t *testing.T) {
	f := newFixture(t)
	f.do("GET", "/v2.1/nothing-here", "", nil).novaError(t, 404, "itemNotFound")
	f.do("GET", "/nope", "", nil).novaError(t, 404, "itemNotFound")
	r := f.do("PUT", "/v2.1/servers", "", "{}")
	r.novaError(t, 405, "badMethod")
	if r.header.Get("X-Openstack-Request-Id") == "" {
		t.Errorf("no request id on a 405")
	}
	f.do("PATCH", "/v2.1/flavors/1", "", "{}").novaError(t, 405, "badMethod")
	// The mux's redirect to a cleaned path is not turned into an error.
	if l := list(t, f.do("GET", "//v2.1/servers", "", nil).want(t, 200).body, "servers"); len(l) != 0 {
		t.Errorf("servers %v", l)
	}
}

func TestOps(t *testing.T) {
	f := newFixture(t)
	if r := f.do("GET", "/healthz", "", nil).want(t, 200); !strings.Contains(string(r.raw), "ok") {
		t.Errorf("healthz %q", r.raw)
	}
	f.do("GET", "/readyz", "", nil).want(t, 200)
	f.mu.Lock()
	f.ready = errNotReady
	f.mu.Unlock()
	if r := f.do("GET", "/readyz", "", nil).want(t, 503); !strings.Contains(string(r.raw), "ironic down") {
		t.Errorf("readyz %q", r.raw)
	}
	f.do("GET", "/healthz", "", nil).want(t, 200)
	// No metrics handler configured: a Nova-shaped 404, not a panic.
	f.do("GET", "/metrics", "", nil).novaError(t, 404, "itemNotFound")
}
