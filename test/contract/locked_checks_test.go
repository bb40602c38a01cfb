package contract

import (
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// waitLocked starts a Fast deploy on the slow profile and waits until the
// node shows "deploying" with a reservation.
func (c *C) waitLocked() (id, inst string) {
	id = c.enroll(ironictest.Fast)
	inst = c.startDeploy(id)
	n := c.waitState(id, "deploying", 5*time.Second)
	c.eq("target while deploying", n["target_provision_state"], "active")
	c.eq("reservation while deploying", n["reservation"], "localhost")
	return id, inst
}

// Fast deploys hold the node's lock for the whole "deploying" (and
// "deleting") state; the slow profile makes it last seconds (docs/ironic.md §7A).
var lockedChecks = []check{
	{name: "locked.deploying", profile: profSlow, run: func(c *C) {
		id, inst := c.waitLocked()
		begin := time.Now()
		// Checked in the API: NodeLocked instead of the usual 400 for a
		// provision target while reserved.
		c.clientFault(c.provision(id, map[string]any{"target": "deleted"}), 409, lockedText(id))
		c.clientFault(c.provision(id, map[string]any{"target": "abort"}), 409, lockedText(id))
		c.clientFault(c.patch(nodePath(id), ops(op("remove", "/instance_uuid"))), 409, transitionText(id))
		// Taken in the conductor (node_locked_retry_attempts=1: at once).
		c.clientFault(c.put(nodePath(id)+"/maintenance", map[string]any{"reason": "x"}), 409, lockedText(id))
		c.clientFault(c.put(nodePath(id)+"/states/power", map[string]any{"target": "power off"}), 409, lockedText(id))
		c.clientFault(c.post(nodePath(id)+"/vifs", map[string]any{"id": newUUID()}), 409, lockedText(id))
		// Reads are never blocked.
		nodes, _ := c.nodesOf(c.get("/v1/nodes?fields=uuid,provision_state,reservation&instance_uuid=" + inst))
		c.eq("list by instance_uuid while deploying", uuidsOf(nodes), []string{id})
		c.eq("listed provision_state", nodes[0]["provision_state"], "deploying")
		if took := time.Since(begin); took >= 2*c.Env.DeployDelay {
			c.failf("the locked calls took %s, longer than the deploy window: results not trustworthy", took)
		}
		n := c.waitState(id, "active", c.deployTimeout())
		c.eq("maintenance after the refused call", n["maintenance"], false)
		c.eq("instance_uuid after the refused calls", n["instance_uuid"], inst)
	}},
	{name: "locked.deleting", profile: profSlow, run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		inst := c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		c.accepted(c.provision(id, map[string]any{"target": "deleted"}), id)
		n := c.waitState(id, "deleting", 5*time.Second)
		// NOTE: instance_uuid stays set while "deleting"; it is cleared,
		// with instance_info, at the end (§7D).
		c.eq("instance_uuid while deleting", n["instance_uuid"], inst)
		c.eq("target while deleting", n["target_provision_state"], "available")
		c.eq("reservation while deleting", n["reservation"], "localhost")
		c.clientFault(c.provision(id, map[string]any{"target": "deleted"}), 409, lockedText(id))
		n = c.waitState(id, "available", c.deployTimeout())
		c.eq("instance_uuid after undeploy", n["instance_uuid"], nil)
	}},
	{name: "restart.transient-states-fail", profile: profRestart, run: func(c *C) {
		// SIGKILL (the simulator models it) with one node "deploying", one
		// "deleting" and one in "wait call-back": the conductor fails the
		// transient states it cannot resume and leaves "wait call-back" (§1).
		waiting, _, _ := c.waitCallback(ironictest.LongDeploy)
		deleting := c.enroll(ironictest.Fast)
		delInst := c.startDeploy(deleting)
		c.waitState(deleting, "active", c.deployTimeout())
		deploying, inst := c.waitLocked()
		c.accepted(c.provision(deleting, map[string]any{"target": "deleted"}), deleting)
		c.waitState(deleting, "deleting", 5*time.Second)
		if n := c.node(deploying); n["provision_state"] != "deploying" {
			c.failf("node %s left deploying before the restart: %v", deploying, n["provision_state"])
		}
		c.restart()

		n := c.node(deploying)
		c.eq("provision_state after restart", n["provision_state"], "deploy failed")
		c.eq("target after restart", n["target_provision_state"], "active")
		c.eq("reservation after restart", n["reservation"], nil)
		c.eq("instance_uuid after restart", n["instance_uuid"], inst)
		c.eq("last_error after restart", n["last_error"],
			"The deploying state can't be resumed by conductor localhost. Moving to fail state.")

		n = c.node(deleting)
		c.eq("provision_state after restart while deleting", n["provision_state"], "error")
		c.eq("target after restart while deleting", n["target_provision_state"], nil)
		c.eq("reservation after restart while deleting", n["reservation"], nil)
		c.eq("instance_uuid after restart while deleting", n["instance_uuid"], delInst)
		c.eq("last_error after restart while deleting", n["last_error"],
			"The deleting state can't be resumed by conductor localhost. Moving to fail state.")

		n = c.node(waiting)
		c.eq("provision_state after restart in wait call-back", n["provision_state"], "wait call-back")
		c.eq("last_error after restart in wait call-back", n["last_error"], nil)

		// All three undeploy back to available.
		for _, id := range []string{deploying, deleting, waiting} {
			c.provisionRetry(id, "deleted")
		}
		for _, id := range []string{deploying, deleting, waiting} {
			n = c.waitState(id, "available", c.deployTimeout())
			c.eq("instance_uuid after undeploy", n["instance_uuid"], nil)
		}
	}},
}
