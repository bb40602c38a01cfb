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

// SecurityGroup is a Neutron security group with its rules.
type SecurityGroup struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Description string              `json:"description"`
	ProjectID   string              `json:"project_id"`
	Rules       []SecurityGroupRule `json:"security_group_rules"`
}

// SecurityGroupRule is one rule; the port range and protocol are null for
// "any" (nil here).
type SecurityGroupRule struct {
	ID              string  `json:"id"`
	Direction       string  `json:"direction"`
	EtherType       string  `json:"ethertype"`
	Protocol        *string `json:"protocol"`
	PortRangeMin    *int    `json:"port_range_min"`
	PortRangeMax    *int    `json:"port_range_max"`
	RemoteIPPrefix  *string `json:"remote_ip_prefix"`
	RemoteGroupID   *string `json:"remote_group_id"`
	SecurityGroupID string  `json:"security_group_id"`
}

// ListSecurityGroups lists the groups of projectID (all the token sees
// when empty). Neutron makes a project's "default" group on first use.
func (c *Client) ListSecurityGroups(ctx context.Context, projectID string) ([]SecurityGroup, error) {
	u := c.sc.ServiceURL("security-groups")
	if projectID != "" {
		u += "?" + url.Values{"project_id": {projectID}}.Encode()
	}
	var out struct {
		Groups []SecurityGroup `json:"security_groups"`
	}
	err := c.get(ctx, "list security groups", u, &out)
	return out.Groups, err
}

// GetSecurityGroup reads one group (ErrSecurityGroupNotFound when none).
func (c *Client) GetSecurityGroup(ctx context.Context, id string) (SecurityGroup, error) {
	var out struct {
		Group SecurityGroup `json:"security_group"`
	}
	err := c.get(ctx, "get security group "+id, c.sc.ServiceURL("security-groups", id), &out)
	return out.Group, err
}
