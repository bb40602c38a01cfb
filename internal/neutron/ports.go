package neutron

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Port is a Neutron port as ingot reads it. Binding fields are null (empty)
// for a member's token: read them with the service client.
type Port struct {
	ID             string    `json:"id"`
	NetworkID      string    `json:"network_id"`
	Name           string    `json:"name"`
	ProjectID      string    `json:"project_id"`
	DeviceID       string    `json:"device_id"`
	DeviceOwner    string    `json:"device_owner"`
	Status         string    `json:"status"`
	MACAddress     string    `json:"mac_address"`
	FixedIPs       []FixedIP `json:"fixed_ips"`
	SecurityGroups []string  `json:"security_groups"`
	HostID         string    `json:"binding:host_id"`
	VNICType       string    `json:"binding:vnic_type"`
	VIFType        string    `json:"binding:vif_type"`
	Profile        Profile   `json:"binding:profile"`
	CreatedAt      string    `json:"created_at"`
}

// FixedIP is one address of a port.
type FixedIP struct {
	SubnetID  string `json:"subnet_id,omitempty"`
	IPAddress string `json:"ip_address,omitempty"`
}

// Profile is binding:profile, e.g. {"local_link_information": [...]}.
type Profile map[string]any

// VIF types Neutron reports for a port's binding.
const (
	VIFUnbound       = "unbound"
	VIFBindingFailed = "binding_failed"
)

// VNICBaremetal is the vnic_type of a bare-metal port.
const VNICBaremetal = "baremetal"

// Bound reports whether a mechanism driver bound the port.
func (p Port) Bound() bool {
	return p.VIFType != "" && p.VIFType != VIFUnbound && p.VIFType != VIFBindingFailed
}

// PortSpec is a port ingot creates for a server, as Nova's allocation does:
// device_id = the server, device_owner = compute:<az>, no binding (Nova's
// Ironic driver never passes binding:host_id at creation: with Ironic's
// neutron interface that would put the tenant network on the switch port
// during provisioning; with flat, Ironic binds it and sets the MAC itself).
type PortSpec struct {
	NetworkID string
	ServerID  string
	// DeviceOwner, e.g. "compute:nova".
	DeviceOwner string
	// Name marks the port as ingot's (e.g. "ingot-<server>-<nic>"): with
	// ServerID it is how EnsurePort finds the port again after a crash.
	Name string
	// FixedIP, when set, asks for that address on the network.
	FixedIP string
	// SecurityGroups by id; nil leaves Neutron's default group.
	SecurityGroups []string
	// ProjectID makes a port owned by that project (service token only).
	ProjectID string
}

type portBody struct {
	Port Port `json:"port"`
}

type portsBody struct {
	Ports []Port `json:"ports"`
}

// EnsurePort returns the port of spec.ServerID named spec.Name on
// spec.NetworkID, creating it when there is none; created says which.
// Idempotent: a retry after a crash between Neutron's create and ingot's
// record finds the first port instead of making a second.
func (c *Client) EnsurePort(ctx context.Context, spec PortSpec) (p Port, created bool, err error) {
	if spec.NetworkID == "" || spec.ServerID == "" || spec.Name == "" {
		return Port{}, false, &Error{Kind: ErrBadRequest, Op: "ensure port", Message: "network, server and name are required"}
	}
	found, err := c.ListPorts(ctx, PortFilter{DeviceID: spec.ServerID, NetworkID: spec.NetworkID, Name: spec.Name})
	if err != nil {
		return Port{}, false, err
	}
	if len(found) > 0 {
		return found[0], false, nil
	}
	body := map[string]any{"network_id": spec.NetworkID, "device_id": spec.ServerID, "name": spec.Name,
		"admin_state_up": true}
	if spec.DeviceOwner != "" {
		body["device_owner"] = spec.DeviceOwner
	}
	if spec.FixedIP != "" {
		body["fixed_ips"] = []FixedIP{{IPAddress: spec.FixedIP}}
	}
	if spec.SecurityGroups != nil {
		body["security_groups"] = spec.SecurityGroups
	}
	if spec.ProjectID != "" {
		body["project_id"] = spec.ProjectID
	}
	var out portBody
	err = c.post(ctx, "create port on network "+spec.NetworkID, c.sc.ServiceURL("ports"), map[string]any{"port": body}, &out)
	return out.Port, err == nil, err
}

// PortFilter selects ports; empty fields do not filter.
type PortFilter struct {
	DeviceID  string
	NetworkID string
	Name      string
	ProjectID string
}

// ListPorts lists the ports matching f (those the token may see), oldest
// first (by created_at, then id).
func (c *Client) ListPorts(ctx context.Context, f PortFilter) ([]Port, error) {
	q := url.Values{}
	for k, v := range map[string]string{"device_id": f.DeviceID, "network_id": f.NetworkID, "name": f.Name, "project_id": f.ProjectID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out portsBody
	err := c.get(ctx, "list ports", c.sc.ServiceURL("ports")+"?"+q.Encode(), &out)
	// Neutron cannot sort on created_at (whole seconds, RFC 3339: its text
	// sorts as time); the id breaks ties, so EnsurePort picks the same one.
	slices.SortFunc(out.Ports, func(a, b Port) int {
		return cmp.Or(strings.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out.Ports, err
}

// GetPort reads one port (ErrPortNotFound when there is none).
func (c *Client) GetPort(ctx context.Context, id string) (Port, error) {
	var out portBody
	err := c.get(ctx, "get port "+id, c.sc.ServiceURL("ports", id), &out)
	return out.Port, err
}

// Binding is what a port is bound with: the host (an Ironic node's UUID),
// vnic_type (default baremetal), the profile (local_link_information from
// the Ironic port for its neutron interface; flat sends none) and,
// optionally, the MAC of the Ironic port.
type Binding struct {
	HostID     string
	VNICType   string
	Profile    Profile
	MACAddress string
}

// BindPort binds the port (service token: binding:* is admin-only) and
// returns it; ErrBindingFailed when Neutron kept it but no mechanism driver
// bound it, ErrPortBound when the MAC of a bound port would change.
// Idempotent.
func (c *Client) BindPort(ctx context.Context, id string, b Binding) (Port, error) {
	vnic := b.VNICType
	if vnic == "" {
		vnic = VNICBaremetal
	}
	profile := b.Profile
	if profile == nil {
		profile = Profile{}
	}
	body := map[string]any{"binding:host_id": b.HostID, "binding:vnic_type": vnic, "binding:profile": profile}
	if b.MACAddress != "" {
		body["mac_address"] = b.MACAddress
	}
	p, err := c.updatePort(ctx, "bind port "+id, id, body)
	if err == nil && p.VIFType == VIFBindingFailed {
		return p, &Error{Kind: ErrBindingFailed, Op: "bind port " + id + " to host " + b.HostID,
			Message: "no mechanism driver bound the port (binding:vif_type binding_failed)"}
	}
	return p, err
}

// UnbindPort clears the binding as Ironic does on teardown (host_id "",
// profile {}); the port keeps its device. Idempotent.
func (c *Client) UnbindPort(ctx context.Context, id string) (Port, error) {
	return c.updatePort(ctx, "unbind port "+id, id, map[string]any{"binding:host_id": "", "binding:profile": Profile{}})
}

// ClaimPort makes a user's pre-created port the server's (device_id,
// device_owner), as Nova does with a requested port; ErrPortInUse when
// another device holds it. Idempotent for the same server.
func (c *Client) ClaimPort(ctx context.Context, id, serverID, deviceOwner string) (Port, error) {
	p, err := c.GetPort(ctx, id)
	if err != nil {
		return Port{}, err
	}
	if p.DeviceID != "" && p.DeviceID != serverID {
		return p, &Error{Kind: ErrPortInUse, Op: "claim port " + id, Type: "PortInUse",
			Message: fmt.Sprintf("port %s is in use by device %s", id, p.DeviceID)}
	}
	if p.DeviceID == serverID && p.DeviceOwner == deviceOwner {
		return p, nil
	}
	return c.updatePort(ctx, "claim port "+id, id, map[string]any{"device_id": serverID, "device_owner": deviceOwner})
}

// ReleasePort gives a user's pre-created port back when its server goes, as
// Nova does: unbound, device_id and device_owner cleared, never deleted.
// A port already gone is released. Idempotent.
func (c *Client) ReleasePort(ctx context.Context, id string) error {
	_, err := c.updatePort(ctx, "release port "+id, id, map[string]any{"device_id": "", "device_owner": "",
		"binding:host_id": "", "binding:profile": Profile{}})
	if errors.Is(err, ErrPortNotFound) {
		return nil
	}
	return err
}

// DeletePort deletes a port ingot created; a port already gone is deleted.
// Idempotent.
func (c *Client) DeletePort(ctx context.Context, id string) error {
	err := c.delete(ctx, "delete port "+id, c.sc.ServiceURL("ports", id))
	if errors.Is(err, ErrPortNotFound) {
		return nil
	}
	return err
}

func (c *Client) updatePort(ctx context.Context, op, id string, body map[string]any) (Port, error) {
	var out portBody
	err := c.put(ctx, op, c.sc.ServiceURL("ports", id), map[string]any{"port": body}, &out)
	return out.Port, err
}

// HasAddress reports whether the port holds ip.
func (p Port) HasAddress(ip string) bool {
	return slices.ContainsFunc(p.FixedIPs, func(f FixedIP) bool { return strings.EqualFold(f.IPAddress, ip) })
}
