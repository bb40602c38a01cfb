package contract

import "github.com/ingot-dev/ingot/internal/ironictest"

// Deploy and undeploy of Fast nodes (docs/ironic.md §6, §7C, §10).
var deployChecks = []check{
	{name: "deploy.fast", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		inst := c.startDeploy(id)
		n := c.waitState(id, "active", c.deployTimeout())
		c.eq("target_provision_state when active", n["target_provision_state"], nil)
		c.eq("instance_uuid when active", n["instance_uuid"], inst)
		c.eq("last_error when active", n["last_error"], nil)
		info, _ := n["instance_info"].(map[string]any)
		for k, v := range instanceInfo() {
			c.eq("instance_info."+k+" when active", info[k], v)
		}
		// NOTE: a JSON config drive is accepted at ≥ 1.56 and shown masked.
		c.eq("instance_info.configdrive when active", info["configdrive"], "******")
		// Ironic records the image type it derived from image_source.
		c.eq("instance_info.image_type when active", info["image_type"], "whole-disk")
	}},
	{name: "deploy.undeploy", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		c.accepted(c.provision(id, map[string]any{"target": "deleted"}), id)
		n := c.waitState(id, "available", c.deployTimeout())
		// Ironic clears instance_uuid and instance_info at the end of an undeploy.
		c.eq("instance_uuid after undeploy", n["instance_uuid"], nil)
		c.eq("instance_info after undeploy", n["instance_info"], map[string]any{})
		c.eq("target after undeploy", n["target_provision_state"], nil)
		c.eq("maintenance after undeploy", n["maintenance"], false)
		// The node can be deployed again.
		c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
	}},
	{name: "deploy.without-instance-info", run: func(c *C) {
		// fake-hardware needs no instance_info and no instance_uuid.
		id := c.enroll(ironictest.Fast)
		c.accepted(c.provision(id, map[string]any{"target": "active"}), id)
		n := c.waitState(id, "active", c.deployTimeout())
		c.eq("instance_uuid", n["instance_uuid"], nil)
	}},
	{name: "deploy.without-image-source-no-image-type", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.accepted(c.provision(id, map[string]any{"target": "active"}), id)
		n := c.waitState(id, "active", c.deployTimeout())
		// Without an image_source nothing is derived into instance_info.
		c.eq("instance_info", n["instance_info"], map[string]any{})
	}},
	{name: "deploy.image-source-form", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.reserve(id)
		for _, tc := range []struct{ src, reason string }{
			{"x", "Scheme-less image href is not a UUID."},
			{"ftp://127.0.0.1/img", "Image download protocol ftp is not supported."},
		} {
			c.status(c.patch(nodePath(id), ops(op("add", "/instance_info", map[string]any{"image_source": tc.src}))), 200)
			r := c.provision(id, map[string]any{"target": "active"})
			c.fault(r, 500, "Server", "Validation of image href "+tc.src+" failed, reason: "+tc.reason)
			n := c.node(id)
			c.eq("provision_state after a refused deploy", n["provision_state"], "available")
			c.eq("target after a refused deploy", n["target_provision_state"], nil)
		}
		for _, src := range []string{"https://127.0.0.1:1/img", "file:///tmp/img", newUUID()} {
			c.status(c.patch(nodePath(id), ops(op("add", "/instance_info", map[string]any{"image_source": src}))), 200)
			c.accepted(c.provision(id, map[string]any{"target": "active"}), id)
			c.waitState(id, "active", c.deployTimeout())
			c.provisionRetry(id, "deleted")
			c.waitState(id, "available", c.deployTimeout())
			c.reserve(id)
		}
	}},
	{name: "deploy.refused", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.reserve(id)
		c.clientFault(c.send("1.55", "PUT", nodePath(id)+"/states/provision",
			map[string]any{"target": "active", "configdrive": configDrive(newUUID())}), 400,
			"Providing a JSON object for configdrive is only supported starting with API version 1.56")
		c.clientFault(c.provision(id, map[string]any{"target": "deleted"}), 400, invalidStateText("deleted", id, "available"))
		c.clientFault(c.provision(id, map[string]any{"target": "bogus"}), 400, invalidStateText("bogus", id, "available"))
		c.maintenance(id, true)
		c.clientFault(c.provision(id, map[string]any{"target": "active"}), 400,
			"The provisioning operation can't be performed on node "+id+" because it's in maintenance mode.")
		c.maintenance(id, false)
		c.accepted(c.provision(id, map[string]any{"target": "active"}), id)
		c.waitState(id, "active", c.deployTimeout())
		c.clientFault(c.provision(id, map[string]any{"target": "active"}), 400, invalidStateText("active", id, "active"))
	}},
	{name: "deploy.undeploy-in-maintenance", run: func(c *C) {
		id := c.enroll(ironictest.Fast)
		c.startDeploy(id)
		c.waitState(id, "active", c.deployTimeout())
		c.maintenance(id, true)
		c.accepted(c.provision(id, map[string]any{"target": "deleted"}), id)
		n := c.waitState(id, "available", c.deployTimeout())
		c.eq("maintenance stays on", n["maintenance"], true)
		c.eq("instance_uuid after undeploy", n["instance_uuid"], nil)
	}},
}
