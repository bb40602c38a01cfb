package neutron

import (
	"context"
	"net/url"
)

// Network is a Neutron network with its provider attributes (those are
// admin-only: empty with a member's token).
type Network struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	ProjectID       string   `json:"project_id"`
	Status          string   `json:"status"`
	Shared          bool     `json:"shared"`
	External        bool     `json:"router:external"`
	MTU             int      `json:"mtu"`
	Subnets         []string `json:"subnets"`
	NetworkType     string   `json:"provider:network_type"`
	PhysicalNetwork string   `json:"provider:physical_network"`
	SegmentationID  int      `json:"provider:segmentation_id"`
}

// GetNetwork reads a network (ErrNetworkNotFound when the token sees none).
func (c *Client) GetNetwork(ctx context.Context, id string) (Network, error) {
	var out struct {
		Network Network `json:"network"`
	}
	err := c.get(ctx, "get network "+id, c.sc.ServiceURL("networks", id), &out)
	return out.Network, err
}

// ListNetworks lists the networks the token sees (its project's, shared
// ones and, for a service token, all).
func (c *Client) ListNetworks(ctx context.Context) ([]Network, error) {
	var out struct {
		Networks []Network `json:"networks"`
	}
	err := c.get(ctx, "list networks", c.sc.ServiceURL("networks"), &out)
	return out.Networks, err
}

// Subnet is what network_data.json is made of.
type Subnet struct {
	ID              string   `json:"id"`
	NetworkID       string   `json:"network_id"`
	Name            string   `json:"name"`
	IPVersion       int      `json:"ip_version"`
	CIDR            string   `json:"cidr"`
	GatewayIP       string   `json:"gateway_ip"`
	DNSNameservers  []string `json:"dns_nameservers"`
	HostRoutes      []Route  `json:"host_routes"`
	AllocationPools []Pool   `json:"allocation_pools"`
	EnableDHCP      bool     `json:"enable_dhcp"`
	IPv6AddressMode string   `json:"ipv6_address_mode"`
	IPv6RAMode      string   `json:"ipv6_ra_mode"`
}

// Route is a subnet's host route.
type Route struct {
	Destination string `json:"destination"`
	NextHop     string `json:"nexthop"`
}

// Pool is a subnet's allocation pool.
type Pool struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// ListSubnets lists a network's subnets.
func (c *Client) ListSubnets(ctx context.Context, networkID string) ([]Subnet, error) {
	var out struct {
		Subnets []Subnet `json:"subnets"`
	}
	err := c.get(ctx, "list subnets of network "+networkID,
		c.sc.ServiceURL("subnets")+"?"+url.Values{"network_id": {networkID}}.Encode(), &out)
	return out.Subnets, err
}
