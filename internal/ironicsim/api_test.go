package ironicsim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestVersionDocuments(t *testing.T) {
	h := newHarness(t, Options{})
	root := h.doVer("", "GET", "/", nil)
	h.want(root, 200, "")
	if root.header.Get(hdrVersion) != "" {
		t.Errorf("root answer carries a version header: %v", root.header)
	}
	dv := root.json()["default_version"].(map[string]any)
	if dv["version"] != "1.82" || dv["min_version"] != "1.1" || dv["id"] != "v1" {
		t.Errorf("default_version %v", dv)
	}
	v1 := h.doVer("", "GET", "/v1", nil)
	h.want(v1, 200, "")
	if v1.header.Get(hdrVersion) != "1.1" || v1.header.Get(hdrMinVersion) != "1.1" || v1.header.Get(hdrMaxVersion) != "1.82" {
		t.Errorf("version headers %v", v1.header)
	}
	if _, ok := v1.json()["nodes"]; !ok {
		t.Errorf("v1 document without nodes: %s", v1.body)
	}
}

func TestMicroversions(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{ResourceClass: "baremetal"})

	// No header: 1.1, available shown as null, newer fields missing.
	r := h.doVer("", "GET", "/v1/nodes/"+id, nil)
	h.want(r, 200, "")
	n := r.json()
	if v, ok := n["provision_state"]; !ok || v != nil {
		t.Errorf("1.1 provision_state = %v (present %v), want null", v, ok)
	}
	for _, f := range []string{"resource_class", "name", "deploy_interface", "traits"} {
		if _, ok := n[f]; ok {
			t.Errorf("1.1 shows %s", f)
		}
	}
	if r.header.Get(hdrVersion) != "1.1" {
		t.Errorf("version header %q", r.header.Get(hdrVersion))
	}
	// OpenStack-API-Version alone is ignored, as in Ironic 21.4.
	req, _ := http.NewRequest("GET", h.srv.URL+"/v1/nodes/"+id, nil)
	req.Header.Set("OpenStack-API-Version", "baremetal 1.78")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get(hdrVersion) != "1.1" {
		t.Errorf("OpenStack-API-Version changed the version to %q", res.Header.Get(hdrVersion))
	}

	r = h.doVer("latest", "GET", "/v1/nodes/"+id, nil)
	h.want(r, 200, "")
	if r.header.Get(hdrVersion) != "1.82" || r.json()["resource_class"] != "baremetal" {
		t.Errorf("latest: header %q body %s", r.header.Get(hdrVersion), r.body)
	}
	if _, ok := r.json()["shard"]; !ok {
		t.Errorf("1.82 has no shard field")
	}

	r = h.doVer("1.83", "GET", "/v1/nodes", nil)
	if r.status != 406 || string(r.body) != `{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.83 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\"}"}` {
		t.Errorf("1.83: %d %s", r.status, r.body)
	}
	h.want(h.doVer("abc", "GET", "/v1/nodes", nil), 406, "Invalid value for X-OpenStack-Ironic-API-Version header")

	// VIFs need 1.28: a routing 404 below.
	r = h.doVer("1.27", "GET", "/v1/nodes/"+id+"/vifs", nil)
	h.want(r, 404, "")
	if !strings.Contains(string(r.body), `\"code\": 404, \"title\": \"Not Found\"`) {
		t.Errorf("routing 404 body %s", r.body)
	}
	h.want(h.doVer("1.28", "GET", "/v1/nodes/"+id+"/vifs", nil), 200, "")

	// resource_class needs 1.21; nodes POSTed at <= 1.10 start available.
	h.want(h.doVer("1.10", "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "resource_class": "x"}),
		406, "Request not acceptable.")
	r = h.doVer("1.10", "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"})
	h.want(r, 201, "")
	if r.json()["provision_state"] != "available" {
		t.Errorf("1.10 create: %v", r.json()["provision_state"])
	}
	r = h.doVer("1.11", "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"})
	h.want(r, 201, "")
	if r.json()["provision_state"] != "enroll" {
		t.Errorf("1.11 create: %v", r.json()["provision_state"])
	}
	// A JSON config drive needs 1.56.
	h.want(h.doVer("1.55", "PUT", "/v1/nodes/"+id+"/states/provision",
		map[string]any{"target": "active", "configdrive": map[string]any{"user_data": "x"}}),
		400, "Providing a JSON object for configdrive is only supported starting with API version 1.56")
}

func TestCreateNodeDefaultsAndErrors(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.do("POST", "/v1/nodes", map[string]any{"name": "e1", "driver": "fake-hardware",
		"resource_class": "baremetal-gold", "deploy_interface": "custom-agent",
		"properties": map[string]any{"cpus": 8, "memory_mb": 16384}})
	h.want(r, 201, "")
	n := r.json()
	want := map[string]any{"provision_state": "enroll", "power_state": nil, "deploy_interface": "custom-agent",
		"network_interface": "noop", "storage_interface": "noop", "boot_interface": "fake", "name": "e1"}
	for k, v := range want {
		if n[k] != v {
			t.Errorf("%s = %v, want %v", k, n[k], v)
		}
	}
	if !strings.HasSuffix(r.header.Get("Location"), "/v1/nodes/"+n["uuid"].(string)) {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	h.want(h.do("POST", "/v1/nodes", map[string]any{"name": "e1", "driver": "fake-hardware"}), 409,
		"A node with name e1 already exists.")
	h.want(h.do("POST", "/v1/nodes", map[string]any{"name": "x"}), 400,
		"Schema error for node: 'driver' is a required property")
	h.want(h.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "storage_interface": "cinder"}), 400,
		"Could not find the following interface in the 'ironic.hardware.interfaces.storage' entrypoint: cinder. Valid interfaces are ['external', 'fake', 'noop'].")
	// By name and by UUID; unknown names 404.
	h.node("e1")
	h.want(h.do("GET", "/v1/nodes/does-not-exist-name", nil), 404, "Node does-not-exist-name could not be found.")
}

func TestNodeStatesAndPower(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"})
	id := r.json()["uuid"].(string)
	st := h.do("GET", "/v1/nodes/"+id+"/states", nil).json()
	if st["power_state"] != nil || st["provision_state"] != "enroll" {
		t.Errorf("states %v", st)
	}
	if _, ok := st["instance_uuid"]; ok {
		t.Errorf("states shows instance_uuid")
	}
	h.want(h.do("PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "bogus"}), 400,
		fmt.Sprintf(`The requested action "bogus" can not be performed on node "%s" while it is in state "None".`, id))
	r = h.do("PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "power off"})
	h.want(r, 202, "")
	if len(r.body) != 0 || !strings.HasSuffix(r.header.Get("Location"), "/v1/nodes/"+id+"/states") {
		t.Errorf("202: body %q location %q", r.body, r.header.Get("Location"))
	}
	if h.node(id)["power_state"] != "power off" {
		t.Errorf("power not off")
	}
}

func TestEnrollManageProvide(t *testing.T) {
	h := newHarness(t, Options{VerifyTime: 150 * ms, CleanTime: 150 * ms})
	r := h.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"})
	id := r.json()["uuid"].(string)
	h.want(h.provision(id, map[string]any{"target": "active"}), 400,
		fmt.Sprintf(`The requested action "active" can not be performed on node "%s" while it is in state "enroll".`, id))
	h.want(h.provision(id, map[string]any{"target": "manage"}), 202, "")
	if s := h.state(id); s != "verifying" {
		t.Fatalf("after manage: %s", s)
	}
	h.clk.Advance(150 * ms)
	if s := h.state(id); s != "manageable" {
		t.Fatalf("after verify time: %s", s)
	}
	h.want(h.provision(id, map[string]any{"target": "provide"}), 202, "")
	n := h.node(id)
	if n["provision_state"] != "cleaning" || n["target_provision_state"] != "available" || n["reservation"] != "localhost" {
		t.Fatalf("providing: %v %v %v", n["provision_state"], n["target_provision_state"], n["reservation"])
	}
	h.clk.Advance(150 * ms)
	n = h.node(id)
	if n["provision_state"] != "available" || n["target_provision_state"] != nil || n["reservation"] != nil {
		t.Fatalf("provided: %v %v %v", n["provision_state"], n["target_provision_state"], n["reservation"])
	}
	if n["provision_updated_at"] != pyTime(t0.Add(300*ms)) {
		t.Errorf("provision_updated_at %v, want the deadline's instant", n["provision_updated_at"])
	}
	h.want(h.provision(id, map[string]any{"target": "bogus"}), 400,
		fmt.Sprintf(`The requested action "bogus" can not be performed on node "%s" while it is in state "available".`, id))
}

func TestPatchErrors(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{})
	h.want(h.patch(id, op("test", "/instance_uuid", inst1)), 400,
		"Schema error for patch: 'test' is not one of ['add', 'replace', 'remove']")
	h.want(h.patch(id, op("add", "/instance_uuid", "not-a-uuid")), 400, "Expected UUID for instance_uuid: not-a-uuid")
	h.want(h.patch(id, op("remove", "/instance_info/foo")), 400,
		"Couldn't apply patch '{'op': 'remove', 'path': '/instance_info/foo'}'. Reason: can't remove a non-existent object 'foo'")
	h.want(h.patch(id, op("add", "/uuid", inst1)), 400, "")
	r := h.patch(id, op("add", "/instance_info", map[string]any{"image_source": "http://x/img", "root_gb": "10"}),
		op("add", "/instance_info/capabilities", map[string]any{"boot_mode": "uefi"}),
		op("replace", "/properties", map[string]any{"cpus": 4}), op("add", "/extra/k", "v"))
	h.want(r, 200, "")
	n := r.json()
	ii := n["instance_info"].(map[string]any)
	if ii["image_source"] != "http://x/img" || ii["capabilities"].(map[string]any)["boot_mode"] != "uefi" {
		t.Errorf("instance_info %v", ii)
	}
	if n["extra"].(map[string]any)["k"] != "v" || n["properties"].(map[string]any)["cpus"] != float64(4) {
		t.Errorf("extra %v properties %v", n["extra"], n["properties"])
	}
	h.want(h.patch(id, op("replace", "/deploy_interface", "custom-agent"), op("replace", "/resource_class", "gold")), 200, "")
	if n := h.node(id); n["deploy_interface"] != "custom-agent" || n["resource_class"] != "gold" {
		t.Errorf("interfaces not patched: %v %v", n["deploy_interface"], n["resource_class"])
	}
	h.want(h.patch(id, op("remove", "/deploy_interface")), 200, "")
	if n := h.node(id); n["deploy_interface"] != "fake" {
		t.Errorf("removed interface did not go back to the default: %v", n["deploy_interface"])
	}
}

func TestReservationConflicts(t *testing.T) {
	h := newHarness(t, Options{})
	ids := h.sim.AddNodes(2, NodeSpec{})
	a, b := ids[0], ids[1]
	h.want(h.patch(a, op("add", "/instance_uuid", inst1)), 200, "")
	h.want(h.patch(a, op("add", "/instance_uuid", inst1)), 200, "") // idempotent
	h.want(h.patch(a, op("replace", "/instance_uuid", inst2)), 409,
		fmt.Sprintf("Node %s is associated with instance %s.", a, inst1))
	h.want(h.patch(b, op("add", "/instance_uuid", inst1)), 409,
		fmt.Sprintf("Instance %s is already associated with a node, it cannot be associated with this other node %s", inst1, b))
	// Lookup by instance: 0 or 1 items, never a next link.
	r := h.do("GET", "/v1/nodes?instance_uuid="+inst1+"&fields=uuid,provision_state&limit=1", nil)
	h.want(r, 200, "")
	if nodes := r.json()["nodes"].([]any); len(nodes) != 1 || r.json()["next"] != nil {
		t.Errorf("instance lookup: %s", r.body)
	}
	h.want(h.patch(a, op("remove", "/instance_uuid")), 200, "")
	h.want(h.patch(a, op("remove", "/instance_uuid")), 200, "") // already null
	// Reserved (locked) node: NodeLocked for a PATCH outside a transition.
	h.want(h.patch(b, op("add", "/instance_uuid", inst2)), 200, "")
	h.sim.mu.Lock()
	h.sim.nodes[b].Reservation = "localhost"
	h.sim.mu.Unlock()
	h.want(h.patch(b, op("add", "/extra/x", "y")), 409,
		fmt.Sprintf("Node %s is locked by host localhost, please retry after the current operation is completed.", b))
}

func TestDeleteNode(t *testing.T) {
	h := newHarness(t, Options{VIFMode: VIFModeStore})
	id := h.addNode(NodeSpec{Ports: 2})
	h.want(h.patch(id, op("add", "/instance_uuid", inst1)), 200, "")
	h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{"id": "vif-1"}), 204, "")
	h.want(h.do("POST", "/v1/volume/targets", map[string]any{"node_uuid": id, "volume_type": "iscsi",
		"boot_index": 0, "volume_id": "vol-1"}), 201, "")
	h.want(h.do("POST", "/v1/volume/connectors", map[string]any{"node_uuid": id, "type": "iqn",
		"connector_id": "iqn.2010-10.org.openstack:vol1"}), 201, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	h.node(id) // DeployTime 0: active now
	h.want(h.do("DELETE", "/v1/nodes/"+id, nil), 409, fmt.Sprintf("Node %s is associated with instance %s.", id, inst1))
	h.want(h.patch(id, op("remove", "/instance_uuid")), 200, "") // allowed on an active node
	h.want(h.do("DELETE", "/v1/nodes/"+id, nil), 409, fmt.Sprintf(`Can not delete node "%s" while it is in provision state "active". Valid provision states to perform deletion are: "('manageable', 'enroll', 'adopt failed', 'available')", or set the node into maintenance mode`, id))
	h.want(h.do("PUT", "/v1/nodes/"+id+"/maintenance", map[string]any{"reason": "gone"}), 202, "")
	h.want(h.do("DELETE", "/v1/nodes/"+id, nil), 204, "")
	h.want(h.do("GET", "/v1/nodes/"+id, nil), 404, fmt.Sprintf("Node %s could not be found.", id))
	h.want(h.do("GET", "/v1/nodes/"+id+"/states", nil), 404, "")
	r := h.do("GET", "/v1/ports?detail=True", nil)
	if ports := r.json()["ports"].([]any); len(ports) != 0 {
		t.Errorf("ports survive their node: %s", r.body)
	}
	for _, kind := range []string{"targets", "connectors"} {
		r = h.do("GET", "/v1/volume/"+kind, nil)
		if items := r.json()[kind].([]any); len(items) != 0 {
			t.Errorf("%s survive their node: %s", kind, r.body)
		}
	}
	if _, ok := h.sim.Node(id); ok {
		t.Errorf("Node() still finds it")
	}
}

func TestImageSourceAndConfigdrive(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{})
	h.want(h.patch(id, op("add", "/instance_info", map[string]any{"image_source": "x"})), 200, "")
	r := h.provision(id, map[string]any{"target": "active"})
	h.want(r, 500, "Validation of image href x failed, reason: Scheme-less image href is not a UUID.")
	if !strings.Contains(string(r.body), `\"faultcode\": \"Server\"`) {
		t.Errorf("500 not a Server fault: %s", r.body)
	}
	h.want(h.patch(id, op("replace", "/instance_info/image_source", "ftp://h/i")), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 500,
		"Validation of image href ftp://h/i failed, reason: Image download protocol ftp is not supported.")
	if s := h.state(id); s != "available" {
		t.Errorf("after refused deploys: %s", s)
	}
	h.want(h.patch(id, op("replace", "/instance_info/image_source", "6e3b7a8e-1a52-4a6c-9b8e-3b2c0e5f7a11")), 200, "")
	h.want(h.provision(id, map[string]any{"target": "active", "configdrive": map[string]any{"meta_data": map[string]any{"a": 1}}}), 202, "")
	n := h.node(id)
	ii := n["instance_info"].(map[string]any)
	if ii["configdrive"] != "******" || ii["image_type"] != "whole-disk" || n["driver_internal_info"].(map[string]any)["is_whole_disk_image"] != true {
		t.Errorf("after deploy: %v %v", ii, n["driver_internal_info"])
	}
	h.want(h.provision(id, map[string]any{"target": "active"}), 400,
		fmt.Sprintf(`The requested action "active" can not be performed on node "%s" while it is in state "active".`, id))
	h.want(h.do("PUT", "/v1/nodes/"+id+"/maintenance", nil), 202, "")
	h.want(h.provision(id, map[string]any{"target": "active"}), 400,
		fmt.Sprintf("The provisioning operation can't be performed on node %s because it's in maintenance mode.", id))
}

func TestVIFsNoop(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{})
	for i := 0; i < 2; i++ {
		h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{"id": "abc"}), 204, "")
	}
	r := h.do("GET", "/v1/nodes/"+id+"/vifs", nil)
	if string(r.body) != `{"vifs":[]}` {
		t.Errorf("noop list %s", r.body)
	}
	h.want(h.do("DELETE", "/v1/nodes/"+id+"/vifs/anything", nil), 204, "")
	h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{}), 400, "Schema error for vif: 'id' is a required property")
}

func TestVIFsStore(t *testing.T) {
	h := newHarness(t, Options{VIFMode: VIFModeStore})
	none := h.addNode(NodeSpec{})
	id := h.addNode(NodeSpec{Ports: 1})
	if n := h.node(id); n["network_interface"] != "flat" {
		t.Errorf("store mode network_interface %v", n["network_interface"])
	}
	h.want(h.do("POST", "/v1/nodes/"+none+"/vifs", map[string]any{"id": "v1"}), 400,
		"Unable to attach VIF v1, not enough free physical ports.")
	h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{"id": "v1"}), 204, "")
	port := h.do("GET", "/v1/ports?node="+id+"&detail=True", nil).json()["ports"].([]any)[0].(map[string]any)
	h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{"id": "v1"}), 409,
		"Unable to attach VIF because VIF v1 is already attached to Ironic Port "+port["uuid"].(string))
	h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{"id": "v2"}), 400,
		"Unable to attach VIF v2, not enough free physical ports.")
	if port["internal_info"].(map[string]any)["tenant_vif_port_id"] != "v1" {
		t.Errorf("port internal_info %v", port["internal_info"])
	}
	r := h.do("GET", "/v1/nodes/"+id+"/vifs", nil)
	if string(r.body) != `{"vifs":[{"id":"v1"}]}` {
		t.Errorf("list %s", r.body)
	}
	h.want(h.do("DELETE", "/v1/nodes/"+id+"/vifs/v1", nil), 204, "")
	h.want(h.do("DELETE", "/v1/nodes/"+id+"/vifs/v1", nil), 400,
		fmt.Sprintf("Unable to detach VIF v1 from node %s because it is not attached to it.", id))
}

func TestPortsAndVolumes(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{})
	h.want(h.do("POST", "/v1/ports", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:01"}), 201, "")
	h.want(h.do("POST", "/v1/ports", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:01"}), 409,
		"A port with MAC address 52:54:00:00:00:01 already exists.")
	h.want(h.do("POST", "/v1/ports", map[string]any{"node_uuid": id, "address": "zz"}), 400,
		"Expected valid MAC address for address: zz")
	h.want(h.do("GET", "/v1/nodes/node-0/ports", nil), 404, "Portgroup None could not be found.")
	if ports := h.do("GET", "/v1/ports?node=node-0", nil).json()["ports"].([]any); len(ports) != 1 {
		t.Errorf("ports by node name: %v", ports)
	}

	h.want(h.do("POST", "/v1/volume/targets", map[string]any{"node_uuid": id, "volume_type": "iscsi", "volume_id": "v"}), 400,
		"Schema error for target: 'boot_index' is a required property")
	r := h.do("POST", "/v1/volume/targets", map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "vol-1", "properties": map[string]any{}})
	h.want(r, 201, "")
	tgt := r.json()["uuid"].(string)
	h.want(h.do("POST", "/v1/volume/targets", map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "vol-2"}), 409,
		"A volume target with boot index '0' for the same node already exists.")
	h.want(h.do("POST", "/v1/volume/targets", map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": 1, "volume_id": "vol-1"}), 201, "")
	if items := h.do("GET", "/v1/nodes/"+id+"/volume/targets", nil).json()["targets"].([]any); len(items) != 2 {
		t.Errorf("node targets: %v", items)
	}
	// Deploy and undeploy keep them; update and delete need "power off".
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	h.want(h.do("PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "power on"}), 202, "")
	h.want(h.do("PATCH", "/v1/volume/targets/"+tgt, []any{op("add", "/extra/a", "b")}), 400,
		fmt.Sprintf(`The requested action "volume target update" can not be performed on node "%s" while it is in state "power on".`, id))
	h.want(h.do("DELETE", "/v1/volume/targets/"+tgt, nil), 400,
		fmt.Sprintf(`The requested action "volume target deletion" can not be performed on node "%s" while it is in state "power on".`, id))
	h.want(h.provision(id, map[string]any{"target": "deleted"}), 202, "")
	if s := h.state(id); s != "available" {
		t.Fatalf("undeploy: %s", s)
	}
	if items := h.do("GET", "/v1/volume/targets?node="+id, nil).json()["targets"].([]any); len(items) != 2 {
		t.Errorf("targets after undeploy: %v", items)
	}
	h.want(h.do("PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "power off"}), 202, "")
	h.want(h.do("DELETE", "/v1/volume/targets/"+tgt, nil), 204, "")
	// Initial null power counts as not off.
	other := h.do("POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"}).json()["uuid"].(string)
	r = h.do("POST", "/v1/volume/connectors", map[string]any{"node_uuid": other, "type": "iqn", "connector_id": "iqn.x"})
	h.want(r, 201, "")
	h.want(h.do("DELETE", "/v1/volume/connectors/"+r.json()["uuid"].(string), nil), 400,
		fmt.Sprintf(`The requested action "volume connector deletion" can not be performed on node "%s" while it is in state "None".`, other))
}

// Routing quirks measured on Ironic 21.4.4.
func TestRoutingQuirks(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.addNode(NodeSpec{NamePrefix: "p"})
	r := h.do("GET", "/v1/nodes/p-0/uuid", nil)
	h.want(r, 200, "")
	if n := r.json(); n["uuid"] != id || len(n) != 2 {
		t.Errorf("trailing field: %s", r.body)
	}
	h.want(h.do("GET", "/v1/nodes/p-0/bogus", nil), 400, "Field bogus is not a valid field.")
	h.want(h.do("POST", "/v1/nodes/p-0", map[string]any{}), 400, "Schema error for node: 'p-0' is not of type 'object'")
	h.want(h.do("DELETE", "/v1/nodes", nil), 400, "Missing mandatory parameter: node_ident")
	h.want(h.do("PUT", "/v1/nodes", map[string]any{}), 405, "")
	h.want(h.do("GET", "/v1/bogus", nil), 404, "")
	h.want(h.doVer("1.36", "GET", "/v1/nodes/p-0/traits", nil), 406, "Request not acceptable.")
	h.want(h.doVer("1.31", "GET", "/v1/volume/targets", nil), 404, "")
	h.want(h.patch(id, op("add", "/resource_class", 5)), 400, "Schema error for patch: 5 is not of type 'string', 'null'")
	h.want(h.do("PATCH", "/v1/nodes/"+id, map[string]any{"op": "add"}), 400, "Schema error for patch: {'op': 'add'} is not of type 'array'")
	h.want(h.patch(id, op("add", "/instance_info/a/b", 1)), 400,
		"Couldn't apply patch '{'op': 'add', 'path': '/instance_info/a/b', 'value': 1}'. Reason: member 'a' not found in {}")
	h.want(h.provision(id, map[string]any{"target": "manage", "foo": 1}), 400, "Unexpected arguments: foo")
	h.want(h.provision(id, map[string]any{}), 400, "Missing mandatory parameter: target")
	h.want(h.do("GET", "/v1/nodes?associated=maybe", nil), 400,
		"Invalid associated: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")
	h.want(h.do("GET", "/v1/nodes?marker=abc", nil), 400, "Expected UUID for marker: abc")
	h.want(h.do("GET", "/v1/nodes?limit=abc", nil), 400, "Expected an integer for limit: abc")
	if r := h.do("GET", "/v1/nodes", nil); !strings.HasPrefix(r.header.Get("Openstack-Request-Id"), "req-") {
		t.Errorf("no request id: %v", r.header)
	}
	// Detail next link keeps maintenance=True and detail=True only.
	_ = h.sim.SetMaintenance(id, true, "")
	h.addNode(NodeSpec{})
	r = h.do("GET", "/v1/nodes?maintenance=true&limit=1&associated=false&detail=true", nil)
	if next := r.json()["next"]; next != h.srv.URL+"/v1/nodes?sort_key=id&sort_dir=asc&maintenance=True&detail=True&limit=1&marker="+id {
		t.Errorf("next %v", next)
	}
}
