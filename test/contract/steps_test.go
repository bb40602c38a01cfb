package contract

import (
	"fmt"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Shared steps of the checks. Each fails the check with the call and the
// answer when Ironic does not answer as expected.

// enroll makes an "available", powered-off node of the kind in this check's
// resource class (the harness path: POST at 1.10, PATCH at 1.78, power off;
// pinned by node.create-available-1.10) and returns its UUID.
func (c *C) enroll(kind ironictest.Kind) string {
	return c.Env.EnrollNode(c.T, ironictest.NodeSpec{Name: c.name(), ResourceClass: c.rc, Kind: kind})
}

// nodePath is /v1/nodes/<ident>.
func nodePath(ident string) string { return "/v1/nodes/" + ident }

// node reads a node at 1.78.
func (c *C) node(id string) map[string]any {
	return c.obj(c.status(c.get(nodePath(id)), 200))
}

// waitState polls the node until its provision_state is state. For a
// resting state it also waits until the conductor has let go of the node.
// (ironictest's WaitProvisionState does the same; this one polls slower,
// since some 40 checks share one real Ironic, and reports the states seen.)
// NOTE: a state shows before the conductor lets go of the node: the first
// read of "active", "wait call-back" or "deploy failed" can still carry
// reservation "localhost", and an action then gets NodeLocked (§11).
func (c *C) waitState(id, state string, timeout time.Duration) map[string]any {
	var last map[string]any
	var seen []string
	transitional := state == "deploying" || state == "deleting"
	ok := eventually(timeout, c.pollInterval(), func() bool {
		last = c.node(id)
		ps := fmt.Sprint(last["provision_state"])
		if len(seen) == 0 || seen[len(seen)-1] != ps {
			seen = append(seen, ps)
		}
		return ps == state && (transitional || last["reservation"] == nil)
	})
	if !ok {
		c.failf("node %s: want provision_state %q (unlocked) within %s; states seen %v, last target %v, reservation %v, last_error %v",
			id, state, timeout, seen, last["target_provision_state"], last["reservation"], last["last_error"])
	}
	return last
}

// deployTimeout is how long a Fast deploy or an undeploy may take.
func (c *C) deployTimeout() time.Duration {
	return 15*time.Second + 4*c.Env.DeployDelay
}

// reserve patches a fresh instance_uuid onto the node and returns it.
func (c *C) reserve(id string) string {
	inst := newUUID()
	r := c.status(c.patch(nodePath(id), ops(op("add", "/instance_uuid", inst))), 200)
	c.eq("instance_uuid after reserve", c.obj(r)["instance_uuid"], inst)
	return inst
}

// instanceInfo is what ingot writes before a deploy (docs/ironic.md §6).
func instanceInfo() map[string]any {
	return map[string]any{
		"image_source":   "http://127.0.0.1:1/img.qcow2",
		"root_gb":        "10",
		"image_checksum": "abc",
		"capabilities":   map[string]any{"boot_mode": "uefi"},
	}
}

// configDrive is a JSON config drive (accepted at ≥ 1.56).
func configDrive(inst string) map[string]any {
	return map[string]any{
		"meta_data": map[string]any{"uuid": inst, "hostname": "ct"},
		"user_data": "#cloud-config\n",
	}
}

// startDeploy reserves the node, writes instance_info and asks for
// "active" with a JSON config drive (202); returns the instance UUID.
func (c *C) startDeploy(id string) string {
	inst := c.reserve(id)
	c.status(c.patch(nodePath(id), ops(op("add", "/instance_info", instanceInfo()))), 200)
	r := c.provision(id, map[string]any{"target": "active", "configdrive": configDrive(inst)})
	c.accepted(r, id)
	return inst
}

// provision sends PUT /states/provision.
func (c *C) provision(id string, body map[string]any) *resp {
	return c.put(nodePath(id)+"/states/provision", body)
}

// accepted checks a 202 of a state change: empty body and a Location
// pointing at the node's states (docs/ironic.md §2).
func (c *C) accepted(r *resp, id string) {
	c.status(r, 202)
	if len(r.body) != 0 {
		c.failf("%s: want an empty body", r)
	}
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v1/nodes/"+id+"/states") {
		c.failf("%s: Location %q, want …/v1/nodes/%s/states", r, loc, id)
	}
}

// emptyAccepted checks a 202 with an empty body (maintenance has no Location).
func (c *C) emptyAccepted(r *resp) {
	c.status(r, 202)
	if len(r.body) != 0 {
		c.failf("%s: want an empty body", r)
	}
}

// pollInterval: the real Ironic serves one request at a time, and 30
// checks polling it every 50 ms would saturate it.
func (c *C) pollInterval() time.Duration {
	if c.Env.Real {
		return 200 * time.Millisecond
	}
	return 20 * time.Millisecond
}

// provisionRetry sends a provision target, retrying while the node is
// locked (a conductor can hold the lock briefly after a state is visible,
// docs/ironic.md §11), and requires a 202.
func (c *C) provisionRetry(id, target string) {
	var r *resp
	eventually(10*time.Second, 100*time.Millisecond, func() bool {
		r = c.provision(id, map[string]any{"target": target})
		return !isLocked(r)
	})
	c.accepted(r, id)
}

// isLocked tells a NodeLocked 409 from other answers.
func isLocked(r *resp) bool {
	return r.status == 409 && strings.Contains(string(r.body), "is locked by host")
}

// lockedText is NodeLocked's faultstring (docs/ironic.md §7).
func lockedText(id string) string {
	return "Node " + id + " is locked by host localhost, please retry after the current operation is completed."
}

// transitionText is the 409 of a PATCH during a state transition.
func transitionText(id string) string {
	return "Node " + id + " can not be updated while a state transition is in progress."
}

// associatedText is NodeAssociated's faultstring.
func associatedText(id, inst string) string {
	return "Node " + id + " is associated with instance " + inst + "."
}

// notFoundText is the 404 faultstring for a node.
func notFoundText(ident string) string { return "Node " + ident + " could not be found." }

// invalidStateText is the 400 of an action refused in the current state.
func invalidStateText(action, id, state string) string {
	return fmt.Sprintf("The requested action %q can not be performed on node %q while it is in state %q.", action, id, state)
}

// maintenance turns maintenance on (with a reason) or off; 202 either way.
func (c *C) maintenance(id string, on bool) {
	path := nodePath(id) + "/maintenance"
	if on {
		c.emptyAccepted(c.put(path, map[string]any{"reason": "contract"}))
		return
	}
	c.emptyAccepted(c.del(path))
}

// gone checks that the node answers 404 and that no list shows its instance.
func (c *C) gone(id, inst string) {
	c.clientFault(c.get(nodePath(id)), 404, notFoundText(id))
	if inst == "" {
		return
	}
	for _, path := range []string{
		"/v1/nodes?instance_uuid=" + inst,
		"/v1/nodes?instance_uuid=" + inst + "&fields=uuid,provision_state",
		"/v1/nodes/detail?instance_uuid=" + inst,
	} {
		nodes, _ := c.nodesOf(c.get(path))
		if len(nodes) != 0 {
			c.failf("GET %s after the node was deleted: %d nodes, want none", path, len(nodes))
		}
	}
}
