package contract

import (
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// waitCallback starts a custom-agent deploy and waits for "wait call-back".
func (c *C) waitCallback(kind ironictest.Kind) (id, inst string, n map[string]any) {
	id = c.enroll(kind)
	inst = c.startDeploy(id)
	n = c.waitState(id, "wait call-back", 10*time.Second)
	return id, inst, n
}

// Long deploys: custom-agent nodes in "wait call-back", unlocked (docs/ironic.md §7B, §8).
var longDeployChecks = []check{
	{name: "longdeploy.wait-callback", run: func(c *C) {
		id, inst, n := c.waitCallback(ironictest.LongDeploy)
		c.eq("target in wait call-back", n["target_provision_state"], "active")
		c.eq("instance_uuid in wait call-back", n["instance_uuid"], inst)
		c.eq("power_state in wait call-back", n["power_state"], "power on")
		c.eq("last_error in wait call-back", n["last_error"], nil)
		c.clientFault(c.provision(id, map[string]any{"target": "abort"}), 400, invalidStateText("abort", id, "wait call-back"))
		c.clientFault(c.patch(nodePath(id), ops(op("remove", "/instance_uuid"))), 409, transitionText(id))
		c.clientFault(c.patch(nodePath(id), ops(op("add", "/instance_info/root_gb", "1"))), 409, transitionText(id))
		c.clientFault(c.del(nodePath(id)), 409, associatedText(id, inst))
		nodes, _ := c.nodesOf(c.get("/v1/nodes?fields=uuid,provision_state&instance_uuid=" + inst))
		c.eq("list by instance_uuid", uuidsOf(nodes), []string{id})
		c.eq("listed provision_state", nodes[0]["provision_state"], "wait call-back")
	}},
	{name: "longdeploy.undeploy", run: func(c *C) {
		id, _, _ := c.waitCallback(ironictest.LongDeploy)
		c.accepted(c.provision(id, map[string]any{"target": "deleted"}), id)
		n := c.waitState(id, "available", c.deployTimeout())
		c.eq("instance_uuid after undeploy", n["instance_uuid"], nil)
		c.eq("instance_info after undeploy", n["instance_info"], map[string]any{})
		c.eq("power_state after undeploy", n["power_state"], "power off")
		c.eq("last_error after undeploy", n["last_error"], nil)
	}},
	{name: "longdeploy.maintenance-delete", run: func(c *C) {
		id, inst, _ := c.waitCallback(ironictest.LongDeploy)
		c.maintenance(id, true)
		n := c.node(id)
		c.eq("provision_state in maintenance", n["provision_state"], "wait call-back")
		c.eq("maintenance", n["maintenance"], true)
		c.eq("maintenance_reason", n["maintenance_reason"], "contract")
		c.status(c.del(nodePath(id)), 204)
		c.gone(id, inst)
	}},
	{name: "longdeploy.maintenance-remove-instance", run: func(c *C) {
		id, _, _ := c.waitCallback(ironictest.LongDeploy)
		c.maintenance(id, true)
		// NOTE: in maintenance, a PATCH that is exactly "remove
		// /instance_uuid" is allowed during the transition; others are not.
		c.clientFault(c.patch(nodePath(id), ops(op("remove", "/instance_uuid"), op("remove", "/instance_info"))), 409, transitionText(id))
		n := c.obj(c.status(c.patch(nodePath(id), ops(op("remove", "/instance_uuid"))), 200))
		c.eq("instance_uuid", n["instance_uuid"], nil)
		c.eq("provision_state", n["provision_state"], "wait call-back")
		c.maintenance(id, false)
		c.accepted(c.provision(id, map[string]any{"target": "deleted"}), id)
		c.waitState(id, "available", c.deployTimeout())
	}},
}

// Failing deploys: custom-agent nodes time out waiting for the callback (§8).
var failingChecks = []check{
	{name: "failing.timeout", profile: profFailing, run: func(c *C) {
		id, inst, _ := c.waitCallback(ironictest.Failing)
		waiting := time.Now()
		// NOTE: last_error can lag the state (§11); it is set by the time
		// the conductor lets go of the node, which waitState waits for.
		n := c.waitState(id, "deploy failed", c.Env.CallbackTimeout+10*time.Second)
		// The timeout counts from entering "wait call-back" (seen here up
		// to a poll late) and is checked every second on the real Ironic.
		if waited := time.Since(waiting); waited < c.Env.CallbackTimeout-time.Second {
			c.failf("deploy failed %s after wait call-back was seen, before the callback timeout %s", waited, c.Env.CallbackTimeout)
		}
		c.eq("last_error", n["last_error"], "Timeout reached while waiting for callback for node "+id)
		c.eq("target_provision_state in deploy failed", n["target_provision_state"], "active")
		c.eq("instance_uuid in deploy failed", n["instance_uuid"], inst)
		c.eq("power_state in deploy failed", n["power_state"], "power on")
		c.clientFault(c.del(nodePath(id)), 409, associatedText(id, inst))
		c.provisionRetry(id, "deleted")
		n = c.waitState(id, "available", c.deployTimeout())
		c.eq("instance_uuid after undeploy", n["instance_uuid"], nil)
		c.eq("power_state after undeploy", n["power_state"], "power off")
	}},
	{name: "failing.release-and-redeploy", profile: profFailing, run: func(c *C) {
		id, _, _ := c.waitCallback(ironictest.Failing)
		c.waitState(id, "deploy failed", c.Env.CallbackTimeout+10*time.Second)
		// "deploy failed" is a state in which the node may be updated.
		var r *resp
		eventually(5*time.Second, 100*time.Millisecond, func() bool {
			r = c.patch(nodePath(id), ops(op("remove", "/instance_uuid")))
			return !isLocked(r)
		})
		n := c.obj(c.status(r, 200))
		c.eq("instance_uuid", n["instance_uuid"], nil)
		c.eq("provision_state", n["provision_state"], "deploy failed")
		// A deploy can be asked for again from "deploy failed".
		inst := c.reserve(id)
		c.provisionRetry(id, "active")
		n = c.waitState(id, "wait call-back", 10*time.Second)
		c.eq("instance_uuid on redeploy", n["instance_uuid"], inst)
		c.accepted(c.provision(id, map[string]any{"target": "deleted"}), id)
		c.waitState(id, "available", c.deployTimeout())
	}},
	{name: "failing.maintenance-holds-timeout", profile: profFailing, run: func(c *C) {
		id, _, _ := c.waitCallback(ironictest.Failing)
		c.maintenance(id, true)
		// _check_deploy_timeouts skips nodes in maintenance (§7B).
		time.Sleep(c.Env.CallbackTimeout + 2*time.Second)
		n := c.node(id)
		c.eq("provision_state in maintenance past the timeout", n["provision_state"], "wait call-back")
		c.maintenance(id, false)
		c.waitState(id, "deploy failed", 5*time.Second)
	}},
}
