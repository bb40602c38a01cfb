package ironicsim

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

func TestListPaginationQuirk(t *testing.T) {
	h := newHarness(t, Options{})
	gold := h.sim.AddNodes(3, NodeSpec{NamePrefix: "gold", ResourceClass: "gold"})
	silver := h.sim.AddNodes(3, NodeSpec{NamePrefix: "silver", ResourceClass: "silver"})
	_ = silver
	// Interleave: one more gold node after the silver ones.
	gold = append(gold, h.addNode(NodeSpec{NamePrefix: "gold-late", ResourceClass: "gold"}))

	r := h.do("GET", "/v1/nodes?resource_class=gold&fields=uuid,resource_class&limit=2", nil)
	h.want(r, 200, "")
	body := r.json()
	page := body["nodes"].([]any)
	if len(page) != 2 || page[0].(map[string]any)["uuid"] != gold[0] || page[1].(map[string]any)["uuid"] != gold[1] {
		t.Fatalf("page 1: %s", r.body)
	}
	next := body["next"].(string)
	wantNext := h.srv.URL + "/v1/nodes?sort_key=id&sort_dir=asc&fields=uuid,resource_class&limit=2&marker=" + gold[1]
	if next != wantNext {
		t.Fatalf("next\n %s\nwant %s", next, wantNext)
	}
	// Page 2 from the link as given has lost the resource_class filter.
	r = h.do("GET", strings.TrimPrefix(next, h.srv.URL), nil)
	page = r.json()["nodes"].([]any)
	if len(page) != 2 || page[0].(map[string]any)["uuid"] != gold[2] || page[1].(map[string]any)["resource_class"] != "silver" {
		t.Fatalf("page 2 should be unfiltered: %s", r.body)
	}
	// Links are always present, even with fields.
	if _, ok := page[0].(map[string]any)["links"]; !ok {
		t.Errorf("no links with fields")
	}

	// Truthy associated and maintenance survive; false ones do not.
	_ = h.sim.SetMaintenance(gold[0], true, "")
	r = h.do("GET", "/v1/nodes?maintenance=true&associated=False&limit=1", nil)
	next = r.json()["next"].(string)
	if !strings.Contains(next, "maintenance=True&") || strings.Contains(next, "associated") {
		t.Errorf("next %s", next)
	}
	r = h.do("GET", "/v1/nodes?associated=true&limit=1", nil)
	if n := r.json()["nodes"].([]any); len(n) != 0 || r.json()["next"] != nil {
		t.Errorf("no associated node: %s", r.body)
	}
	// A page shorter than the limit has no next link; a full one has.
	if r := h.do("GET", "/v1/nodes?limit=7", nil); r.json()["next"] == nil {
		t.Errorf("full page without next")
	}
	if r := h.do("GET", "/v1/nodes?limit=8", nil); r.json()["next"] != nil {
		t.Errorf("short page with next")
	}
	// Detail lists carry detail in their own link.
	r = h.do("GET", "/v1/nodes/detail?limit=3&provision_state=available", nil)
	if next := r.json()["next"].(string); !strings.HasPrefix(next, h.srv.URL+"/v1/nodes/detail?sort_key=id&sort_dir=asc&limit=3&marker=") {
		t.Errorf("detail next %s", next)
	}
	if _, ok := r.json()["nodes"].([]any)[0].(map[string]any)["driver_info"]; !ok {
		t.Errorf("detail without full fields")
	}
	// desc order.
	r = h.do("GET", "/v1/nodes?sort_dir=desc&limit=2&marker="+gold[2], nil)
	if p := r.json()["nodes"].([]any); p[0].(map[string]any)["uuid"] != gold[1] {
		t.Errorf("desc after marker: %s", r.body)
	}

	h.want(h.do("GET", "/v1/nodes?limit=0", nil), 400, "Limit must be positive")
	h.want(h.do("GET", "/v1/nodes?fields=uuid,created_at", nil), 400, "Field created_at is not a valid field.")
	h.want(h.do("GET", "/v1/nodes?fields=uuid,provision_updated_at", nil), 200, "")
	h.want(h.do("GET", "/v1/nodes?instance_uuid=x", nil), 400, "Expected UUID for instance_uuid: x")
	h.want(h.do("GET", "/v1/nodes?provision_state=nope", nil), 400, `Provision state "nope" is not valid`)
	h.want(h.do("GET", "/v1/nodes?bogus=1", nil), 400, "Unexpected arguments: bogus")
	h.want(h.do("GET", "/v1/nodes?marker="+inst1, nil), 404, "Node "+inst1+" could not be found.")
	h.want(h.do("GET", "/v1/nodes/detail?fields=uuid", nil), 400, "Unexpected arguments: fields")
	if r := h.do("GET", "/v1/nodes?limit=5000", nil); len(r.json()["nodes"].([]any)) != 7 {
		t.Errorf("limit above max")
	}
	// Filters.
	cases := map[string]int{
		"resource_class=silver": 3, "maintenance=true": 1, "maintenance=false": 6,
		"associated=false": 7, "provision_state=available": 7, "provision_state=active": 0,
	}
	for q, want := range cases {
		if got := len(h.do("GET", "/v1/nodes?"+q, nil).json()["nodes"].([]any)); got != want {
			t.Errorf("%s: %d nodes, want %d", q, got, want)
		}
	}
}

func TestGophercloudDecodes(t *testing.T) {
	h := newHarness(t, Options{VIFMode: VIFModeStore})
	h.sim.AddNodes(5, NodeSpec{ResourceClass: "baremetal", Ports: 1})
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: h.srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.78"
	ctx := context.Background()
	pages, err := nodes.List(c, nodes.ListOpts{Fields: []string{"uuid", "name", "provision_state", "instance_uuid",
		"power_state", "resource_class", "provision_updated_at"}, Limit: 2}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := nodes.ExtractNodes(pages)
	if err != nil || len(list) != 5 {
		t.Fatalf("list: %d nodes, %v", len(list), err)
	}
	id := list[0].UUID
	if list[0].ProvisionState != "available" || list[0].ResourceClass != "baremetal" || list[0].ProvisionUpdatedAt.IsZero() {
		t.Errorf("listed node %+v", list[0])
	}
	n, err := nodes.Update(ctx, c, id, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_uuid", Value: inst1},
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info", Value: map[string]any{"image_source": "http://127.0.0.1:1/img.qcow2", "root_gb": "10"}},
	}).Extract()
	if err != nil || n.InstanceUUID != inst1 || n.InstanceInfo["root_gb"] != "10" {
		t.Fatalf("update: %v %+v", err, n)
	}
	if err := nodes.AttachVirtualInterface(ctx, c, id, nodes.VirtualInterfaceOpts{ID: "vif-1"}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if v, err := nodes.ListVirtualInterfaces(ctx, c, id).Extract(); err != nil || len(v) != 1 || v[0].ID != "vif-1" {
		t.Errorf("vifs %+v", v)
	}
	err = nodes.ChangeProvisionState(ctx, c, id, nodes.ProvisionStateOpts{Target: nodes.TargetActive,
		ConfigDrive: map[string]any{"user_data": "#cloud-config"}}).ExtractErr()
	if err != nil {
		t.Fatal(err)
	}
	n, err = nodes.Get(ctx, c, id).Extract()
	if err != nil || n.ProvisionState != "active" || n.InstanceInfo["configdrive"] != "******" {
		t.Fatalf("get: %v %+v", err, n)
	}
	// Errors come back as gophercloud's ErrUnexpectedResponseCode.
	_, err = nodes.Update(ctx, c, list[1].UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_uuid", Value: inst1}}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Errorf("conflict: %v", err)
	}
	_, err = nodes.Get(ctx, c, inst2).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("404: %v", err)
	}
}

func TestCountsAndFaults(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{})
	h.do("GET", "/v1/nodes", nil)
	h.do("GET", "/v1/nodes?limit=5", nil)
	h.patch(id, op("add", "/extra/a", 1))
	h.provision(id, map[string]any{"target": "active"})
	h.do("GET", "/v1/nothing", nil)
	want := map[string]int{"GET /v1/nodes": 2, "PATCH /v1/nodes/{node}": 1,
		"PUT /v1/nodes/{node}/states/provision": 1, "GET (unmatched)": 1}
	got := h.sim.Counts()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("count %q = %d, want %d (all %v)", k, got[k], v, got)
		}
	}
	h.sim.ResetCounts()
	if len(h.sim.Counts()) != 0 {
		t.Errorf("not reset")
	}

	// Next N calls.
	_ = h.sim.InjectFault(Fault{Method: "GET", Path: "/v1/nodes", Kind: Fault500, Count: 2})
	h.want(h.do("GET", "/v1/nodes", nil), 500, "Simulated server error injected by ironicsim.")
	h.want(h.do("GET", "/v1/nodes/"+id, nil), 200, "") // other route
	h.want(h.do("GET", "/v1/nodes", nil), 500, "")
	h.want(h.do("GET", "/v1/nodes", nil), 200, "")
	if h.sim.Counts()["GET /v1/nodes"] != 3 {
		t.Errorf("faulted calls are counted too: %v", h.sim.Counts())
	}
	// Globs, 503, NodeLocked naming the node.
	_ = h.sim.InjectFault(Fault{Method: "PATCH", Path: "/v1/nodes/*", Kind: FaultLocked, Count: 1})
	h.want(h.patch(id, op("add", "/extra/b", 1)), 409,
		fmt.Sprintf("Node %s is locked by host localhost, please retry after the current operation is completed.", id))
	_ = h.sim.InjectFault(Fault{Path: "/v1/nodes/**", Kind: Fault503, Count: 1})
	h.want(h.do("GET", "/v1/nodes/"+id+"/states", nil), 503, "Requested action cannot be performed due to lack of free conductor workers.")
	h.want(h.do("GET", "/v1/nodes/"+id+"/states", nil), 200, "")
	// Dropped connection.
	_ = h.sim.InjectFault(Fault{Method: "GET", Path: "/v1/nodes/{node}", Kind: FaultDrop, Count: 1})
	if _, err := http.Get(h.srv.URL + "/v1/nodes/" + id); err == nil {
		t.Errorf("dropped call succeeded")
	}
	h.want(h.do("GET", "/v1/nodes/"+id, nil), 200, "")
	// Latency.
	_ = h.sim.InjectFault(Fault{Kind: FaultLatency, Latency: 50 * time.Millisecond, Count: 1})
	start := time.Now()
	h.want(h.do("GET", "/v1/nodes", nil), 200, "")
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("latency fault took %v", d)
	}
	// A fraction is drawn from the seeded generator: reproducible.
	fired := func() int {
		s := New(Options{Seed: 7})
		srv := newServerFor(t, s)
		_ = s.InjectFault(Fault{Kind: Fault500, Fraction: 0.3})
		n := 0
		for i := 0; i < 200; i++ {
			res, err := http.Get(srv + "/v1/nodes")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode == 500 {
				n++
			}
		}
		return n
	}
	a, b := fired(), fired()
	if a != b || a < 30 || a > 90 {
		t.Errorf("fraction 0.3 of 200 fired %d then %d times", a, b)
	}
	h.sim.ClearFaults()
	if err := h.sim.InjectFault(Fault{Kind: "bogus"}); err == nil {
		t.Errorf("bogus kind accepted")
	}
}

func TestAdminHTTP(t *testing.T) {
	h := newHarness(t, Options{DeployTime: time.Minute})
	post := func(path string, body any) resp { return h.doVer("", "POST", "/_sim"+path, body) }
	r := post("/nodes", map[string]any{"count": 2, "resource_class": "rc", "ports": 1, "deploy_interface": "custom-agent"})
	h.want(r, 201, "")
	ids := r.json()["uuids"].([]any)
	a, b := ids[0].(string), ids[1].(string)
	if sn, _ := h.sim.Node(a); sn.ResourceClass != "rc" || sn.DeployInterface != "custom-agent" {
		t.Errorf("admin nodes: %+v", sn)
	}
	h.want(post("/nodes/"+a+"/maintenance", map[string]any{"on": true, "reason": "r"}), 204, "")
	if sn, _ := h.sim.Node(a); !sn.Maintenance || sn.MaintenanceReason != "r" {
		t.Errorf("maintenance: %+v", sn)
	}
	h.want(post("/nodes/"+a+"/maintenance", map[string]any{"on": false}), 204, "")
	h.want(post("/nodes/"+b+"/fail-next-deploy", map[string]any{"last_error": "boom"}), 204, "")
	h.want(post("/nodes/"+b+"/times", map[string]any{"deploy_time": "2s"}), 204, "")
	h.want(h.provision(b, map[string]any{"target": "active"}), 202, "")
	h.want(post("/clock/advance", map[string]any{"by": "2s"}), 204, "")
	if sn, _ := h.sim.Node(b); sn.ProvisionState != "deploy failed" || sn.LastError != "boom" {
		t.Errorf("fail-next-deploy: %+v", sn)
	}
	h.want(post("/nodes/"+a+"/hold-deploy", nil), 204, "")
	h.want(post("/nodes/"+a+"/release-deploy", nil), 204, "")
	h.want(post("/nodes/"+a+"/teardown", nil), 409, "")
	h.want(post("/nodes/"+b+"/teardown", nil), 204, "")
	h.want(post("/nodes/"+a+"/remove-instance-uuid", nil), 204, "")
	h.want(post("/faults", map[string]any{"method": "GET", "path": "/v1/nodes", "kind": "503", "count": 1}), 204, "")
	h.want(h.do("GET", "/v1/nodes", nil), 503, "")
	h.want(post("/faults", map[string]any{"kind": "nope"}), 400, "")
	h.want(h.doVer("", "DELETE", "/_sim/faults", nil), 204, "")
	r = h.doVer("", "GET", "/_sim/counts", nil)
	if r.json()["GET /v1/nodes"] != float64(1) || r.json()["PUT /v1/nodes/{node}/states/provision"] != float64(1) {
		t.Errorf("counts %s", r.body)
	}
	h.want(h.doVer("", "DELETE", "/_sim/counts", nil), 204, "")
	h.want(post("/restart", nil), 204, "")
	r = h.doVer("", "GET", "/_sim/nodes/"+a, nil)
	if r.json()["uuid"] != a || r.json()["vifs"] == nil {
		t.Errorf("snapshot %s", r.body)
	}
	h.want(post("/nodes/"+b+"/delete", nil), 204, "")
	h.want(post("/nodes/"+b+"/delete", nil), 404, "")
	h.want(h.doVer("", "GET", "/_sim/nope", nil), 404, "")
	if n := len(h.sim.Counts()); n != 0 {
		t.Errorf("admin calls counted: %v", h.sim.Counts())
	}
	if got := h.doVer("", "GET", "/_sim/nodes", nil).json()["nodes"].([]any); len(got) != 1 {
		t.Errorf("nodes after delete: %d", len(got))
	}
}

func newServerFor(t *testing.T, s *Sim) string {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}
