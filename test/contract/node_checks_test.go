package contract

import (
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Node create, get, delete (docs/ironic.md §2, §7C, §7D).
var nodeChecks = []check{
	{name: "node.create-get", run: func(c *C) {
		name := c.name()
		r := c.status(c.post("/v1/nodes", map[string]any{
			"name": name, "driver": "fake-hardware", "resource_class": c.rc,
			"properties": map[string]any{"cpus": 8, "memory_mb": 16384, "local_gb": 100},
		}), 201)
		n := c.obj(r)
		id, _ := n["uuid"].(string)
		if id == "" {
			c.failf("%s: no uuid", r)
		}
		want := map[string]any{
			"name": name, "resource_class": c.rc, "provision_state": "enroll",
			"target_provision_state": nil, "power_state": nil, "maintenance": false,
			"instance_uuid": nil, "instance_info": map[string]any{}, "last_error": nil,
			"reservation": nil, "driver": "fake-hardware", "deploy_interface": "fake",
			"network_interface": "noop", "storage_interface": "noop",
			"properties": map[string]any{"cpus": 8, "memory_mb": 16384, "local_gb": 100},
		}
		for k, v := range want {
			c.eq("created node "+k, n[k], v)
		}
		selfLink(c, n, id)
		c.eq("GET by uuid: uuid", c.node(id)["uuid"], id)
		c.eq("GET by name: uuid", c.node(name)["uuid"], id)
		c.status(c.del(nodePath(id)), 204) // enroll nodes delete without maintenance
		c.gone(id, "")
	}},
	{name: "node.create-available-1.10", run: func(c *C) {
		// The harness's fast enrolment: created "available" at ≤ 1.10, then
		// resource_class and deploy_interface PATCHed at 1.78, power set off.
		r := c.status(c.send("1.10", "POST", "/v1/nodes", map[string]any{"name": c.name(), "driver": "fake-hardware"}), 201)
		n := c.obj(r)
		id, _ := n["uuid"].(string)
		c.eq("provision_state at 1.10", n["provision_state"], "available")
		c.eq("power_state", n["power_state"], nil)
		r = c.status(c.patch(nodePath(id), ops(
			op("add", "/resource_class", c.rc), op("add", "/deploy_interface", "custom-agent"))), 200)
		n = c.obj(r)
		c.eq("resource_class", n["resource_class"], c.rc)
		c.eq("deploy_interface", n["deploy_interface"], "custom-agent")
		c.eq("provision_state", n["provision_state"], "available")
		c.accepted(c.put(nodePath(id)+"/states/power", map[string]any{"target": "power off"}), id)
		if !eventually(c.deployTimeout(), 20*time.Millisecond, func() bool { return c.node(id)["power_state"] == "power off" }) {
			c.failf("power_state of %s never became \"power off\"", id)
		}
	}},
	{name: "node.not-found", run: func(c *C) {
		id, name := newUUID(), c.name()
		c.clientFault(c.get(nodePath(id)), 404, notFoundText(id))
		c.clientFault(c.get(nodePath(name)), 404, notFoundText(name))
		c.clientFault(c.get(nodePath(id)+"/states"), 404, notFoundText(id))
		c.clientFault(c.patch(nodePath(id), ops(op("add", "/instance_uuid", newUUID()))), 404, notFoundText(id))
		c.clientFault(c.provision(id, map[string]any{"target": "active"}), 404, notFoundText(id))
		c.clientFault(c.del(nodePath(id)), 404, notFoundText(id))
		c.clientFault(c.post(nodePath(id)+"/vifs", map[string]any{"id": newUUID()}), 404, notFoundText(id))
		c.clientFault(c.del(nodePath(id)+"/vifs/"+newUUID()), 404, notFoundText(id))
		c.clientFault(c.put(nodePath(id)+"/maintenance", map[string]any{"reason": "x"}), 404, notFoundText(id))
	}},
	{name: "node.delete-available", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.status(c.del(nodePath(id)), 204)
		c.gone(id, "")
	}},
	{name: "node.delete-associated", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		inst := c.reserve(id)
		c.clientFault(c.del(nodePath(id)), 409, associatedText(id, inst))
		c.maintenance(id, true)
		c.status(c.del(nodePath(id)), 204)
		c.gone(id, inst)
	}},
	{name: "node.delete-active", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		inst := c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		c.clientFault(c.del(nodePath(id)), 409, associatedText(id, inst))
		// NOTE: Ironic lets instance_uuid go from an active node (§7C, §11).
		n := c.obj(c.status(c.patch(nodePath(id), ops(op("remove", "/instance_uuid"))), 200))
		c.eq("instance_uuid after remove", n["instance_uuid"], nil)
		c.eq("provision_state after remove", n["provision_state"], "active")
		c.clientFault(c.del(nodePath(id)), 409, `Can not delete node "`+id+`" while it is in provision state "active". `+
			`Valid provision states to perform deletion are: "('manageable', 'enroll', 'adopt failed', 'available')", `+
			`or set the node into maintenance mode`)
		c.maintenance(id, true)
		c.status(c.del(nodePath(id)), 204)
		c.gone(id, inst)
	}},
	{name: "node.delete-cascades", run: func(c *C) {
		// Deleting a node deletes its ports, volume connectors and targets (§7D).
		id := c.enroll(ironictest.Fast)
		inst := c.reserve(id)
		port := uuidOf(c, c.status(c.post("/v1/ports", map[string]any{"node_uuid": id, "address": randomMAC()}), 201))
		conn := uuidOf(c, c.status(c.post("/v1/volume/connectors", map[string]any{
			"node_uuid": id, "type": "iqn", "connector_id": "iqn.2010-10.org.openstack:" + c.id,
		}), 201))
		tgt := uuidOf(c, c.status(c.post("/v1/volume/targets", map[string]any{
			"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "vol-" + c.id, "properties": map[string]any{},
		}), 201))
		c.Env.OutOfBandDelete(c.T, id)
		c.gone(id, inst)
		c.clientFault(c.get("/v1/ports/"+port), 404, "Port "+port+" could not be found.")
		c.clientFault(c.get("/v1/volume/connectors/"+conn), 404, "Volume connector "+conn+" could not be found.")
		c.clientFault(c.get("/v1/volume/targets/"+tgt), 404, "Volume target "+tgt+" could not be found.")
	}},
	{name: "node.traits", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		traits := nodePath(id) + "/traits"
		c.status(c.put(traits, map[string]any{"traits": []string{"HW_CPU_X86_AVX2", "CUSTOM_GOLD"}}), 204)
		c.eq("GET /traits", c.obj(c.status(c.get(traits), 200)), map[string]any{"traits": []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}})
		c.status(c.put(traits+"/CUSTOM_SILVER", nil), 204)
		want := []string{"CUSTOM_GOLD", "CUSTOM_SILVER", "HW_CPU_X86_AVX2"}
		c.eq("node traits", c.obj(c.status(c.get(nodePath(id)+"?fields=traits"), 200))["traits"], want)
		nodes, _ := c.nodesOf(c.get("/v1/nodes?fields=uuid,traits&resource_class=" + c.rc))
		c.eq("listed traits", nodes[0]["traits"], want)
		c.status(c.del(traits+"/CUSTOM_GOLD"), 204)
		c.clientFault(c.del(traits+"/CUSTOM_NOPE"), 404, "Node "+id+" doesn't have a trait 'CUSTOM_NOPE'")
		c.clientFault(c.put(traits, map[string]any{"traits": []string{"lower"}}), 400,
			"Schema error for body: 'lower' is not valid under any of the given schemas. Possible root cause: 'lower' does not match '^CUSTOM_[A-Z0-9_]+$'")
		c.status(c.put(traits, map[string]any{"traits": []string{"CUSTOM_SILVER"}}), 204) // replaces the set
		c.eq("GET /traits after a replace", c.obj(c.status(c.get(traits), 200)), map[string]any{"traits": []string{"CUSTOM_SILVER"}})
		// A deploy asking for traits the node lacks is refused (§6).
		c.reserve(id)
		c.status(c.patch(nodePath(id), ops(op("add", "/instance_info", map[string]any{"traits": []string{"CUSTOM_SILVER", "CUSTOM_X"}}))), 200)
		c.clientFault(c.provision(id, map[string]any{"target": "active"}), 400, "Failed to validate deploy or power info for node "+id+
			": Cannot specify instance traits that are not also set on the node. Node "+id+" is missing traits CUSTOM_X")
		c.status(c.patch(nodePath(id), ops(op("add", "/instance_info", map[string]any{"traits": []string{"CUSTOM_SILVER"}}))), 200)
		c.accepted(c.provision(id, map[string]any{"target": "active"}), id)
		c.waitState(id, "active", c.deployTimeout())
	}},
	{name: "node.states", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		st := c.obj(c.status(c.get(nodePath(id)+"/states"), 200))
		for _, k := range []string{"provision_state", "target_provision_state", "power_state", "last_error", "provision_updated_at"} {
			if _, ok := st[k]; !ok {
				c.failf("GET /states: no %q in %v", k, st)
			}
		}
		if _, ok := st["instance_uuid"]; ok {
			c.failf("GET /states shows instance_uuid: %v", st)
		}
		c.eq("states provision_state", st["provision_state"], "available")
		c.eq("states power_state", st["power_state"], "power off")
	}},
}

// selfLink checks a node's links: self then bookmark.
func selfLink(c *C, n map[string]any, id string) {
	links, _ := n["links"].([]any)
	if len(links) != 2 {
		c.failf("node %s: links %v, want self and bookmark", id, n["links"])
	}
	self, _ := links[0].(map[string]any)
	c.eq("links[0].rel", self["rel"], "self")
	if href, _ := self["href"].(string); !strings.HasSuffix(href, "/v1/nodes/"+id) {
		c.failf("node %s: self link %q", id, href)
	}
	bm, _ := links[1].(map[string]any)
	c.eq("links[1].rel", bm["rel"], "bookmark")
}

func uuidOf(c *C, r *resp) string {
	id, _ := c.obj(r)["uuid"].(string)
	if id == "" {
		c.failf("%s: no uuid", r)
	}
	return id
}

// randomMAC returns a locally administered unicast MAC.
func randomMAC() string {
	h := randomHex(5)
	return "52:" + h[0:2] + ":" + h[2:4] + ":" + h[4:6] + ":" + h[6:8] + ":" + h[8:10]
}
