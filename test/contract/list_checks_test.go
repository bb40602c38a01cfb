package contract

import (
	"regexp"
	"strings"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// isoTime is Python's datetime.isoformat() of an aware UTC time.
var isoTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$`)

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sortStrings(out)
	return out
}

// Node lists: fields, links, pagination, filters (docs/ironic.md §0, §9,
// docs/ironic.md §11, filtered pagination).
// Every list is filtered by the check's own resource class, because the
// checks share one Ironic.
var listChecks = []check{
	{name: "list.default-fields", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		nodes, next := c.nodesOf(c.get("/v1/nodes?resource_class=" + c.rc))
		if len(nodes) != 1 || nodes[0]["uuid"] != id {
			c.failf("list by resource_class: %v, want just %s", uuidsOf(nodes), id)
		}
		if next != "" {
			c.failf("list without limit has next %q", next)
		}
		c.eq("default list fields", keys(nodes[0]),
			[]string{"instance_uuid", "links", "maintenance", "name", "power_state", "provision_state", "uuid"})
		selfLink(c, nodes[0], id)
	}},
	{name: "list.fields-and-links", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		nodes, _ := c.nodesOf(c.get("/v1/nodes?fields=uuid,provision_state&resource_class=" + c.rc))
		if len(nodes) != 1 {
			c.failf("list: %v, want just %s", uuidsOf(nodes), id)
		}
		c.eq("list with fields: keys", keys(nodes[0]), []string{"links", "provision_state", "uuid"})
		selfLink(c, nodes[0], id)
		n := c.obj(c.status(c.get(nodePath(id)+"?fields=instance_uuid,provision_updated_at"), 200))
		c.eq("node with fields: keys", keys(n), []string{"instance_uuid", "links", "provision_updated_at"})
		c.clientFault(c.get("/v1/nodes?fields=created_at"), 400, "Field created_at is not a valid field.")
		c.clientFault(c.get("/v1/nodes/detail?fields=uuid"), 400, "Unexpected arguments: fields")
	}},
	{name: "list.ingot-fields", run: func(c *C) {
		// The fields ingot's bulk view and inventory ask for are all valid,
		// and come back exactly (plus links).
		id := c.enroll(ironictest.Fast)
		fields := []string{"uuid", "name", "instance_uuid", "provision_state", "target_provision_state", "power_state",
			"maintenance", "maintenance_reason", "last_error", "reservation", "resource_class", "provision_updated_at", "traits"}
		nodes, _ := c.nodesOf(c.get("/v1/nodes?fields=" + strings.Join(fields, ",") + "&resource_class=" + c.rc))
		if len(nodes) != 1 {
			c.failf("list: %v, want just %s", uuidsOf(nodes), id)
		}
		c.eq("keys", keys(nodes[0]), sorted(append(fields, "links")))
		// provision_updated_at: null until the first provision state change,
		// then Python's isoformat in UTC.
		c.eq("provision_updated_at of a node created available", nodes[0]["provision_updated_at"], nil)
		c.accepted(c.provision(id, map[string]any{"target": "active"}), id)
		n := c.waitState(id, "active", c.deployTimeout())
		ts, _ := n["provision_updated_at"].(string)
		if !isoTime.MatchString(ts) {
			c.failf("provision_updated_at %q, want like 2026-11-30T02:09:07.301458+00:00", n["provision_updated_at"])
		}
	}},
	{name: "list.limit-zero", run: func(c *C) {
		c.clientFault(c.get("/v1/nodes?limit=0"), 400, "Limit must be positive")
		c.clientFault(c.get("/v1/nodes?limit=-1"), 400, "Limit must be positive")
	}},
	{name: "list.limit-marker-next", run: func(c *C) {
		ids := enrollInOrder(c, 3)
		base := "/v1/nodes?fields=uuid&resource_class=" + c.rc
		nodes, next := c.nodesOf(c.get(base))
		c.eq("unlimited list", uuidsOf(nodes), ids)
		if next != "" {
			c.failf("unlimited list has next %q", next)
		}
		// NOTE: a full page has a next link even when nothing follows.
		nodes, next = c.nodesOf(c.get(base + "&limit=3"))
		c.eq("limit=3 list", uuidsOf(nodes), ids)
		if next == "" {
			c.failf("GET %s&limit=3: a page with as many nodes as the limit has no next link", base)
		}
		nodes, next = c.nodesOf(c.get(base + "&limit=2"))
		c.eq("limit=2 page 1", uuidsOf(nodes), ids[:2])
		q := c.query(next)
		c.eq("next marker", q.Get("marker"), ids[1])
		c.eq("next limit", q.Get("limit"), "2")
		c.eq("next fields", q.Get("fields"), "uuid")
		c.eq("next sort_key", q.Get("sort_key"), "id")
		c.eq("next sort_dir", q.Get("sort_dir"), "asc")
		// The marker keeps working with the filter given again.
		nodes, _ = c.nodesOf(c.get(base + "&limit=2&marker=" + ids[1]))
		c.eq("page 2 with the filter given again", uuidsOf(nodes), ids[2:])
	}},
	{name: "list.marker-gone", run: func(c *C) {
		// NOTE: a marker naming a node deleted since the previous page (an
		// out-of-band delete during a paged bulk view) fails the whole list
		// with the node's 404, not an empty or shorter page.
		ids := enrollInOrder(c, 2)
		_, next := c.nodesOf(c.get("/v1/nodes?fields=uuid&limit=1&resource_class=" + c.rc))
		c.eq("next marker", c.query(next).Get("marker"), ids[0])
		c.status(c.del(nodePath(ids[0])), 204)
		c.clientFault(c.send(version, "GET", next, nil), 404, notFoundText(ids[0]))
		c.clientFault(c.get("/v1/nodes?fields=uuid&limit=1&marker="+ids[0]+"&resource_class="+c.rc), 404, notFoundText(ids[0]))
		c.clientFault(c.get("/v1/nodes?fields=uuid&marker=not-a-uuid"), 400, "Expected UUID for marker: not-a-uuid")
	}},
	{name: "list.pagination-quirk", run: func(c *C) {
		// NOTE: the next link drops provision_state, resource_class and
		// falsy associated/maintenance; page 2 of a filtered list is
		// unfiltered. Truthy associated/maintenance are kept.
		ids := enrollInOrder(c, 3)
		c.Env.EnrollNodes(c.T, 2, ironictest.NodeSpec{Name: c.name(), ResourceClass: c.rc + "-other"})
		path := "/v1/nodes?fields=uuid,resource_class&provision_state=available&associated=False&maintenance=false&limit=2&resource_class=" + c.rc
		nodes, next := c.nodesOf(c.get(path))
		c.eq("page 1", uuidsOf(nodes), ids[:2])
		q := c.query(next)
		for _, k := range []string{"resource_class", "provision_state", "associated", "maintenance"} {
			if q.Has(k) {
				c.failf("GET %s: next link %q keeps %s; the real Ironic drops it", path, next, k)
			}
		}
		nodes, _ = c.nodesOf(c.send(version, "GET", next, nil))
		foreign := 0
		for _, n := range nodes {
			if n["resource_class"] != c.rc {
				foreign++
			}
		}
		// Page 2 holds the 2 nodes created after ids[1], whatever their class:
		// at most one of them is ids[2], and two nodes of another class follow.
		if len(nodes) != 2 || foreign == 0 {
			c.failf("page 2 via next %q: %v; want 2 nodes, some of another resource class (the filter is lost)", next, nodes)
		}
		// Truthy associated and maintenance survive in the next link.
		c.reserve(ids[0])
		c.reserve(ids[1])
		_, next = c.nodesOf(c.get("/v1/nodes?fields=uuid&associated=True&limit=1&resource_class=" + c.rc))
		q = c.query(next)
		c.eq("next associated (kept when true)", q.Get("associated"), "True")
		if q.Has("resource_class") {
			c.failf("next %q keeps resource_class", next)
		}
		c.maintenance(ids[0], true)
		c.maintenance(ids[1], true)
		_, next = c.nodesOf(c.get("/v1/nodes?fields=uuid&maintenance=true&limit=1&resource_class=" + c.rc))
		c.eq("next maintenance (kept when true)", c.query(next).Get("maintenance"), "True")
	}},
	{name: "list.filters", run: func(c *C) {
		ids := c.Env.EnrollNodes(c.T, 4, ironictest.NodeSpec{Name: c.name(), ResourceClass: c.rc})
		free, reserved, maint, active := ids[0], ids[1], ids[2], ids[3]
		inst := c.reserve(reserved)
		c.maintenance(maint, true)
		instActive := c.startDeploy(active)
		c.waitState(active, "active", c.deployTimeout())
		base := "/v1/nodes?fields=uuid&resource_class=" + c.rc
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"", ids},
			{"&associated=True", []string{reserved, active}},
			{"&associated=true", []string{reserved, active}},
			{"&associated=False", []string{free, maint}},
			{"&associated=false", []string{free, maint}},
			{"&maintenance=True", []string{maint}},
			{"&maintenance=false", []string{free, reserved, active}},
			{"&provision_state=active", []string{active}},
			{"&provision_state=available", []string{free, reserved, maint}},
			{"&provision_state=available&associated=False&maintenance=False", []string{free}},
		} {
			nodes, _ := c.nodesOf(c.get(base + tc.query))
			c.sameSet("GET "+base+tc.query, uuidsOf(nodes), tc.want)
		}
		for _, tc := range []struct{ inst, want string }{{inst, reserved}, {instActive, active}} {
			nodes, _ := c.nodesOf(c.get("/v1/nodes?fields=uuid,instance_uuid,provision_state&instance_uuid=" + tc.inst))
			c.eq("list by instance_uuid", uuidsOf(nodes), []string{tc.want})
			c.eq("list by instance_uuid: keys", keys(nodes[0]), []string{"instance_uuid", "links", "provision_state", "uuid"})
			nodes, _ = c.nodesOf(c.get("/v1/nodes/detail?instance_uuid=" + tc.inst))
			c.eq("detail by instance_uuid", uuidsOf(nodes), []string{tc.want})
			c.eq("detail by instance_uuid: instance_uuid", nodes[0]["instance_uuid"], tc.inst)
			c.eq("detail by instance_uuid: resource_class", nodes[0]["resource_class"], c.rc)
		}
		nodes, _ := c.nodesOf(c.get("/v1/nodes?instance_uuid=" + newUUID()))
		if len(nodes) != 0 {
			c.failf("list by an unknown instance_uuid: %v", uuidsOf(nodes))
		}
		c.clientFault(c.get("/v1/nodes?instance_uuid=not-a-uuid"), 400, "Expected UUID for instance_uuid: not-a-uuid")
	}},
}

// enrollInOrder enrols n Fast nodes one after the other, so their creation
// order (the order of Ironic's lists: by internal id) is known.
func enrollInOrder(c *C, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = c.enroll(ironictest.Fast)
	}
	return ids
}
