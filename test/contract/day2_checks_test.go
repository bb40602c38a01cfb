package contract

import (
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Day-2 operations on a deployed Fast node: power, rebuild, rescue
// (docs/ironic.md §12).
var day2Checks = []check{
	{name: "day2.power-target-while-changing", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		for _, tc := range []struct{ target, want string }{
			{"power on", "power on"}, {"rebooting", "power on"}, {"soft rebooting", "power on"}, {"power off", "power off"},
		} {
			c.accepted(c.put(nodePath(id)+"/states/power", map[string]any{"target": tc.target}), id)
			if !eventually(5*time.Second, 20*time.Millisecond, func() bool {
				n := c.node(id)
				return n["power_state"] == tc.want && n["target_power_state"] == nil
			}) {
				n := c.node(id)
				c.failf("%s: power %v target %v, want %q and no target", tc.target, n["power_state"], n["target_power_state"], tc.want)
			}
		}
		c.eq("provision_state after power changes", c.node(id)["provision_state"], "active")
	}},
	{name: "day2.rebuild", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		inst := c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		r := c.provision(id, map[string]any{"target": "rebuild", "configdrive": map[string]any{"meta_data": map[string]any{"uuid": inst}}})
		c.accepted(r, id)
		n := c.waitState(id, "active", c.deployTimeout())
		c.eq("instance_uuid after rebuild", n["instance_uuid"], inst)
		c.eq("target after rebuild", n["target_provision_state"], nil)
		info, _ := n["instance_info"].(map[string]any)
		c.eq("instance_info.configdrive after rebuild", info["configdrive"], "******")
	}},
	{name: "day2.rescue-fake", run: func(c *C) {
		id := c.Env.EnrollNode(c.T, ironictest.NodeSpec{Name: c.name(), ResourceClass: c.rc, Kind: ironictest.Fast, Rescue: true})
		inst := c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		c.clientFault(c.provision(id, map[string]any{"target": "rescue"}), 400,
			`A non-empty "rescue_password" is required when setting target provision state to rescue`)
		c.accepted(c.provision(id, map[string]any{"target": "rescue", "rescue_password": "pw"}), id)
		n := c.waitState(id, "rescue", c.deployTimeout())
		c.eq("target in rescue", n["target_provision_state"], nil)
		c.eq("instance_uuid in rescue", n["instance_uuid"], inst)
		c.accepted(c.provision(id, map[string]any{"target": "unrescue"}), id)
		n = c.waitState(id, "active", c.deployTimeout())
		c.eq("instance_uuid after unrescue", n["instance_uuid"], inst)
	}},
	{name: "day2.rescue-refused-by-no-rescue", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		inst := c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		c.eq("default rescue_interface", c.node(id)["rescue_interface"], "no-rescue")
		c.fault(c.provision(id, map[string]any{"target": "rescue", "rescue_password": "pw"}), 500, "Server",
			"Failed to rescue instance "+inst+" for node "+id+": Validation failed: Driver fake-hardware does not support rescue (disabled or not implemented).")
		c.eq("provision_state after a refused rescue", c.node(id)["provision_state"], "active")
	}},
}
