package contract

import (
	"encoding/json"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// VIFs, ports, volume connectors and targets, maintenance, power
// (docs/ironic.md §2, §4, §5, §7).
var subresourceChecks = []check{
	{name: "vif.noop", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		vif := newUUID()
		// network_interface=noop: everything is accepted, nothing is stored.
		for _, v := range []string{vif, vif, "abc"} {
			c.status(c.post(nodePath(id)+"/vifs", map[string]any{"id": v}), 204)
		}
		c.eq("VIF list", c.obj(c.status(c.get(nodePath(id)+"/vifs"), 200)), map[string]any{"vifs": []any{}})
		c.status(c.del(nodePath(id)+"/vifs/"+vif), 204)
		c.status(c.del(nodePath(id)+"/vifs/"+newUUID()), 204)
		c.clientFault(c.post(nodePath(id)+"/vifs", map[string]any{}), 400, "Schema error for vif: 'id' is a required property")
	}},
	{name: "vif.before-1.28", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.routingError(c.send("1.27", "GET", nodePath(id)+"/vifs", nil), 404, "Not Found", "")
		c.routingError(c.send("1.27", "POST", nodePath(id)+"/vifs", map[string]any{"id": newUUID()}), 404, "Not Found", "")
	}},
	{name: "port.create", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		mac := randomMAC()
		r := c.status(c.post("/v1/ports", map[string]any{"node_uuid": id, "address": mac}), 201)
		p := c.obj(r)
		port, _ := p["uuid"].(string)
		c.eq("port address", p["address"], mac)
		c.eq("port node_uuid", p["node_uuid"], id)
		c.clientFault(c.post("/v1/ports", map[string]any{"node_uuid": id, "address": mac}), 409,
			"A port with MAC address "+mac+" already exists.")
		c.clientFault(c.post("/v1/ports", map[string]any{"node_uuid": id, "address": "zz"}), 400,
			"Expected valid MAC address for address: zz")
		for _, path := range []string{"/v1/ports?node=" + id, nodePath(id) + "/ports"} {
			var body struct {
				Ports []map[string]any `json:"ports"`
			}
			if err := json.Unmarshal(c.status(c.get(path), 200).body, &body); err != nil || len(body.Ports) != 1 || body.Ports[0]["uuid"] != port {
				c.failf("GET %s: %v, want just port %s", path, body.Ports, port)
			}
		}
		c.status(c.del("/v1/ports/"+port), 204)
		c.clientFault(c.get("/v1/ports/"+port), 404, "Port "+port+" could not be found.")
	}},
	{name: "volume.create-list", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		conn := uuidOf(c, c.status(c.post("/v1/volume/connectors", map[string]any{
			"node_uuid": id, "type": "iqn", "connector_id": "iqn.2010-10.org.openstack:" + c.id,
		}), 201))
		target := func(boot int, vol string) map[string]any {
			return map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": boot, "volume_id": vol, "properties": map[string]any{}}
		}
		t0 := uuidOf(c, c.status(c.post("/v1/volume/targets", target(0, "vol-a-"+c.id)), 201))
		c.clientFault(c.post("/v1/volume/targets", target(0, "vol-b-"+c.id)), 409,
			"A volume target with boot index '0' for the same node already exists.")
		t1 := uuidOf(c, c.status(c.post("/v1/volume/targets", target(1, "vol-a-"+c.id)), 201))
		c.clientFault(c.post("/v1/volume/targets", map[string]any{"node_uuid": id, "volume_type": "iscsi", "volume_id": "v"}), 400,
			"Schema error for target: 'boot_index' is a required property")
		for _, path := range []string{"/v1/volume/targets?node=" + id, nodePath(id) + "/volume/targets"} {
			c.sameSet("GET "+path, listUUIDs(c, c.get(path), "targets"), []string{t0, t1})
		}
		got := c.Env.ListVolumeTargets(c.T, id)
		if len(got) != 2 || got[0]["volume_type"] != "iscsi" {
			c.failf("detailed volume target list: %v", got)
		}
		c.sameSet("GET connectors", listUUIDs(c, c.get("/v1/volume/connectors?node="+id), "connectors"), []string{conn})
	}},
	{name: "volume.delete-needs-power-off", run: func(c *C) {
		// NOTE: a fake node's initial power_state null counts as not off
		// ("None" in the text); so does "power on" (§5).
		r := c.status(c.send("1.10", "POST", "/v1/nodes", map[string]any{"name": c.name(), "driver": "fake-hardware"}), 201)
		id := uuidOf(c, r)
		conn := uuidOf(c, c.status(c.post("/v1/volume/connectors", map[string]any{
			"node_uuid": id, "type": "iqn", "connector_id": "iqn.2010-10.org.openstack:" + c.id,
		}), 201))
		tgt := uuidOf(c, c.status(c.post("/v1/volume/targets", map[string]any{
			"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "vol-" + c.id,
		}), 201))
		for _, state := range []string{"None", "power on"} {
			if state != "None" {
				c.power(id, state)
			}
			c.clientFault(c.del("/v1/volume/targets/"+tgt), 400, invalidStateText("volume target deletion", id, state))
			c.clientFault(c.del("/v1/volume/connectors/"+conn), 400, invalidStateText("volume connector deletion", id, state))
		}
		c.power(id, "power off")
		c.status(c.del("/v1/volume/targets/"+tgt), 204)
		c.status(c.del("/v1/volume/connectors/"+conn), 204)
		c.clientFault(c.get("/v1/volume/targets/"+tgt), 404, "Volume target "+tgt+" could not be found.")
		c.clientFault(c.get("/v1/volume/connectors/"+conn), 404, "Volume connector "+conn+" could not be found.")
		c.clientFault(c.del("/v1/volume/targets/"+tgt), 404, "Volume target "+tgt+" could not be found.")
	}},
	{name: "volume.connector-duplicate", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		body := map[string]any{"node_uuid": id, "type": "iqn", "connector_id": "iqn.2010-10.org.openstack:" + c.id}
		c.status(c.post("/v1/volume/connectors", body), 201)
		c.clientFault(c.post("/v1/volume/connectors", body), 409,
			"A volume connector with type iqn and connector ID iqn.2010-10.org.openstack:"+c.id+" already exists.")
	}},
	{name: "volume.kept-over-undeploy", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		tgt := uuidOf(c, c.status(c.post("/v1/volume/targets", map[string]any{
			"node_uuid": id, "volume_type": "iscsi", "boot_index": 0, "volume_id": "vol-" + c.id,
		}), 201))
		c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		c.accepted(c.provision(id, map[string]any{"target": "deleted"}), id)
		c.waitState(id, "available", c.deployTimeout())
		c.sameSet("targets after undeploy", listUUIDs(c, c.get("/v1/volume/targets?node="+id), "targets"), []string{tgt})
		c.status(c.del(nodePath(id)), 204)
		c.clientFault(c.get("/v1/volume/targets/"+tgt), 404, "Volume target "+tgt+" could not be found.")
	}},
	{name: "maintenance.set-unset", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		for range 2 { // idempotent
			c.emptyAccepted(c.put(nodePath(id)+"/maintenance", map[string]any{"reason": "because"}))
		}
		n := c.node(id)
		c.eq("maintenance", n["maintenance"], true)
		c.eq("maintenance_reason", n["maintenance_reason"], "because")
		for range 2 {
			c.emptyAccepted(c.del(nodePath(id) + "/maintenance"))
		}
		n = c.node(id)
		c.eq("maintenance", n["maintenance"], false)
		c.eq("maintenance_reason", n["maintenance_reason"], nil)
	}},
	{name: "power.set", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.power(id, "power on")
		c.power(id, "power off")
		c.power(id, "power off")
		n := c.node(id)
		c.eq("target_power_state", n["target_power_state"], nil)
	}},
}

// power sets the power state and waits until the node shows it.
func (c *C) power(id, state string) {
	c.accepted(c.put(nodePath(id)+"/states/power", map[string]any{"target": state}), id)
	if !eventually(5*time.Second, 20*time.Millisecond, func() bool { return c.node(id)["power_state"] == state }) {
		c.failf("node %s: power_state not %q after 5 s: %v", id, state, c.node(id)["power_state"])
	}
}

// listUUIDs decodes {"<key>": [{"uuid": …}, …]}.
func listUUIDs(c *C, r *resp, key string) []string {
	c.status(r, 200)
	var body map[string][]map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		c.failf("%s: %v", r, err)
	}
	if _, ok := body[key]; !ok {
		c.failf("%s: no %q list", r, key)
	}
	return uuidsOf(body[key])
}
