package store

import (
	"context"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Quota resources of server groups (per project, and members per group).
const (
	ResServerGroups       = "server_groups"
	ResServerGroupMembers = "server_group_members"
)

// Server group policies (Nova's, 2.64 names).
const (
	PolicyAffinity         = "affinity"
	PolicyAntiAffinity     = "anti-affinity"
	PolicySoftAffinity     = "soft-affinity"
	PolicySoftAntiAffinity = "soft-anti-affinity"
)

// ServerGroup is an os-server-groups group. Members are the live servers
// (not deleted, no delete requested) that were created into it.
type ServerGroup struct {
	ID        string
	Name      string
	ProjectID string
	UserID    string
	Policy    string
	// MaxServerPerHost is the rule of an anti-affinity group (0: none).
	MaxServerPerHost int
	CreatedAt        time.Time
	Members          []string // server ids, filled by GetServerGroup and ListServerGroups
}

// ServerGroupMember is a live member as the scheduler sees it.
type ServerGroupMember struct {
	ServerID  string
	NodeID    string // "" until it holds a node
	Phase     lifecycle.Phase
	CreatedAt time.Time
}

// ServerGroups keeps server groups. A server joins a group in its create
// transaction: CreateServer and CreateServerWithin insert the membership
// when s.Spec.Group is set, failing with an error wrapping ErrNotFound
// (nothing written) when the group is gone; CreateServerWithin also fails
// with a *QuotaExceededError for server_group_members when the group has
// as many live members as that limit allows.
type ServerGroups interface {
	// CreateServerGroup inserts g unless its project has limit groups
	// already (a *QuotaExceededError for server_groups; limit < 0:
	// unlimited), counted in the same transaction. ErrExists on a
	// duplicate id.
	CreateServerGroup(ctx context.Context, g ServerGroup, limit int) error
	// GetServerGroup returns one group with its live members. ErrNotFound
	// when unknown.
	GetServerGroup(ctx context.Context, id string) (ServerGroup, error)
	// ListServerGroups lists the groups of a project ("" = every
	// project) ordered by creation then id, with their live members.
	ListServerGroups(ctx context.Context, projectID string) ([]ServerGroup, error)
	// DeleteServerGroup removes a group (its members stay servers).
	// ErrNotFound when unknown.
	DeleteServerGroup(ctx context.Context, id string) error
	// GroupMembers lists a group's live members, their nodes and phases,
	// oldest first (creation, then id); empty for an unknown group.
	GroupMembers(ctx context.Context, id string) ([]ServerGroupMember, error)
	// ServerGroupsOf returns the ids of the groups a server belongs to
	// (at most one; empty when none), for the server body at 2.71.
	ServerGroupsOf(ctx context.Context, serverID string) ([]string, error)
}
