package ironic

import (
	"context"
	"fmt"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
)

// NOTE: volume connectors and targets are not in gophercloud v2.16.0; these
// are raw calls on the same ServiceClient (docs/ironic.md §11). Creation is a
// plain DB insert in Ironic, allowed in any state; deleting a target needs the
// node's power_state to be exactly "power off", otherwise ErrInvalidState
// (docs/ironic.md §5).

// VolumeConnector is a node's initiator identity (e.g. an iSCSI IQN).
type VolumeConnector struct {
	UUID        string `json:"uuid,omitempty"`
	NodeID      string `json:"node_uuid"`
	Type        string `json:"type"`
	ConnectorID string `json:"connector_id"`
}

// VolumeTarget is a volume the node boots from or attaches.
type VolumeTarget struct {
	UUID       string         `json:"uuid,omitempty"`
	NodeID     string         `json:"node_uuid"`
	VolumeType string         `json:"volume_type"`
	VolumeID   string         `json:"volume_id"`
	BootIndex  int            `json:"boot_index"`
	Properties map[string]any `json:"properties"`
}

// CreateVolumeConnector creates a connector and returns its UUID. Not
// idempotent: record the intent first, then list to find an earlier one.
func (c *Client) CreateVolumeConnector(ctx context.Context, nodeID, connType, connectorID string) (string, error) {
	req := VolumeConnector{NodeID: nodeID, Type: connType, ConnectorID: connectorID}
	var resp VolumeConnector
	action := fmt.Sprintf("POST volume connector %s for node %s", connectorID, nodeID)
	err := c.do(ctx, "volume_connector.create", action, func(ctx context.Context) error {
		_, err := c.sc.Post(ctx, c.sc.ServiceURL("volume", "connectors"), req, &resp,
			&gophercloud.RequestOpts{OkCodes: []int{201}})
		return err
	})
	return resp.UUID, err
}

// ListVolumeConnectors returns the node's connectors.
func (c *Client) ListVolumeConnectors(ctx context.Context, nodeID string) ([]VolumeConnector, error) {
	q := url.Values{"node": {nodeID}, "detail": {"True"}}
	return listAll[VolumeConnector](ctx, c, "volume_connector.list", "volume/connectors", q)
}

// DeleteVolumeConnector deletes a connector; a missing one is ErrNotFound.
func (c *Client) DeleteVolumeConnector(ctx context.Context, uuid string) error {
	return c.do(ctx, "volume_connector.delete", "DELETE volume connector "+uuid, func(ctx context.Context) error {
		_, err := c.sc.Delete(ctx, c.sc.ServiceURL("volume", "connectors", url.PathEscape(uuid)),
			&gophercloud.RequestOpts{OkCodes: []int{204}})
		return err
	})
}

// CreateVolumeTarget creates a target and returns its UUID. t.UUID is
// ignored. A second target with the same boot index on the node is
// ErrInvalid (409 "already exists").
func (c *Client) CreateVolumeTarget(ctx context.Context, t VolumeTarget) (string, error) {
	t.UUID = ""
	if t.Properties == nil {
		t.Properties = map[string]any{}
	}
	var resp VolumeTarget
	action := fmt.Sprintf("POST volume target %s for node %s", t.VolumeID, t.NodeID)
	err := c.do(ctx, "volume_target.create", action, func(ctx context.Context) error {
		_, err := c.sc.Post(ctx, c.sc.ServiceURL("volume", "targets"), t, &resp,
			&gophercloud.RequestOpts{OkCodes: []int{201}})
		return err
	})
	return resp.UUID, err
}

// ListVolumeTargets returns the node's targets.
func (c *Client) ListVolumeTargets(ctx context.Context, nodeID string) ([]VolumeTarget, error) {
	q := url.Values{"node": {nodeID}, "detail": {"True"}}
	return listAll[VolumeTarget](ctx, c, "volume_target.list", "volume/targets", q)
}

// DeleteVolumeTarget deletes a target; a missing one is ErrNotFound, a node
// that is not powered off ErrInvalidState (call SetPowerOff and wait).
func (c *Client) DeleteVolumeTarget(ctx context.Context, uuid string) error {
	return c.do(ctx, "volume_target.delete", "DELETE volume target "+uuid, func(ctx context.Context) error {
		_, err := c.sc.Delete(ctx, c.sc.ServiceURL("volume", "targets", url.PathEscape(uuid)),
			&gophercloud.RequestOpts{OkCodes: []int{204}})
		return err
	})
}
