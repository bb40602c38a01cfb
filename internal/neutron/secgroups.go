package neutron

import (
	"context"
	"net/url"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/servicecatalog"
)

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

// CreateSecurityGroup makes a group in the token's project.
func (c *Client) CreateSecurityGroup(ctx context.Context, name, description string) (SecurityGroup, error) {
	var out struct {
		Group SecurityGroup `json:"security_group"`
	}
	err := c.post(ctx, "create security group "+name, c.sc.ServiceURL("security-groups"),
		map[string]any{"security_group": map[string]string{"name": name, "description": description}}, &out)
	return out.Group, err
}

// UpdateSecurityGroup renames a group and sets its description.
func (c *Client) UpdateSecurityGroup(ctx context.Context, id, name, description string) (SecurityGroup, error) {
	var out struct {
		Group SecurityGroup `json:"security_group"`
	}
	err := c.put(ctx, "update security group "+id, c.sc.ServiceURL("security-groups", id),
		map[string]any{"security_group": map[string]string{"name": name, "description": description}}, &out)
	return out.Group, err
}

// DeleteSecurityGroup deletes a group (ErrConflict while a port uses it).
func (c *Client) DeleteSecurityGroup(ctx context.Context, id string) error {
	return c.delete(ctx, "delete security group "+id, c.sc.ServiceURL("security-groups", id))
}

// CreateSecurityGroupRule adds a rule to rule.SecurityGroupID.
func (c *Client) CreateSecurityGroupRule(ctx context.Context, rule SecurityGroupRule) (SecurityGroupRule, error) {
	var out struct {
		Rule SecurityGroupRule `json:"security_group_rule"`
	}
	body := map[string]any{"direction": rule.Direction, "ethertype": rule.EtherType, "security_group_id": rule.SecurityGroupID,
		"protocol": rule.Protocol, "port_range_min": rule.PortRangeMin, "port_range_max": rule.PortRangeMax,
		"remote_ip_prefix": rule.RemoteIPPrefix, "remote_group_id": rule.RemoteGroupID}
	err := c.post(ctx, "create security group rule", c.sc.ServiceURL("security-group-rules"),
		map[string]any{"security_group_rule": body}, &out)
	return out.Rule, err
}

// GetSecurityGroupRule reads a rule (ErrNotFound when none).
func (c *Client) GetSecurityGroupRule(ctx context.Context, id string) (SecurityGroupRule, error) {
	var out struct {
		Rule SecurityGroupRule `json:"security_group_rule"`
	}
	err := c.get(ctx, "get security group rule "+id, c.sc.ServiceURL("security-group-rules", id), &out)
	return out.Rule, err
}

// DeleteSecurityGroupRule deletes a rule.
func (c *Client) DeleteSecurityGroupRule(ctx context.Context, id string) error {
	return c.delete(ctx, "delete security group rule "+id, c.sc.ServiceURL("security-group-rules", id))
}

// SetPortSecurityGroups replaces a port's groups (ErrBadRequest when the
// port has port security off).
func (c *Client) SetPortSecurityGroups(ctx context.Context, portID string, groups []string) (Port, error) {
	if groups == nil {
		groups = []string{}
	}
	return c.updatePort(ctx, "set security groups of port "+portID, portID, map[string]any{"security_groups": groups})
}

// AsUser makes clients that call Neutron with each caller's own token, so
// that Neutron applies its policy for the caller's project, as Nova's
// security group proxy does. Safe for concurrent use.
type AsUser struct {
	sc      *gophercloud.ServiceClient
	timeout time.Duration
}

// NewAsUser wraps Neutron's client from the catalog; its own token is
// never sent. timeout <= 0 means DefaultTimeout.
func NewAsUser(sc *gophercloud.ServiceClient, timeout time.Duration) *AsUser {
	return &AsUser{sc: sc, timeout: timeout}
}

// With is a client that sends token.
func (u *AsUser) With(token string) *Client {
	return New(servicecatalog.WithToken(u.sc, token), u.timeout)
}
