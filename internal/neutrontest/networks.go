package neutrontest

import (
	"net/http"
	"testing"

	"github.com/ingot-dev/ingot/internal/testproc"

	"github.com/ingot-dev/ingot/internal/neutron"
)

// NetworkOptions describes a provider network made by the admin.
type NetworkOptions struct {
	Name string
	// Physnet defaults to PhysicalNetwork; one flat network per physical
	// network (a second one is 409 FlatNetworkInUse), so tests that share a
	// Neutron give each flat network its own name.
	Physnet string
	// VLAN, when set, makes a vlan segment (100–199 on PhysicalNetwork)
	// instead of a flat one.
	VLAN int
	// Shared lets every project use it; ProjectID makes a project own it.
	Shared    bool
	ProjectID string
	MTU       int
}

// Network is what the helpers return of a network.
type Network struct {
	ID   string
	Name string
	MTU  int
}

// CreateNetwork creates a provider network as the admin (a network asked
// for without provider attributes is a tenant VLAN on PhysicalNetwork).
func (e *Env) CreateNetwork(t testing.TB, o NetworkOptions) Network {
	t.Helper()
	body := map[string]any{"name": o.Name, "shared": o.Shared}
	if o.VLAN != 0 {
		body["provider:network_type"] = "vlan"
		body["provider:physical_network"] = PhysicalNetwork
		body["provider:segmentation_id"] = o.VLAN
	} else {
		body["provider:network_type"] = "flat"
		body["provider:physical_network"] = o.Physnet
		if o.Physnet == "" {
			body["provider:physical_network"] = PhysicalNetwork
		}
	}
	if o.ProjectID != "" {
		body["project_id"] = o.ProjectID
	}
	if o.MTU != 0 {
		body["mtu"] = o.MTU
	}
	var out struct {
		Network struct {
			ID, Name string
			MTU      int `json:"mtu"`
		} `json:"network"`
	}
	if err := testproc.Call(e.hc, e.AdminToken(t), http.MethodPost, e.URL+"/v2.0/networks",
		map[string]any{"network": body}, &out); err != nil {
		t.Fatalf("neutrontest: create network: %v", err)
	}
	return Network{ID: out.Network.ID, Name: out.Network.Name, MTU: out.Network.MTU}
}

// Route and Pool are the adapter's: a subnet's host route and allocation pool.
type (
	Route = neutron.Route
	Pool  = neutron.Pool
)

// SubnetOptions describes a subnet made by the admin.
type SubnetOptions struct {
	NetworkID  string
	Name       string
	CIDR       string // e.g. 192.0.2.0/24 or 2001:db8::/64
	IPVersion  int    // default 4
	Gateway    string // empty: Neutron's default (the first address)
	DNS        []string
	HostRoutes []Route
	Pools      []Pool
	// IPv6 modes (slaac, dhcpv6-stateful, dhcpv6-stateless).
	IPv6AddressMode, IPv6RAMode string
	ProjectID                   string
}

// CreateSubnet creates a subnet as the admin and returns its id.
func (e *Env) CreateSubnet(t testing.TB, o SubnetOptions) string {
	t.Helper()
	body := map[string]any{"network_id": o.NetworkID, "cidr": o.CIDR, "ip_version": 4, "name": o.Name}
	if o.IPVersion != 0 {
		body["ip_version"] = o.IPVersion
	}
	if o.Gateway != "" {
		body["gateway_ip"] = o.Gateway
	}
	if o.DNS != nil {
		body["dns_nameservers"] = o.DNS
	}
	if o.HostRoutes != nil {
		body["host_routes"] = o.HostRoutes
	}
	if o.Pools != nil {
		body["allocation_pools"] = o.Pools
	}
	if o.IPv6AddressMode != "" {
		body["ipv6_address_mode"] = o.IPv6AddressMode
	}
	if o.IPv6RAMode != "" {
		body["ipv6_ra_mode"] = o.IPv6RAMode
	}
	if o.ProjectID != "" {
		body["project_id"] = o.ProjectID
	}
	var out struct {
		Subnet struct{ ID string } `json:"subnet"`
	}
	if err := testproc.Call(e.hc, e.AdminToken(t), http.MethodPost, e.URL+"/v2.0/subnets",
		map[string]any{"subnet": body}, &out); err != nil {
		t.Fatalf("neutrontest: create subnet: %v", err)
	}
	return out.Subnet.ID
}

// PortCount counts the ports matching query (e.g. "device_id=X"), as the
// admin: what a leak check compares before and after.
func (e *Env) PortCount(t testing.TB, query string) int {
	t.Helper()
	var out struct {
		Ports []struct{ ID string } `json:"ports"`
	}
	if err := testproc.Call(e.hc, e.AdminToken(t), http.MethodGet, e.URL+"/v2.0/ports?"+query, nil, &out); err != nil {
		t.Fatalf("neutrontest: list ports: %v", err)
	}
	return len(out.Ports)
}
