// Package store persists servers, their events and their ports. Store is the
// one repository interface; implementations (SQLite embedded, PostgreSQL)
// keep their SQL dialect to themselves.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

var (
	// ErrNotFound: no such server (or port, or action).
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: the record changed since it was read (compare-and-swap on Version failed).
	ErrConflict = errors.New("store: version conflict")
	// ErrNodeTaken: another live server already holds that node (one server per node, I4).
	ErrNodeTaken = errors.New("store: node held by another server")
	// ErrAddressInUse: the address is already allocated on that network.
	ErrAddressInUse = errors.New("store: address in use")
	// ErrExists: a record with that id already exists.
	ErrExists = errors.New("store: already exists")
	// ErrCommitUnknown: the commit was sent and the database went away
	// before it answered; the write may or may not have committed (read it
	// back once the database answers). It comes with the store's
	// unavailable error, so an API that does not look is still a 503.
	ErrCommitUnknown = errors.New("store: the commit's outcome is unknown")
)

// Classifier is implemented by a store whose database can be away (a
// PostgreSQL server restarting or unreachable): it tells those errors,
// which a retry may cure, from the others, in its driver's vocabulary.
type Classifier interface {
	Unavailable(err error) bool
}

// Unavailable reports whether err says st's database did not answer.
func Unavailable(st any, err error) bool {
	c, ok := st.(Classifier)
	return ok && err != nil && c.Unavailable(err)
}

// Clocked is implemented by a store whose database has a clock of its own
// that every replica must agree with (PostgreSQL's, which judges leases).
type Clocked interface {
	Now(ctx context.Context) (time.Time, error)
}

// Port is one network attachment of a server: an address on a network and
// the VIF that carries it to the node.
type Port struct {
	ID        string // UUID, also the VIF id given to Ironic
	ServerID  string
	NetworkID string
	IP        string // dotted IPv4
	MAC       string
	// VIFNode is the node the VIF is (or may be) attached to; recorded before
	// the attach call, cleared after a successful detach.
	VIFNode string
	// Binding is the Ironic port or portgroup of VIFNode that carries the
	// port, recorded with VIFNode before the attach (zero: none, e.g. the
	// node has no Ironic ports). MAC is then that NIC's address.
	Binding   Binding
	CreatedAt time.Time
	// NeutronID is the Neutron port's id (network.backend neutron): the VIF
	// id given to Ironic. "" until Neutron's create is recorded, and for
	// the embedded IPAM's ports.
	NeutronID string
	// UserPort: a user's pre-created Neutron port (networks: [{port: …}]),
	// released when the server goes, never deleted.
	UserPort bool
	// Slot tells a server's ports on one network apart: "" for the port of
	// a network the build asked for (one each), the port's own id for an
	// interface attached later (lifecycle.Server.PortSlot).
	Slot string
}

// VIF is the id Ironic knows the port's VIF by: Neutron's port id, or
// ingot's own for the embedded IPAM.
func (p Port) VIF() string {
	if p.NeutronID != "" {
		return p.NeutronID
	}
	return p.ID
}

// Binding is the physical side of a port on its node: one Ironic port, or
// one portgroup (a bond of several ports).
type Binding struct {
	PortUUID      string `json:"port_uuid,omitempty"`
	PortgroupUUID string `json:"portgroup_uuid,omitempty"`
	// BondMode and BondProperties are the portgroup's mode and properties
	// (bonding driver options, e.g. xmit_hash_policy).
	BondMode       string         `json:"bond_mode,omitempty"`
	BondProperties map[string]any `json:"bond_properties,omitempty"`
	// Members are the portgroup's ports (the bond's links).
	Members []BondMember `json:"members,omitempty"`
}

// BondMember is one Ironic port of a portgroup.
type BondMember struct {
	PortUUID string `json:"port_uuid"`
	MAC      string `json:"mac"`
}

// Bound reports whether the binding names an Ironic port or portgroup.
func (b Binding) Bound() bool { return b.PortUUID != "" || b.PortgroupUUID != "" }

// Bond reports whether the port is carried by a portgroup.
func (b Binding) Bond() bool { return b.PortgroupUUID != "" }

// ListOptions filters and pages a server listing. Deleted servers (phase
// deleted) are listed only with IncludeDeleted.
type ListOptions struct {
	Name string // substring match ("" = all)
	// Status is a Nova status (BUILD, ACTIVE, SHUTOFF, REBOOT, HARD_REBOOT,
	// REBUILD, RESCUE, ERROR, DELETED; "" = all). The store keeps the
	// servers whose phase can show it (StatusPhases): every server that
	// shows it, and possibly some that show another status because of a
	// pending operation; the caller refines with lifecycle.Nova.
	Status string
	Limit  int    // 0 = implementation default (1000)
	Marker string // id of the last server of the previous page
	// ProjectID keeps the servers of one project ("" = every project).
	ProjectID string
	// ChangesSince and ChangesBefore keep the servers whose UpdatedAt is at
	// or after, and at or before, them (zero: no bound).
	ChangesSince, ChangesBefore time.Time
	// IncludeDeleted lists deleted servers too (Nova's changes-since does).
	IncludeDeleted bool
	// Tag filters on Spec.Tags, exact matches: Tags keeps servers with
	// every one of them, TagsAny with at least one, NotTags drops those with
	// every one of them, NotTagsAny those with any of them.
	Tags, TagsAny, NotTags, NotTagsAny []string
	// Sort orders the listing (nil: created_at then id, ascending); the
	// id, in the last key's direction, ends every order that lacks it, so
	// paging by Marker is exact in any order.
	Sort []SortKey
}

// SortKey is one key of a listing's order.
type SortKey struct {
	Field SortField
	Desc  bool
}

// SortField is a server field a listing may be ordered by.
type SortField string

const (
	SortCreatedAt  SortField = "created_at"
	SortUpdatedAt  SortField = "updated_at"
	SortLaunchedAt SortField = "launched_at" // never launched sorts first
	SortName       SortField = "name"
	SortID         SortField = "id"
	SortProjectID  SortField = "project_id"
	SortUserID     SortField = "user_id"
	SortNodeID     SortField = "node_id" // "" (no node) sorts first
)

// Valid reports whether f is one of the fields above.
func (f SortField) Valid() bool {
	switch f {
	case SortCreatedAt, SortUpdatedAt, SortLaunchedAt, SortName, SortID, SortProjectID, SortUserID, SortNodeID:
		return true
	}
	return false
}

// StatusPhases are the phases a server of Nova status st may be in
// (desired active; DELETED is a delete asked for, or phase deleting or
// deleted): what ListOptions.Status keeps. nil for an unknown status.
// Derived from lifecycle.Nova (lifecycle.StatusPhases).
func StatusPhases(st string) []lifecycle.Phase { return lifecycle.StatusPhases(st) }

// StatusCount is how many live servers share a desired state and a phase
// (lifecycle.Nova gives their status).
type StatusCount struct {
	Desired lifecycle.Desired
	Phase   lifecycle.Phase
	N       int
}

// ActionRecord is a user request as os-instance-actions shows it.
type ActionRecord struct {
	ServerID  string
	RequestID string
	Action    string // lifecycle.ActionCreate / ActionDelete
	StartTime time.Time
	Message   string
	ProjectID string
	UserID    string
}

// Store is the repository. Every method is safe for concurrent use. No
// method makes a network call to anything but the database, and no
// transaction stays open across calls. Every write method honours a fence
// in its context (WithFence; see Leases, which every implementation also
// implements): under a lease no longer held it writes nothing and returns
// ErrFenced.
type Store interface {
	// CreateServer inserts a new server (Version 1) and its create action,
	// and reserves every volume of s.Spec.Volumes for it (status reserved,
	// ServerID, BootIndex, DeleteOnTermination) in the same transaction.
	// It is committed when it returns nil. ErrExists on a duplicate id; a
	// volume that is unknown, or owned by another project (Volume.ProjectID
	// set and not s.ProjectID), wraps ErrNotFound, one held by another server
	// wraps ErrVolumeInUse (the message names the volume and its holder);
	// on any error nothing is written.
	CreateServer(ctx context.Context, s *lifecycle.Server) error
	// AdoptServer inserts a server adopted as it runs (phase active, its
	// node held: lifecycle.Server as the reconciler would have left it),
	// its ports and its create action in one transaction: either all of it
	// is committed or nothing. ErrExists on a duplicate id (adopted
	// before), ErrNodeTaken when another server holds s.NodeID,
	// ErrAddressInUse when a port's address is taken on its network. The
	// volumes of s.Spec.Volumes are reserved as CreateServer reserves them
	// and, being on the node already, set in-use on s.NodeID with the
	// Cinder attachment of the same id in attached (one per volume).
	AdoptServer(ctx context.Context, s *lifecycle.Server, ports []Port, attached []Volume) error
	// GetServer returns the server, deleted or not. ErrNotFound when unknown.
	GetServer(ctx context.Context, id string) (*lifecycle.Server, error)
	// ReadServer is GetServer for reading only: the server may be the one
	// other calls were handed for the same stored row (Clone it to change
	// it), which spares decoding a row read again unchanged.
	ReadServer(ctx context.Context, id string) (*lifecycle.Server, error)
	// ListServers pages through the servers that match opts, ordered by
	// opts.Sort (default: creation, oldest first, id as a tie-break); never
	// loads more than Limit rows. A Marker names any existing server
	// (deleted ones included); ErrNotFound when it names none. The
	// servers are for reading: their specs' maps and slices may be shared
	// with other calls' (Clone one to change it).
	ListServers(ctx context.Context, opts ListOptions) ([]*lifecycle.Server, error)
	// RequestDelete records the user's delete (Desired=deleted,
	// DeleteRequestedAt, DeleteRequestID, a delete action) and bumps Version.
	// Idempotent: a repeat on a server already desired deleted changes nothing
	// and returns nil. ErrNotFound for unknown or already-deleted servers.
	RequestDelete(ctx context.Context, id, requestID string, at time.Time) error
	// SaveServer writes the lifecycle fields of s if its Version still
	// matches the stored one, then increments s.Version, and records events in
	// the same transaction. It never changes Desired, DeleteRequestedAt or
	// DeleteRequestID (only the API writes those). ErrConflict on a version
	// mismatch; ErrNodeTaken when s.NodeID is held by another server.
	SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error
	// UpdateServer applies mutate to the stored server in one transaction and
	// writes back what the API owns besides the create and the delete: Name,
	// Spec, Op and OpGen, Lock (never a lifecycle field), bumping Version.
	// An error from mutate aborts with nothing written and is returned as is.
	// act, when not nil, is inserted as the server's action in the same
	// transaction (ServerID filled in; ProjectID/UserID default to the
	// server's). ErrNotFound for unknown and deleted servers. When mutate
	// records an attach (a new OpGen of kind attach_volume), the volume
	// Op.VolumeID (listed in Spec.Volumes) is reserved for the server in the
	// same transaction, with CreateServer's errors; a DeleteOnTermination
	// of a Spec.Volumes entry it changes is written to the volume the server
	// holds.
	UpdateServer(ctx context.Context, id string, act *ActionRecord, mutate func(*lifecycle.Server) error) (*lifecycle.Server, error)
	// ServersNeedingWork returns every server with NeedsWork() true (indexed query).
	ServersNeedingWork(ctx context.Context) ([]*lifecycle.Server, error)
	// ServersInPhase returns servers in the given phase, paged by id > after
	// (ascending), at most limit rows.
	ServersInPhase(ctx context.Context, phase lifecycle.Phase, after string, limit int) ([]*lifecycle.Server, error)
	// CountByPhase returns how many servers are in each phase (for metrics).
	CountByPhase(ctx context.Context) (map[lifecycle.Phase]int, error)
	// NodeHolders maps node id -> server id for every server holding a node.
	NodeHolders(ctx context.Context) (map[string]string, error)
	// CountServers counts the live (not deleted) servers of one project
	// ("" = every project) by desired state and phase, for the console's
	// fleet overview; an index-only count, no server is loaded.
	CountServers(ctx context.Context, projectID string) ([]StatusCount, error)
	// RecentFaults lists the live servers of one project ("" = every
	// project) that carry a fault or a failed attempt, the most recently
	// updated first, at most limit (<= 0: 10).
	RecentFaults(ctx context.Context, projectID string, limit int) ([]*lifecycle.Server, error)

	// Actions lists a server's actions (newest first); works for deleted servers.
	Actions(ctx context.Context, serverID string) ([]ActionRecord, error)
	// Events lists the events of one action, oldest first.
	Events(ctx context.Context, serverID, requestID string) ([]lifecycle.Event, error)
	// AllEvents lists every event of a server, oldest first.
	AllEvents(ctx context.Context, serverID string) ([]lifecycle.Event, error)

	// CreatePort inserts a port. ErrAddressInUse when (NetworkID, IP) is taken.
	CreatePort(ctx context.Context, p Port) error
	// Ports lists a server's ports, ordered by creation.
	Ports(ctx context.Context, serverID string) ([]Port, error)
	// PortsOn lists the ports of many servers at once (map server id -> ports).
	PortsOn(ctx context.Context, serverIDs []string) (map[string][]Port, error)
	// GetPort returns one port. ErrNotFound when unknown.
	GetPort(ctx context.Context, id string) (Port, error)
	// SetPortVIF records the node a port's VIF is attached to ("" = detached).
	SetPortVIF(ctx context.Context, portID, node string) error
	// BindPort records, in one write, the node a port's VIF goes to, the
	// MAC it takes and its binding to an Ironic port or portgroup of that
	// node (node "" and a zero binding: unbound). ErrNotFound when unknown.
	BindPort(ctx context.Context, portID, node, mac string, b Binding) error
	// DeletePort frees a port and its address. Idempotent.
	DeletePort(ctx context.Context, portID string) error
	// RecordNeutronPort records what Neutron made of a port row: its id,
	// address and MAC. ErrAddressInUse when another row holds the address
	// on that network; ErrNotFound when the row is unknown.
	RecordNeutronPort(ctx context.Context, portID, neutronID, ip, mac string) error
	// UsedAddresses lists the allocated addresses of a network.
	UsedAddresses(ctx context.Context, networkID string) ([]string, error)

	// Volumes is the embedded volume registry (volume.go).
	Volumes
	// Quotas and Keypairs belong to projects and users (identity.go);
	// QuotaClasses hold the default class (quotaclasses.go).
	Quotas
	QuotaClasses
	Keypairs
	// Flavors, ServerGroups, Services and Aggregates are what admins
	// manage (flavors.go, servergroups.go, services.go, aggregates.go).
	Flavors
	ServerGroups
	Services
	Aggregates

	// Ping checks the database answers (for /readyz).
	Ping(ctx context.Context) error
	Close() error
}
