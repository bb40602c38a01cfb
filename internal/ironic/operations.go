package ironic

import (
	"context"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// Ironic power states as the API spells them.
const (
	PowerOn  = "power on"
	PowerOff = "power off"
)

// Rebuild redeploys a deployed node with req (provision target "rebuild"):
// instance_info merged as in Deploy, a new config drive (microversion ≥ 1.35
// for a config drive with a rebuild). Not idempotent at Ironic: while the
// node is deploying it is ErrNodeLocked or ErrInvalidState.
func (c *Client) Rebuild(ctx context.Context, nodeID string, req DeployRequest) error {
	return c.deploy(ctx, nodeID, nodes.TargetRebuild, req)
}

// Reboot asks Ironic to reboot the node: "soft rebooting" unless hard,
// "rebooting" then. A power interface that cannot soft-reboot refuses with
// ErrInvalid (the caller falls back to a hard reboot, as Nova does).
func (c *Client) Reboot(ctx context.Context, nodeID string, hard bool) error {
	target := nodes.SoftRebooting
	if hard {
		target = nodes.Rebooting
	}
	return c.power(ctx, nodeID, target)
}

// SetPowerOn asks Ironic to power the node on. Repeatable.
func (c *Client) SetPowerOn(ctx context.Context, nodeID string) error {
	return c.power(ctx, nodeID, nodes.PowerOn)
}

func (c *Client) power(ctx context.Context, nodeID string, target nodes.TargetPowerState) error {
	return c.do(ctx, "node.power", "PUT node "+nodeID+" power "+string(target), func(ctx context.Context) error {
		return nodes.ChangePowerState(ctx, c.sc, nodeID, nodes.PowerStateOpts{Target: target}).ExtractErr()
	})
}

// Rescue asks Ironic to boot the node into its rescue ramdisk with password
// (provision target "rescue"). A node whose rescue interface is "no-rescue"
// refuses it (ErrInvalid).
func (c *Client) Rescue(ctx context.Context, nodeID, password string) error {
	return c.provision(ctx, nodeID, nodes.ProvisionStateOpts{Target: nodes.TargetRescue, RescuePassword: password})
}

// Unrescue asks Ironic to take the node out of rescue (provision target "unrescue").
func (c *Client) Unrescue(ctx context.Context, nodeID string) error {
	return c.provision(ctx, nodeID, nodes.ProvisionStateOpts{Target: nodes.TargetUnrescue})
}

// NodeRescueInterface returns the node's rescue_interface ("no-rescue"
// refuses a rescue: docs/ironic.md §12). A missing node is ErrNotFound.
func (c *Client) NodeRescueInterface(ctx context.Context, nodeID string) (string, error) {
	var r struct {
		RescueInterface string `json:"rescue_interface"`
	}
	err := c.do(ctx, "node.get", "GET node "+nodeID+" rescue_interface", func(ctx context.Context) error {
		u := c.sc.ServiceURL("nodes", url.PathEscape(nodeID)) + "?fields=uuid,rescue_interface"
		_, err := c.sc.Get(ctx, u, &r, &gophercloud.RequestOpts{OkCodes: []int{200}})
		return err
	})
	return r.RescueInterface, err
}
