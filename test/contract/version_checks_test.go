package contract

import "github.com/ingot-dev/ingot/internal/ironictest"

// Version documents and microversion negotiation (docs/ironic.md §0).
var versionChecks = []check{
	{name: "version.root", run: func(c *C) {
		r := c.status(c.send(noVersion, "GET", "/", nil), 200)
		doc := c.obj(r)
		c.eq("name", doc["name"], "OpenStack Ironic API")
		v1 := map[string]any{
			"id": "v1", "status": "CURRENT", "min_version": "1.1", "version": "1.82",
			"links": []any{map[string]any{"href": c.base + "/v1/", "rel": "self"}},
		}
		c.eq("default_version", doc["default_version"], v1)
		c.eq("versions", doc["versions"], []any{v1})
	}},
	{name: "version.v1-headers", run: func(c *C) {
		for _, tc := range []struct{ send, answer string }{
			{noVersion, "1.1"}, {"1.78", "1.78"}, {"latest", "1.82"}, {"1.1", "1.1"},
		} {
			r := c.status(c.send(tc.send, "GET", "/v1", nil), 200)
			c.eq(r.call+" X-OpenStack-Ironic-API-Minimum-Version", r.header.Get("X-OpenStack-Ironic-API-Minimum-Version"), "1.1")
			c.eq(r.call+" X-OpenStack-Ironic-API-Maximum-Version", r.header.Get("X-OpenStack-Ironic-API-Maximum-Version"), "1.82")
			c.eq(r.call+" X-OpenStack-Ironic-API-Version", r.header.Get("X-OpenStack-Ironic-API-Version"), tc.answer)
			doc := c.obj(r)
			c.eq(r.call+" id", doc["id"], "v1")
			v, _ := doc["version"].(map[string]any)
			c.eq(r.call+" version.version", v["version"], "1.82")
			c.eq(r.call+" version.min_version", v["min_version"], "1.1")
		}
	}},
	{name: "version.not-acceptable", run: func(c *C) {
		for _, v := range []string{"1.83", "1.0"} {
			r := c.send(v, "GET", "/v1/nodes", nil)
			c.routingError(r, 406, "Not Acceptable", "Version "+v+" was requested but the minor version is not "+
				"supported by this service. The supported version range is: [1.1, 1.82].")
			c.eq(r.call+" X-OpenStack-Ironic-API-Maximum-Version", r.header.Get("X-OpenStack-Ironic-API-Maximum-Version"), "1.82")
		}
	}},
	{name: "version.no-header-is-1.1", run: func(c *C) {
		name := c.name()
		id := c.Env.EnrollNode(c.T, ironictest.NodeSpec{Name: name, ResourceClass: c.rc})
		r := c.status(c.send(noVersion, "GET", nodePath(id), nil), 200)
		c.eq(r.call+" X-OpenStack-Ironic-API-Version", r.header.Get("X-OpenStack-Ironic-API-Version"), "1.1")
		n := c.obj(r)
		// NOTE: at 1.1 "available" is shown as null (it was NOSTATE then).
		c.eq("provision_state at 1.1", n["provision_state"], nil)
		for _, k := range []string{"resource_class", "deploy_interface", "name", "traits"} {
			if _, ok := n[k]; ok {
				c.failf("%s: field %q present at 1.1", r.call, k)
			}
		}
		// Names are a 1.5 feature: at 1.1 a name is not looked up.
		c.clientFault(c.send(noVersion, "GET", nodePath(name), nil), 404, notFoundText(name))
		c.eq("provision_state at 1.78", c.node(name)["provision_state"], "available")
	}},
	{name: "version.1.10-resource-class", run: func(c *C) {
		// resource_class needs ≥ 1.21; the harness enrols at 1.10 and PATCHes it.
		r := c.send("1.10", "POST", "/v1/nodes", map[string]any{
			"name": c.name(), "driver": "fake-hardware", "resource_class": c.rc,
		})
		c.clientFault(r, 406, "Request not acceptable.")
	}},
}
