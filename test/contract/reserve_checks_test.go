package contract

import (
	"strings"
	"sync"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Reserving a node for an instance with PATCH /instance_uuid (docs/ironic.md §3, §11).
var reserveChecks = []check{
	{name: "reserve.add-idempotent", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		inst := c.reserve(id)
		r := c.status(c.patch(nodePath(id), ops(op("add", "/instance_uuid", inst))), 200)
		c.eq("instance_uuid after the same add again", c.obj(r)["instance_uuid"], inst)
		r = c.status(c.patch(nodePath(id), ops(op("replace", "/instance_uuid", inst))), 200)
		c.eq("instance_uuid after replace with the same", c.obj(r)["instance_uuid"], inst)
		c.eq("provision_state", c.node(id)["provision_state"], "available")
	}},
	{name: "reserve.conflicts", run: func(c *C) {
		a, b := c.enroll(ironictest.Fast), c.enroll(ironictest.Fast)
		inst := c.reserve(a)
		for _, o := range []string{"add", "replace"} {
			c.clientFault(c.patch(nodePath(a), ops(op(o, "/instance_uuid", newUUID()))), 409, associatedText(a, inst))
		}
		c.clientFault(c.patch(nodePath(b), ops(op("add", "/instance_uuid", inst))), 409,
			"Instance "+inst+" is already associated with a node, it cannot be associated with this other node "+b)
		c.eq("node A keeps its instance", c.node(a)["instance_uuid"], inst)
		c.eq("node B stays free", c.node(b)["instance_uuid"], nil)
	}},
	{name: "reserve.invalid", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.clientFault(c.patch(nodePath(id), ops(op("add", "/instance_uuid", "not-a-uuid"))), 400,
			"Expected UUID for instance_uuid: not-a-uuid")
		c.clientFault(c.patch(nodePath(id), ops(op("test", "/instance_uuid", newUUID()))), 400,
			"Schema error for patch: 'test' is not one of ['add', 'replace', 'remove']")
		c.eq("instance_uuid after refused patches", c.node(id)["instance_uuid"], nil)
	}},
	{name: "reserve.remove", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.reserve(id)
		c.status(c.patch(nodePath(id), ops(op("add", "/instance_info", instanceInfo()))), 200)
		// Release of a never-deployed reservation: one PATCH, repeatable (§11).
		for range 2 {
			n := c.obj(c.status(c.patch(nodePath(id), ops(op("remove", "/instance_uuid"), op("remove", "/instance_info"))), 200))
			c.eq("instance_uuid after remove", n["instance_uuid"], nil)
			c.eq("instance_info after remove", n["instance_info"], map[string]any{})
			c.eq("provision_state after remove", n["provision_state"], "available")
		}
		n := c.obj(c.status(c.patch(nodePath(id), ops(op("remove", "/instance_uuid"))), 200))
		c.eq("instance_uuid after removing it alone", n["instance_uuid"], nil)
		c.reserve(id) // free again
	}},
	{name: "reserve.instance-info", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.reserve(id)
		info := instanceInfo()
		n := c.obj(c.status(c.patch(nodePath(id), ops(op("add", "/instance_info", info))), 200))
		c.eq("instance_info", n["instance_info"], info)
		n = c.obj(c.status(c.patch(nodePath(id), ops(op("add", "/instance_info/root_gb", "20"))), 200))
		c.eq("instance_info.root_gb", n["instance_info"].(map[string]any)["root_gb"], "20")
		c.eq("instance_info.image_source kept", n["instance_info"].(map[string]any)["image_source"], info["image_source"])
	}},
	{name: "reserve.race-one-node", run: func(c *C) {
		// Eight instances race for one node: exactly one wins; the others get
		// 409 NodeAssociated naming the winner, or NodeLocked (§3).
		id := c.enroll(ironictest.Fast)
		insts := make([]string, 8)
		for i := range insts {
			insts[i] = newUUID()
		}
		rs := race(len(insts), func(i int) *resp {
			return c.patch(nodePath(id), ops(op("add", "/instance_uuid", insts[i])))
		})
		winner := ""
		for i, r := range rs {
			if r.status == 200 {
				if winner != "" {
					c.failf("two instances reserved node %s: %s and %s", id, winner, insts[i])
				}
				winner = insts[i]
			}
		}
		if winner == "" {
			c.failf("no instance won the race for node %s: %v", id, rs)
		}
		for _, r := range rs {
			if r.status != 200 && !isLocked(r) {
				c.clientFault(r, 409, associatedText(id, winner))
			}
		}
		c.eq("instance_uuid after the race", c.node(id)["instance_uuid"], winner)
	}},
	{name: "reserve.race-one-instance", run: func(c *C) {
		// One instance races onto four nodes: exactly one node gets it.
		nodes := make([]string, 4)
		for i := range nodes {
			nodes[i] = c.enroll(ironictest.Fast)
		}
		inst := newUUID()
		rs := race(len(nodes), func(i int) *resp {
			return c.patch(nodePath(nodes[i]), ops(op("add", "/instance_uuid", inst)))
		})
		won := 0
		for i, r := range rs {
			switch {
			case r.status == 200:
				won++
			case r.status == 409 && strings.Contains(string(r.body), "is already associated with a node"):
				c.clientFault(r, 409, "Instance "+inst+" is already associated with a node, it cannot be associated with this other node "+nodes[i])
			default:
				c.failf("%s: want 200 or 409 instance already associated", r)
			}
		}
		if won != 1 {
			c.failf("instance %s reserved %d nodes, want exactly 1: %v", inst, won, rs)
		}
		listed, _ := c.nodesOf(c.get("/v1/nodes?fields=uuid&instance_uuid=" + inst))
		if len(listed) != 1 {
			c.failf("list by instance_uuid after the race: %v", uuidsOf(listed))
		}
	}},
}

// race runs n calls at once and returns their answers in order. A call's
// failf is recorded and re-raised on the check's goroutine.
func race(n int, call func(i int) *resp) []*resp {
	out := make([]*resp, n)
	fails := make([]any, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { fails[i] = recover() }()
			<-start
			out[i] = call(i)
		}()
	}
	close(start)
	wg.Wait()
	for _, f := range fails {
		if f != nil {
			panic(f)
		}
	}
	return out
}
