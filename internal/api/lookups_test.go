package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func TestFlavors(t *testing.T) {
	f := newFixture(t)
	// The SDK sends is_public=None literally; novaclient lists with True.
	for _, q := range []string{"", "?is_public=None", "?is_public=True", "?is_public=true"} {
		l := list(t, f.do("GET", "/v2.1/flavors/detail"+q, "2.61", nil).want(t, 200).body, "flavors")
		if len(l) != 2 {
			t.Fatalf("detail%s: %d flavors", q, len(l))
		}
		fl := l[0].(map[string]any)
		for k, want := range map[string]any{"id": "1", "name": "bm.small", "ram": 4096.0, "disk": 40.0, "vcpus": 2.0,
			"OS-FLV-EXT-DATA:ephemeral": 0.0, "OS-FLV-DISABLED:disabled": false, "os-flavor-access:is_public": true,
			"rxtx_factor": 1.0, "swap": "", "description": "small"} {
			if fl[k] != want {
				t.Errorf("detail%s: %s = %#v, want %#v", q, k, fl[k], want)
			}
		}
		if obj(t, fl, "extra_specs")["resources:CUSTOM_BAREMETAL"] != "1" {
			t.Errorf("extra_specs at 2.61: %v", fl["extra_specs"])
		}
	}
	if l := list(t, f.do("GET", "/v2.1/flavors/detail?is_public=False", "2.61", nil).want(t, 200).body, "flavors"); len(l) != 0 {
		t.Errorf("is_public=False lists %d", len(l))
	}
	f.do("GET", "/v2.1/flavors/detail?is_public=maybe", "2.61", nil).novaError(t, 400, "badRequest")
	old := list(t, f.do("GET", "/v2.1/flavors/detail", "2.1", nil).want(t, 200).body, "flavors")[0].(map[string]any)
	if _, ok := old["extra_specs"]; ok {
		t.Errorf("extra_specs below 2.61")
	}
	if _, ok := old["description"]; ok {
		t.Errorf("description below 2.55")
	}
	if fl := obj(t, f.do("GET", "/v2.1/flavors/1", "2.90", nil).want(t, 200).body, "flavor"); fl["swap"] != 0.0 {
		t.Errorf("swap from 2.75: %#v", fl["swap"])
	}

	l := list(t, f.do("GET", "/v2.1/flavors", "2.1", nil).want(t, 200).body, "flavors")
	if len(l) != 2 || l[1].(map[string]any)["name"] != "bm.large" || l[1].(map[string]any)["id"] != "2" {
		t.Errorf("flavors %v", l)
	}
	if l := list(t, f.do("GET", "/v2.1/flavors?minRam=8192", "2.1", nil).want(t, 200).body, "flavors"); len(l) != 1 {
		t.Errorf("minRam: %v", l)
	}
	if l := list(t, f.do("GET", "/v2.1/flavors?marker=1&limit=5", "2.1", nil).want(t, 200).body, "flavors"); len(l) != 1 {
		t.Errorf("marker: %v", l)
	}
	f.do("GET", "/v2.1/flavors?marker=9", "2.1", nil).novaError(t, 400, "badRequest")

	// By id and by name (novaclient tries GET /flavors/NAME first).
	for _, ref := range []string{"2", "bm.large"} {
		fl := obj(t, f.do("GET", "/v2.1/flavors/"+ref, "2.1", nil).want(t, 200).body, "flavor")
		if fl["id"] != "2" || fl["name"] != "bm.large" {
			t.Errorf("flavor %s: %v", ref, fl)
		}
	}
	f.do("GET", "/v2.1/flavors/nope", "2.1", nil).novaError(t, 404, "itemNotFound")

	specs := obj(t, f.do("GET", "/v2.1/flavors/2/os-extra_specs", "2.1", nil).want(t, 200).body, "extra_specs")
	for k, want := range map[string]string{"resources:CUSTOM_BM_LARGE_V2": "1", "resources:VCPU": "0",
		"resources:MEMORY_MB": "0", "resources:DISK_GB": "0", "trait:CUSTOM_GPU": "required",
		"trait:CUSTOM_SLOW": "forbidden", "capabilities:boot_mode": "uefi"} {
		if specs[k] != want {
			t.Errorf("extra spec %s = %v, want %s", k, specs[k], want)
		}
	}
	if one := f.do("GET", "/v2.1/flavors/2/os-extra_specs/resources:VCPU", "2.1", nil).want(t, 200); one.body["resources:VCPU"] != "0" {
		t.Errorf("one spec %s", one.raw)
	}
	f.do("GET", "/v2.1/flavors/2/os-extra_specs/nope", "2.1", nil).novaError(t, 404, "itemNotFound")
}

func TestImageLookups(t *testing.T) {
	f := newFixture(t)
	for _, root := range []string{"/v2.1", "/image/v2"} {
		img := f.do("GET", root+"/images/"+imageID, "", nil).want(t, 200).body
		if img["id"] != imageID || img["name"] != "debian-12" || img["status"] != "active" ||
			img["checksum"] != "0123456789abcdef0123456789abcdef" || img["os_distro"] != "debian" {
			t.Errorf("%s image %v", root, img)
		}
		if _, wrapped := img["image"]; wrapped {
			t.Errorf("%s: Nova's proxy shape, want Glance's bare object", root)
		}
		// A name in the id position is 404; the SDK then lists by name.
		f.do("GET", root+"/images/debian-12", "", nil).novaError(t, 404, "itemNotFound")
		l := list(t, f.do("GET", root+"/images?name=debian-12", "", nil).want(t, 200).body, "images")
		if len(l) != 1 || l[0].(map[string]any)["id"] != imageID {
			t.Errorf("%s ?name= %v", root, l)
		}
		if l := list(t, f.do("GET", root+"/images", "", nil).want(t, 200).body, "images"); len(l) != 2 {
			t.Errorf("%s list %v", root, l)
		}
		if l := list(t, f.do("GET", root+"/images?name=nothing", "", nil).want(t, 200).body, "images"); len(l) != 0 {
			t.Errorf("%s unknown name %v", root, l)
		}
	}
	for _, p := range []string{"/image", "/image/"} {
		v := list(t, f.do("GET", p, "", nil).want(t, 200).body, "versions")[0].(map[string]any)
		self := v["links"].([]any)[0].(map[string]any)
		if v["status"] != "CURRENT" || self["href"] != f.url+"/image/v2/" {
			t.Errorf("%s version doc %v", p, v)
		}
	}
}

func TestNetworkAndPortLookups(t *testing.T) {
	f := newFixture(t)
	id := f.create("vm1")
	portID := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	if err := f.store.CreatePort(context.Background(), store.Port{ID: portID, ServerID: id, NetworkID: netID,
		IP: "10.0.0.11", MAC: "52:54:00:00:00:01", VIFNode: "node-1", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"/v2.1", "/network/v2.0", "/v2.1/v2.0"} {
		n := obj(t, f.do("GET", root+"/networks/"+netID, "", nil).want(t, 200).body, "network")
		if n["id"] != netID || n["name"] != "provisioning" || n["status"] != "ACTIVE" || n["mtu"] != 1500.0 {
			t.Errorf("%s network %v", root, n)
		}
		f.do("GET", root+"/networks/provisioning", "", nil).novaError(t, 404, "itemNotFound")
		l := list(t, f.do("GET", root+"/networks?name=storage", "", nil).want(t, 200).body, "networks")
		if len(l) != 1 || l[0].(map[string]any)["id"] != net2ID {
			t.Errorf("%s ?name= %v", root, l)
		}
		if l := list(t, f.do("GET", root+"/networks?id="+net2ID+"&id="+netID, "", nil).want(t, 200).body, "networks"); len(l) != 2 {
			t.Errorf("%s ?id= %v", root, l)
		}
		p := obj(t, f.do("GET", root+"/ports/"+portID, "", nil).want(t, 200).body, "port")
		ips := p["fixed_ips"].([]any)
		if p["id"] != portID || p["network_id"] != netID || p["mac_address"] != "52:54:00:00:00:01" ||
			p["device_id"] != id || len(ips) != 1 || ips[0].(map[string]any)["ip_address"] != "10.0.0.11" ||
			p["status"] != "ACTIVE" {
			t.Errorf("%s port %v", root, p)
		}
		n2 := obj(t, f.do("GET", root+"/networks/"+netID, "", nil).want(t, 200).body, "network")
		if n2["subnets"].([]any)[0] != ips[0].(map[string]any)["subnet_id"] {
			t.Errorf("port subnet %v is not the network's %v", ips, n2["subnets"])
		}
		f.do("GET", root+"/ports/"+unknownID, "", nil).novaError(t, 404, "itemNotFound")
		f.do("GET", root+"/ports/xyz", "", nil).novaError(t, 404, "itemNotFound")
	}
	for _, p := range []string{"/network", "/network/"} {
		v := list(t, f.do("GET", p, "", nil).want(t, 200).body, "versions")[0].(map[string]any)
		if self := v["links"].([]any)[0].(map[string]any); self["href"] != f.url+"/network/v2.0/" {
			t.Errorf("%s version doc %v", p, v)
		}
	}
}

func TestNodeListing(t *testing.T) {
	f := newFixture(t)
	id := f.create("vm1")
	f.advance(id, func(s *lifecycle.Server) { s.Phase, s.NodeID = lifecycle.PhaseReserving, "node-a" })
	f.mu.Lock()
	f.nodes = []ironic.Node{
		{UUID: "node-a", Name: "rack1-a", ProvisionState: "available", InstanceUUID: id, ResourceClass: "baremetal", Traits: []string{"CUSTOM_GPU"}},
		{UUID: "node-b", Name: "rack1-b", ProvisionState: "deploy failed", LastError: "boom", Maintenance: true},
	}
	f.mu.Unlock()
	nodes := list(t, f.do("GET", "/ingot/v1/nodes", "", nil).want(t, 200).body, "nodes")
	if len(nodes) != 2 {
		t.Fatalf("nodes %v", nodes)
	}
	a, b := nodes[0].(map[string]any), nodes[1].(map[string]any)
	if a["uuid"] != "node-a" || a["server_id"] != id || a["instance_uuid"] != id || a["last_error"] != nil {
		t.Errorf("node a %v", a)
	}
	if b["server_id"] != nil || b["maintenance"] != true || b["last_error"] != "boom" || b["provision_state"] != "deploy failed" {
		t.Errorf("node b %v", b)
	}
	if fmt.Sprint(a["traits"]) != "[CUSTOM_GPU]" || fmt.Sprint(b["traits"]) != "[]" {
		t.Errorf("traits %v / %v, want [CUSTOM_GPU] / [] (never null)", a["traits"], b["traits"])
	}
	if !strings.Contains(string(f.do("GET", "/ingot/v1/nodes", "", nil).raw), `"target_provision_state":null`) {
		t.Errorf("null target_provision_state expected")
	}
}

func TestServerSubresources(t *testing.T) {
	f := newFixture(t)
	id := f.create("vm1")
	portID := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	if err := f.store.CreatePort(context.Background(), store.Port{ID: portID, ServerID: id, NetworkID: netID,
		IP: "10.0.0.11", MAC: "52:54:00:00:00:01", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if md := obj(t, f.do("GET", "/v2.1/servers/"+id+"/metadata", "2.90", nil).want(t, 200).body, "metadata"); len(md) != 0 {
		t.Errorf("metadata %v", md)
	}
	ips := list(t, obj(t, f.do("GET", "/v2.1/servers/"+id+"/ips", "2.90", nil).want(t, 200).body, "addresses"), "provisioning")
	if len(ips) != 1 || ips[0].(map[string]any)["addr"] != "10.0.0.11" {
		t.Errorf("ips %v", ips)
	}
	ifs := list(t, f.do("GET", "/v2.1/servers/"+id+"/os-interface", "2.90", nil).want(t, 200).body, "interfaceAttachments")
	if len(ifs) != 1 || ifs[0].(map[string]any)["port_id"] != portID || ifs[0].(map[string]any)["port_state"] != "DOWN" {
		t.Errorf("interfaces %v", ifs)
	}
	for _, p := range []string{"tags", "os-volume_attachments"} {
		if r := f.do("GET", "/v2.1/servers/"+id+"/"+p, "2.90", nil).want(t, 200); len(r.body) != 1 {
			t.Errorf("%s: %s", p, r.raw)
		}
		f.do("GET", "/v2.1/servers/"+unknownID+"/"+p, "2.90", nil).novaError(t, 404, "itemNotFound")
	}
	for _, root := range []string{"/v2.1", "/network/v2.0"} {
		ports := list(t, f.do("GET", root+"/ports?device_id="+id, "", nil).want(t, 200).body, "ports")
		if len(ports) != 1 || ports[0].(map[string]any)["id"] != portID {
			t.Errorf("%s ports %v", root, ports)
		}
		if l := list(t, f.do("GET", root+"/ports?device_id=vm1", "", nil).want(t, 200).body, "ports"); len(l) != 0 {
			t.Errorf("ports of a name: %v", l)
		}
		f.do("GET", root+"/ports", "", nil).novaError(t, 400, "badRequest")
		// The SDK's look-up of `server create --port X`: by id, then by name.
		if l := list(t, f.do("GET", root+"/ports?id="+portID, "", nil).want(t, 200).body, "ports"); len(l) != 1 || l[0].(map[string]any)["id"] != portID {
			t.Errorf("ports by id: %v", l)
		}
		for _, q := range []string{"id=" + unknownID, "id=x", "name=" + portID, "name=p1"} {
			if l := list(t, f.do("GET", root+"/ports?"+q, "", nil).want(t, 200).body, "ports"); len(l) != 0 {
				t.Errorf("ports?%s: %v", q, l)
			}
		}
	}
	zones := list(t, f.do("GET", "/v2.1/os-availability-zone", "2.90", nil).want(t, 200).body, "availabilityZoneInfo")
	if len(zones) != 1 || zones[0].(map[string]any)["zoneName"] != "nova" {
		t.Errorf("zones %v", zones)
	}
	// `openstack availability zone list --compute` reads the detail.
	zones = list(t, f.do("GET", "/v2.1/os-availability-zone/detail", "2.90", nil).want(t, 200).body, "availabilityZoneInfo")
	if len(zones) != 1 || obj(t, zones[0], "hosts", "ingot", "nova-compute")["available"] != true {
		t.Errorf("zones detail %v", zones)
	}
}

// TestNovaImageProxy: a compute client (one that names a microversion) gets
// Nova's image proxy until 2.35 — index, detail, show with ACTIVE, minDisk
// and links — and 404 from 2.36; the CLI's Glance look-ups (no
// microversion) keep Glance's shapes.
func TestNovaImageProxy(t *testing.T) {
	f := newFixture(t)
	detail := list(t, f.do("GET", "/v2.1/images/detail", "2.35", nil).want(t, 200).body, "images")
	if len(detail) != 2 {
		t.Fatalf("detail: %v", detail)
	}
	d := detail[0].(map[string]any)
	if d["id"] != imageID || d["status"] != "ACTIVE" || d["progress"] != 100.0 || d["links"] == nil || d["minRam"] != 0.0 {
		t.Errorf("detail image %v", d)
	}
	if l := list(t, f.do("GET", "/v2.1/images/detail?name=debian-12", "2.1", nil).want(t, 200).body, "images"); len(l) != 1 {
		t.Errorf("detail by name: %v", l)
	}
	idx := list(t, f.do("GET", "/v2.1/images", "2.1", nil).want(t, 200).body, "images")
	if m := idx[0].(map[string]any); keysOf(m) != "id,links,name" {
		t.Errorf("index image %v", m)
	}
	if img := obj(t, f.do("GET", "/v2.1/images/"+imageID, "2.35", nil).want(t, 200).body, "image"); img["status"] != "ACTIVE" {
		t.Errorf("show %v", img)
	}
	f.do("GET", "/v2.1/images/"+unknownID, "2.35", nil).novaError(t, 404, "itemNotFound")
	for _, p := range []string{"/v2.1/images", "/v2.1/images/detail", "/v2.1/images/" + imageID} {
		f.do("GET", p, "2.36", nil).novaError(t, 404, "itemNotFound")
	}
	if img := f.do("GET", "/v2.1/images/"+imageID, "", nil).want(t, 200).body; img["status"] != "active" {
		t.Errorf("Glance's shape without a microversion: %v", img)
	}
}
