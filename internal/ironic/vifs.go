package ironic

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/ingot-dev/ingot/internal/portbind"
)

// AttachVIF attaches a VIF (Neutron port id) to the node, on a port of
// Ironic's choosing. Idempotent: a 409 "already attached" counts as
// success. With network_interface=noop Ironic accepts anything and stores
// nothing (docs/ironic.md §4).
func (c *Client) AttachVIF(ctx context.Context, nodeID, vifID string) error {
	return c.AttachVIFTo(ctx, nodeID, vifID, portbind.Target{})
}

// DetachVIF detaches a VIF from the node. A VIF that is not attached, or a
// node that does not exist, is ErrNotFound so that callers can treat it as
// already done.
func (c *Client) DetachVIF(ctx context.Context, nodeID, vifID string) error {
	action := fmt.Sprintf("DELETE node %s vif %s", nodeID, vifID)
	return c.do(ctx, "vif.detach", action, func(ctx context.Context) error {
		err := nodes.DetachVirtualInterface(ctx, c.sc, nodeID, vifID).ExtractErr()
		// NOTE: Ironic answers 400 "Unable to detach VIF <v> from node <n>
		// because it is not attached to it." (docs/ironic.md §4).
		if status, fault := httpFault(err); status == http.StatusBadRequest && strings.Contains(fault, "not attached") {
			return fmt.Errorf("%w: %s: HTTP %d: %s", ErrNotFound, action, status, fault)
		}
		return err
	})
}

// ListVIFs returns the ids of the VIFs attached to the node.
func (c *Client) ListVIFs(ctx context.Context, nodeID string) ([]string, error) {
	var vifs []nodes.VIF
	err := c.do(ctx, "vif.list", "GET node "+nodeID+" vifs", func(ctx context.Context) error {
		var err error
		vifs, err = nodes.ListVirtualInterfaces(ctx, c.sc, nodeID).Extract()
		return err
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(vifs))
	for _, v := range vifs {
		ids = append(ids, v.ID)
	}
	return ids, nil
}
