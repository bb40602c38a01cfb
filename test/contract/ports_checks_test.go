package contract

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Ports and portgroups as the networking step reads them: the fields it asks
// for, portgroups and their ports, and VIF attach on a named port
// (docs/ironic.md §2, §4).
var portChecks = []check{
	{name: "port.fields", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		mac := randomMAC()
		llc := map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Ethernet1/7", "switch_info": "tor-1"}
		p := c.obj(c.createPort(map[string]any{"node_uuid": id, "address": strings.ToUpper(mac), "pxe_enabled": false,
			"physical_network": "physnet1", "local_link_connection": llc}))
		port, _ := p["uuid"].(string)
		c.eq("address (lower case)", p["address"], mac)
		c.eq("pxe_enabled", p["pxe_enabled"], false)
		c.eq("physical_network", p["physical_network"], "physnet1")
		c.eq("portgroup_uuid", p["portgroup_uuid"], nil)
		c.eq("local_link_connection", p["local_link_connection"], llc)
		c.eq("internal_info", p["internal_info"], map[string]any{})
		// Defaults: pxe_enabled true, physical_network null.
		d := c.obj(c.createPort(map[string]any{"node_uuid": id, "address": randomMAC()}))
		c.eq("default pxe_enabled", d["pxe_enabled"], true)
		c.eq("default physical_network", d["physical_network"], nil)
		c.clientFault(c.post("/v1/ports", map[string]any{"node_uuid": id, "address": randomMAC(), "physical_network": ""}), 400,
			"A non-empty value is required when setting physical_network")

		// What the networking step asks for: exactly these keys and links.
		const fields = "uuid,address,node_uuid,pxe_enabled,physical_network,portgroup_uuid,internal_info"
		ports := c.list("/v1/ports?node="+id+"&fields="+fields, "ports")
		if len(ports) != 2 || ports[0]["uuid"] != port {
			c.failf("ports of node %s in creation order: %v", id, ports)
		}
		c.keys("port with fields", ports[0], strings.Split(fields, ","))
		c.eq("listed pxe_enabled", ports[0]["pxe_enabled"], false)
		c.eq("listed physical_network", ports[0]["physical_network"], "physnet1")
		c.eq("listed node_uuid", ports[0]["node_uuid"], id)
		// Without fields: uuid and address only.
		c.keys("port without fields", c.list("/v1/ports?node="+id, "ports")[0], []string{"uuid", "address"})
		// The scheduler's bulk list of every port.
		all := c.list("/v1/ports?fields=uuid,node_uuid,pxe_enabled,physical_network,portgroup_uuid", "ports")
		found := 0
		for _, q := range all {
			if q["node_uuid"] == id {
				found++
				c.keys("bulk port", q, []string{"uuid", "node_uuid", "pxe_enabled", "physical_network", "portgroup_uuid"})
			}
		}
		c.eq("ports of the node in the bulk list", found, 2)
	}},
	{name: "portgroup.create-list", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		name := "pg-" + c.id
		pg := c.obj(c.status(c.post("/v1/portgroups", map[string]any{"node_uuid": id, "name": name, "mode": "802.3ad",
			"properties": map[string]any{"xmit_hash_policy": "layer3+4", "miimon": "100"}}), 201))
		pgID, _ := pg["uuid"].(string)
		c.eq("portgroup mode", pg["mode"], "802.3ad")
		c.eq("portgroup properties", pg["properties"], map[string]any{"xmit_hash_policy": "layer3+4", "miimon": "100"})
		c.eq("portgroup address", pg["address"], nil)
		c.eq("portgroup standalone_ports_supported", pg["standalone_ports_supported"], true)
		c.eq("portgroup internal_info", pg["internal_info"], map[string]any{})
		c.eq("portgroup node_uuid", pg["node_uuid"], id)
		c.clientFault(c.post("/v1/portgroups", map[string]any{"node_uuid": id, "name": name}), 409,
			"A portgroup with name "+name+" already exists.")
		// Ironic's default mode.
		pgMAC := randomMAC()
		other := c.obj(c.status(c.post("/v1/portgroups", map[string]any{"node_uuid": id, "address": pgMAC}), 201))
		c.eq("default portgroup mode", other["mode"], "active-backup")
		otherID, _ := other["uuid"].(string)
		c.clientFault(c.post("/v1/portgroups", map[string]any{"node_uuid": id, "address": pgMAC}), 409,
			"A portgroup with MAC address "+pgMAC+" already exists.")

		m1, m2 := randomMAC(), randomMAC()
		p1 := uuidOf(c, c.createPort(map[string]any{"node_uuid": id, "address": m1, "portgroup_uuid": pgID}))
		p2 := uuidOf(c, c.createPort(map[string]any{"node_uuid": id, "address": m2, "portgroup_uuid": pgID, "pxe_enabled": false}))
		solo := uuidOf(c, c.createPort(map[string]any{"node_uuid": id, "address": randomMAC()}))
		ports := c.list("/v1/ports?node="+id+"&fields=uuid,portgroup_uuid,pxe_enabled", "ports")
		c.eq("members' portgroup_uuid", []any{ports[0]["portgroup_uuid"], ports[1]["portgroup_uuid"], ports[2]["portgroup_uuid"]},
			[]any{pgID, pgID, nil})

		const fields = "uuid,address,node_uuid,mode,properties,internal_info"
		pgs := c.list("/v1/portgroups?node="+id+"&fields="+fields, "portgroups")
		if len(pgs) != 2 || pgs[0]["uuid"] != pgID {
			c.failf("portgroups of node %s in creation order: %v", id, pgs)
		}
		c.keys("portgroup with fields", pgs[0], strings.Split(fields, ","))
		c.keys("portgroup without fields", c.list("/v1/portgroups?node="+id, "portgroups")[0], []string{"uuid", "address", "name"})
		c.sameSet("GET /v1/nodes/{node}/portgroups", uuidsOf(c.list(nodePath(id)+"/portgroups", "portgroups")), []string{pgID, otherID})
		c.sameSet("GET /v1/portgroups/{pg}/ports", uuidsOf(c.list("/v1/portgroups/"+pgID+"/ports", "ports")), []string{p1, p2})
		c.sameSet("GET /v1/ports?portgroup=", uuidsOf(c.list("/v1/ports?portgroup="+name, "ports")), []string{p1, p2})
		c.eq("GET portgroup by name", c.obj(c.status(c.get("/v1/portgroups/"+name), 200))["uuid"], pgID)

		// A port joins only a portgroup of its own node.
		id2 := c.enroll(ironictest.Fast)
		// NOTE: a 500 with faultcode Server (a plain BadRequest inside Ironic).
		c.fault(c.post("/v1/ports", map[string]any{"node_uuid": id2, "address": randomMAC(), "portgroup_uuid": pgID}), 500, "Server",
			"Port can not be added to a portgroup belonging to a different node.")
		ghost := newUUID()
		c.clientFault(c.post("/v1/ports", map[string]any{"node_uuid": id2, "address": randomMAC(), "portgroup_uuid": ghost}), 400,
			"Portgroup "+ghost+" could not be found.")

		// NOTE: refused by SQLite's foreign key, as a 500 (no check before).
		c.status(c.del("/v1/portgroups/"+pgID), 500)
		c.status(c.del("/v1/ports/"+p1), 204)
		c.status(c.del("/v1/ports/"+p2), 204)
		c.status(c.del("/v1/portgroups/"+pgID), 204)
		c.clientFault(c.get("/v1/portgroups/"+pgID), 404, "Portgroup "+pgID+" could not be found.")
		// Deleting the node takes its ports and portgroups with it.
		c.status(c.del(nodePath(id)), 204)
		c.clientFault(c.get("/v1/portgroups/"+otherID), 404,
			"Portgroup "+otherID+" could not be found.")
		c.clientFault(c.get("/v1/ports/"+solo), 404, "Port "+solo+" could not be found.")
	}},
	{name: "vif.noop-on-named-port", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		port := uuidOf(c, c.createPort(map[string]any{"node_uuid": id, "address": randomMAC()}))
		pg := uuidOf(c, c.status(c.post("/v1/portgroups", map[string]any{"node_uuid": id}), 201))
		// noop stores nothing, whatever port or portgroup is named (>= 1.67).
		c.status(c.post(nodePath(id)+"/vifs", map[string]any{"id": newUUID(), "port_uuid": port}), 204)
		c.status(c.post(nodePath(id)+"/vifs", map[string]any{"id": newUUID(), "portgroup_uuid": pg}), 204)
		c.clientFault(c.post(nodePath(id)+"/vifs", map[string]any{"id": newUUID(), "port_uuid": port, "portgroup_uuid": pg}), 400,
			"Cannot specify both port_uuid and portgroup_uuid")
		c.eq("VIF list", c.obj(c.status(c.get(nodePath(id)+"/vifs"), 200)), map[string]any{"vifs": []any{}})
		for _, k := range []string{"internal_info"} {
			p := c.obj(c.status(c.get("/v1/ports/"+port+"?fields="+k), 200))
			c.eq("port "+k+" after a noop attach", p[k], map[string]any{})
		}
	}},
}

// createPort posts a port, retrying while the node is locked: right after a
// power action the real Ironic's conductor holds the node a moment and
// POST /v1/ports answers 409 NodeLocked.
func (c *C) createPort(body map[string]any) *resp {
	var r *resp
	ok := eventually(10*time.Second, c.pollInterval(), func() bool {
		r = c.post("/v1/ports", body)
		return !(r.status == 409 && strings.Contains(string(r.body), "is locked by host"))
	})
	if !ok {
		c.failf("%s: node still locked after 10 s", r)
	}
	return c.status(r, 201)
}

// list GETs a collection and returns its items under key.
func (c *C) list(path, key string) []map[string]any {
	r := c.status(c.get(path), 200)
	var body map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &body); err != nil {
		c.failf("%s: %v", r, err)
	}
	var items []map[string]any
	if err := json.Unmarshal(body[key], &items); err != nil {
		c.failf("%s: no %q list: %v", r, key, err)
	}
	return items
}

// keys fails unless m has exactly the keys want plus links.
func (c *C) keys(what string, m map[string]any, want []string) {
	var got []string
	for k := range m {
		got = append(got, k)
	}
	want = append(append([]string(nil), want...), "links")
	sort.Strings(got)
	sort.Strings(want)
	c.eq(what+" keys", strings.Join(got, ","), strings.Join(want, ","))
}
