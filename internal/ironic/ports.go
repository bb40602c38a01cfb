package ironic

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/ingot-dev/ingot/internal/portbind"
)

// vifKey is where a network interface that stores VIFs (flat, neutron)
// records the one attached to a port or portgroup.
const vifKey = "tenant_vif_port_id"

// portFields is what the networking step reads of a node's ports;
// inventoryPortFields what the scheduler reads of every port.
var (
	portFields = strings.Join([]string{"uuid", "address", "node_uuid", "pxe_enabled", "physical_network",
		"portgroup_uuid", "internal_info"}, ",")
	inventoryPortFields = "uuid,node_uuid,pxe_enabled,physical_network,portgroup_uuid"
	portgroupFields     = "uuid,address,node_uuid,mode,properties,internal_info"
)

type rawPort struct {
	UUID            string         `json:"uuid"`
	Address         string         `json:"address"`
	NodeUUID        string         `json:"node_uuid"`
	PXEEnabled      *bool          `json:"pxe_enabled"`
	PhysicalNetwork string         `json:"physical_network"`
	PortgroupUUID   string         `json:"portgroup_uuid"`
	InternalInfo    map[string]any `json:"internal_info"`
}

func (r rawPort) port() portbind.Port {
	vif, _ := r.InternalInfo[vifKey].(string)
	return portbind.Port{UUID: r.UUID, MAC: strings.ToLower(r.Address), Node: r.NodeUUID,
		PXE: r.PXEEnabled == nil || *r.PXEEnabled, Physnet: r.PhysicalNetwork, Portgroup: r.PortgroupUUID, VIF: vif}
}

type rawPortgroup struct {
	UUID         string         `json:"uuid"`
	Address      string         `json:"address"`
	NodeUUID     string         `json:"node_uuid"`
	Mode         string         `json:"mode"`
	Properties   map[string]any `json:"properties"`
	InternalInfo map[string]any `json:"internal_info"`
}

// NodePorts returns the node's Ironic ports and, when some are in a
// portgroup, its portgroups: one call, two for a node with a bond.
func (c *Client) NodePorts(ctx context.Context, nodeID string) (portbind.Inventory, error) {
	q := url.Values{}
	q.Set("node", nodeID)
	q.Set("fields", portFields)
	raws, err := listAll[rawPort](ctx, c, "port.list", "ports", q)
	if err != nil {
		return portbind.Inventory{}, err
	}
	inv := portbind.Inventory{}
	grouped := false
	for _, r := range raws {
		p := r.port()
		grouped = grouped || p.Portgroup != ""
		inv.Ports = append(inv.Ports, p)
	}
	if !grouped {
		return inv, nil
	}
	q = url.Values{}
	q.Set("node", nodeID)
	q.Set("fields", portgroupFields)
	pgs, err := listAll[rawPortgroup](ctx, c, "portgroup.list", "portgroups", q)
	if err != nil {
		return portbind.Inventory{}, err
	}
	for _, r := range pgs {
		vif, _ := r.InternalInfo[vifKey].(string)
		inv.Portgroups = append(inv.Portgroups, portbind.Portgroup{UUID: r.UUID, MAC: strings.ToLower(r.Address),
			Node: r.NodeUUID, Mode: r.Mode, Properties: r.Properties, VIF: vif})
	}
	return inv, nil
}

// ListPorts returns every Ironic port (without MAC or VIF): the scheduler
// counts each node's free attachments from it. ⌈P/PageSize⌉ calls.
func (c *Client) ListPorts(ctx context.Context) ([]portbind.Port, error) {
	q := url.Values{}
	q.Set("fields", inventoryPortFields)
	raws, err := listAll[rawPort](ctx, c, "port.list", "ports", q)
	if err != nil {
		return nil, err
	}
	out := make([]portbind.Port, 0, len(raws))
	for _, r := range raws {
		out = append(out, r.port())
	}
	return out, nil
}

// AttachVIFTo attaches a VIF to the node on the given Ironic port or
// portgroup (microversion >= 1.67), so that an Ironic whose network
// interface stores VIFs puts it on the NIC whose MAC the port took (a zero
// target lets Ironic choose). Idempotent like AttachVIF.
func (c *Client) AttachVIFTo(ctx context.Context, nodeID, vifID string, to portbind.Target) error {
	opts := nodes.VirtualInterfaceOpts{ID: vifID, PortUUID: to.Port, PortgroupUUID: to.Portgroup}
	return c.do(ctx, "vif.attach", fmt.Sprintf("POST node %s vif %s", nodeID, vifID), func(ctx context.Context) error {
		err := nodes.AttachVirtualInterface(ctx, c.sc, nodeID, opts).ExtractErr()
		// NOTE: "Unable to attach VIF because VIF <v> is already attached to
		// Ironic Port <p>" (409, network_interface=flat).
		if status, fault := httpFault(err); status == http.StatusConflict && strings.Contains(fault, "already attached") {
			return nil
		}
		return err
	})
}
