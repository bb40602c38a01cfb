// Package lifecycle is ingot's pure core: the server record, its phases, and
// the decision of the next step from (desired state, recorded state, what
// Ironic shows now, clock). Nothing in this package does I/O.
package lifecycle

import (
	"maps"
	"slices"
	"time"
)

// Desired is what the user asked for.
type Desired string

const (
	DesiredActive  Desired = "active"
	DesiredDeleted Desired = "deleted"
)

// Phase is where the lifecycle of a server stands.
type Phase string

const (
	// PhasePending: accepted, no node chosen (also after a release, before a reschedule).
	PhasePending Phase = "pending"
	// PhaseReserving: a node is chosen and recorded; our instance_uuid may or may not be on it yet.
	PhaseReserving Phase = "reserving"
	// PhaseNetworking: the node is reserved; ports are allocated and VIFs attached.
	PhaseNetworking Phase = "networking"
	// PhaseVolumes: networks are wired; the volumes' Ironic targets are created on the node.
	PhaseVolumes Phase = "volumes"
	// PhaseDeploying: networks are wired; deploy requested (DeployRequested) or about to be.
	PhaseDeploying Phase = "deploying"
	// PhaseActive: Ironic shows the node active with our instance_uuid.
	PhaseActive Phase = "active"
	// PhaseStopped: the node is deployed and powered off, as the user asked
	// (or as a power sync found it).
	PhaseStopped Phase = "stopped"
	// PhaseRescued: the node runs its rescue ramdisk.
	PhaseRescued Phase = "rescued"
	// PhaseRebooting: a reboot of the node is under way (Op reboot).
	PhaseRebooting Phase = "rebooting"
	// PhasePoweringOff: the node is being powered off (Op stop).
	PhasePoweringOff Phase = "powering_off"
	// PhasePoweringOn: the node is being powered on (Op start).
	PhasePoweringOn Phase = "powering_on"
	// PhaseRebuilding: the node is being redeployed with the server's
	// current Spec (Op rebuild); same node, same ports.
	PhaseRebuilding Phase = "rebuilding"
	// PhaseRescuing: the node is being booted into rescue (Op rescue).
	PhaseRescuing Phase = "rescuing"
	// PhaseUnrescuing: the node is leaving rescue (Op unrescue).
	PhaseUnrescuing Phase = "unrescuing"
	// PhaseReleasing: an attempt failed; what it holds is being released before a reschedule or ERROR.
	PhaseReleasing Phase = "releasing"
	// PhaseError: stable failure with a fault. May still hold resources being cleaned up.
	PhaseError Phase = "error"
	// PhaseDeleting: the user's delete is being carried out.
	PhaseDeleting Phase = "deleting"
	// PhaseAttachingVolume and PhaseDetachingVolume: a volume is being
	// attached to or detached from a built server (Op.VolumeID); shown as
	// the vm_state it rests in, with no task_state, as Nova does.
	PhaseAttachingVolume Phase = "attaching_volume"
	PhaseDetachingVolume Phase = "detaching_volume"
	// PhaseDeleted: gone for the user (404). May still hold resources being cleaned up.
	PhaseDeleted Phase = "deleted"
)

// Stable reports whether the phase is one a server may rest in.
func (p Phase) Stable() bool {
	return p.Up() || p == PhaseError || p == PhaseDeleted
}

// Up reports whether the phase is a stable one of a built server that holds
// its node: active, stopped or rescued. Day-2 operations start from these.
func (p Phase) Up() bool {
	return p == PhaseActive || p == PhaseStopped || p == PhaseRescued
}

// phases are all the phases, in the order a build and its day-2 life meet them.
var phases = [...]Phase{PhasePending, PhaseReserving, PhaseNetworking, PhaseVolumes, PhaseDeploying, PhaseActive,
	PhaseStopped, PhaseRescued, PhaseRebooting, PhasePoweringOff, PhasePoweringOn, PhaseRebuilding, PhaseRescuing,
	PhaseUnrescuing, PhaseAttachingInterface, PhaseDetachingInterface, PhaseAttachingVolume, PhaseDetachingVolume, PhaseReleasing,
	PhaseError, PhaseDeleting, PhaseDeleted}

// Valid reports whether p is a known phase.
func (p Phase) Valid() bool { return slices.Contains(phases[:], p) }

// Reason is a stable fault code.
type Reason string

const (
	ReasonNodeDeleted             Reason = "node_deleted"
	ReasonNodeTornDown            Reason = "node_torn_down"
	ReasonNodeDisassociated       Reason = "node_disassociated" // our instance_uuid removed or replaced behind our back
	ReasonDeployFailed            Reason = "deploy_failed"
	ReasonNodeMaintenance         Reason = "node_maintenance"
	ReasonBuildTimeout            Reason = "build_timeout"
	ReasonNoValidHost             Reason = "no_valid_host"
	ReasonIronicUnavailable       Reason = "ironic_unavailable"
	ReasonNetworkAllocationFailed Reason = "network_allocation_failed"
	ReasonVIFAttachFailed         Reason = "vif_attach_failed"
	ReasonVolumeAttachFailed      Reason = "volume_attach_failed"
	ReasonInvalidRequest          Reason = "invalid_request"
	// ReasonVolumeStranded: a volume's target is left on a node another
	// instance holds, so it cannot be attached anywhere else (I8).
	ReasonVolumeStranded Reason = "volume_stranded"
	// ReasonRebuildTimeout: a rebuild did not finish within rebuild_timeout.
	ReasonRebuildTimeout Reason = "rebuild_timeout"
	// ReasonRescueFailed: Ironic failed to rescue or unrescue the node.
	ReasonRescueFailed Reason = "rescue_failed"
	// ReasonVolumeDetachFailed: a detach from ACTIVE was refused or timed
	// out; the volume stays attached (OpFault, never the server's fault).
	ReasonVolumeDetachFailed Reason = "volume_detach_failed"
	// ReasonNodeUnsuitable: the reserved node turned out to be in maintenance
	// or not available (the scheduler's view was stale); it is given back and
	// another chosen without spending an attempt.
	ReasonNodeUnsuitable Reason = "node_unsuitable"
	// ReasonResetState: an admin reset the server's state to error
	// (os-resetState); the server keeps its node until deleted, rebuilt or
	// reset to active.
	ReasonResetState Reason = "reset_state"
	// ReasonVolumeCreateFailed: a volume the build makes went to error,
	// vanished, or was refused by the volume service (Nova's
	// BuildAbortException: not rescheduled).
	ReasonVolumeCreateFailed Reason = "volume_create_failed"
)

// Reschedulable reports whether another node may succeed where this failure happened.
func (r Reason) Reschedulable() bool {
	switch r {
	case ReasonNodeDeleted, ReasonNodeTornDown, ReasonNodeDisassociated, ReasonDeployFailed,
		ReasonNodeMaintenance, ReasonVIFAttachFailed, ReasonVolumeAttachFailed:
		return true
	}
	return false
}

// Step names the build step a fault or attempt refers to.
type Step string

const (
	StepSchedule Step = "schedule"
	StepReserve  Step = "reserve"
	StepNetwork  Step = "networking"
	StepVolumes  Step = "volumes"
	StepDeploy   Step = "deploy"
	StepActive   Step = "active"
	StepRelease  Step = "release"
	StepReboot   Step = "reboot"
	StepStop     Step = "stop"
	StepStart    Step = "start"
	StepRebuild  Step = "rebuild"
	StepRescue   Step = "rescue"
	StepUnrescue Step = "unrescue"
	StepReset    Step = "reset_state"
	StepAttach   Step = "attach_volume"
	StepDetach   Step = "detach_volume"
)

// Fault explains an ERROR (or, while releasing, the failure being handled).
type Fault struct {
	Reason  Reason    `json:"reason"`
	Message string    `json:"message"`
	Node    string    `json:"node,omitempty"`
	Step    Step      `json:"step,omitempty"`
	At      time.Time `json:"at"`
}

// Attempt is one failed try of a build on one node.
type Attempt struct {
	Node    string    `json:"node"`
	Step    Step      `json:"step"`
	Reason  Reason    `json:"reason"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// Spec is what the user asked for, resolved at create time so the
// lifecycle never looks up the catalogue again.
type Spec struct {
	FlavorID      string   `json:"flavor_id"`
	ImageID       string   `json:"image_id"`
	ResourceClass string   `json:"resource_class"`
	ImageSource   string   `json:"image_source"`
	ImageChecksum string   `json:"image_checksum,omitempty"`
	RootGB        int      `json:"root_gb"`
	Networks      []string `json:"networks"` // network ids, one port each
	// FixedIPs are the addresses asked for, by network id, and UserPorts
	// the user's pre-created ports, by the network id each is on (Neutron
	// backend only: networks [{fixed_ip}] and [{port}]).
	FixedIPs  map[string]string `json:"fixed_ips,omitempty"`
	UserPorts map[string]string `json:"user_ports,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	UserData  string            `json:"user_data,omitempty"` // base64, as sent
	Hostname  string            `json:"hostname,omitempty"`
	KeyName   string            `json:"key_name,omitempty"`
	// PublicKey is the key_name keypair's public key, copied at create as
	// Nova does (a later keypair delete does not change the server).
	PublicKey string `json:"public_key,omitempty"`
	// KeyType is the keypair's type, "ssh" (default) or "x509".
	KeyType string `json:"key_type,omitempty"`
	// Volumes are the block_device_mapping_v2 volumes and those attached
	// after the build (os-volume_attachments), detached ones included: the
	// registry says which the server holds now.
	Volumes []VolumeRef `json:"volumes,omitempty"`
	// RequiredTraits and ForbiddenTraits are the flavor's trait:<NAME>
	// extra specs, Capabilities its capabilities:<key> ones: the scheduler
	// filters nodes on them, and the deploy passes the required traits and
	// the capabilities in instance_info.
	RequiredTraits  []string          `json:"required_traits,omitempty"`
	ForbiddenTraits []string          `json:"forbidden_traits,omitempty"`
	Capabilities    map[string]string `json:"capabilities,omitempty"`
	// ImageTraits are the required traits the image (a Glance image's
	// trait:NAME=required properties) added to the flavor's, so that a
	// rebuild with another image replaces them.
	ImageTraits []string `json:"image_traits,omitempty"`
	// VCPUs and RAMMB are the flavor's sizes at create, counted against
	// the project's cores and ram quotas.
	VCPUs int `json:"vcpus,omitempty"`
	RAMMB int `json:"ram_mb,omitempty"`
	// Tags are the server's tags (2.26), sorted, at most 50; Description
	// its description (2.19; nil shows null). Neither reaches the node.
	Tags        []string `json:"tags,omitempty"`
	Description *string  `json:"description,omitempty"`
	// AccessIPv4 and AccessIPv6 are the user's access addresses (Nova's
	// accessIPv4/accessIPv6): shown and updatable, never configured on the
	// node (Nova does not configure them either).
	AccessIPv4 string `json:"access_ip_v4,omitempty"`
	AccessIPv6 string `json:"access_ip_v6,omitempty"`
	// DiskConfig is the OS-DCF:diskConfig the user asked for, AUTO or
	// MANUAL ("" shows MANUAL): shown as asked, as Nova does; the node's
	// partitioning does not depend on it (the image and Ironic decide).
	DiskConfig string `json:"disk_config,omitempty"`
	// SecurityGroups are the security groups asked for at create, by name
	// as the user gave them (shown as the server's; none shows "default"),
	// and SecurityGroupIDs the Neutron groups they resolved to, applied to
	// the ports ingot makes (Neutron backend only; none: Neutron's default).
	SecurityGroups   []string `json:"security_groups,omitempty"`
	SecurityGroupIDs []string `json:"security_group_ids,omitempty"`
	// NoSecurityGroups: every group was removed (removeSecurityGroup), so
	// the server shows none, as Nova then leaves the member out.
	NoSecurityGroups bool `json:"no_security_groups,omitempty"`
	// ReservationID is the create request's reservation (r-xxxxxxxx, one
	// for every server of a multiple create) and LaunchIndex the server's
	// place in it (0 for the first).
	ReservationID string `json:"reservation_id,omitempty"`
	LaunchIndex   int    `json:"launch_index,omitempty"`
	// AdminPass is the password Nova writes into the config drive
	// (meta_data.json admin_pass) at a deploy or rebuild. A secret: it is
	// kept only for the config drive, answered once (in the create's or
	// rebuild's 202), and in no other answer, log or event.
	AdminPass string `json:"admin_pass,omitempty"`
	// Files are the personality files (injected files, below 2.57) of the
	// create or the last rebuild, which the deploy writes into the config
	// drive as Nova's Ironic driver does.
	Files []File `json:"files,omitempty"`
	// Group is the server group the server was created into (the group
	// scheduler hint), with the group's policy, which never changes, for
	// the scheduler.
	Group *GroupRef `json:"group,omitempty"`
}

// File is a personality file: its path on the machine and its contents,
// base64 as sent.
type File struct {
	Path     string `json:"path"`
	Contents string `json:"contents"`
}

// GroupRef names a server's group and its policy.
type GroupRef struct {
	ID     string `json:"id"`
	Policy string `json:"policy"`
	// MaxPerHost is the max_server_per_host rule (0: none).
	MaxPerHost int `json:"max_per_host,omitempty"`
}

// VolumeRef is a volume requested through block_device_mapping_v2.
type VolumeRef struct {
	ID                  string `json:"id"`
	BootIndex           int    `json:"boot_index"` // -1 when not bootable
	DeleteOnTermination bool   `json:"delete_on_termination"`
	// Source, ImageID and SizeGB describe a volume the build makes
	// (newvolumes.go): Source "image" or "blank", "" for an existing
	// volume. Its ID stays "" in the Spec (the API's): what the build
	// learned is Server.Made, which Server.Volumes fills in, with Ready
	// once it is available and held for the server.
	Source  string `json:"source,omitempty"`
	ImageID string `json:"image_id,omitempty"`
	SizeGB  int    `json:"size_gb,omitempty"`
	Ready   bool   `json:"-"`
	// Tag is the block device's tag (shown by os-volume_attachments from
	// 2.70; ingot does not pass it to the node, nor does Nova's Ironic driver).
	Tag string `json:"tag,omitempty"`
}

// Server is the record of one server: what the user wants and where the
// lifecycle stands. Store implementations persist every field.
type Server struct {
	ID        string
	Name      string
	ProjectID string
	UserID    string
	Spec      Spec

	Desired Desired
	Phase   Phase

	// NodeID is the node this server holds or may hold (recorded before the
	// reservation is attempted, cleared only once released).
	NodeID string
	// DeployRequested: we asked (or were about to ask) Ironic to deploy NodeID.
	DeployRequested bool
	// InstanceInfoOn is the node whose reservation wrote the spec's
	// instance_info with the instance_uuid (one PATCH, as Nova's driver
	// does), so the deploy sends no PATCH of its own; "" when not known so
	// (an answer lost, a record older than this), and the deploy patches.
	InstanceInfoOn string
	// PortsAllocated: ports may exist for this server (set before allocation,
	// cleared once every port is freed).
	PortsAllocated bool
	// VolumesOnNode: Ironic volume targets (and a connector) for this server's
	// volumes may exist on NodeID (set before they are created, cleared once
	// they are removed or the node is gone).
	VolumesOnNode bool
	// VolumesReleased: the server's hold on its volumes (Spec.Volumes) has
	// ended — they are available again, or deleted with the server.
	VolumesReleased bool
	// VolumesStrandedOn is the node our volume targets were left on when it
	// turned out to be another instance's (I7 forbids touching it): those
	// volumes can never be attached anywhere else (I8) until an operator
	// removes the targets. Set once, never cleared.
	VolumesStrandedOn string

	// Made is what the build learned of the volumes it makes
	// (newvolumes.go), by Spec.Volumes index: the id the volume service
	// gave, recorded as soon as it is known, and whether it is available
	// and held. Read the volumes through Volumes.
	Made []MadeVolume
	// VolumeToken is the creating user's token, kept only for the volume
	// service's creates of the volumes the build makes (Cinder makes them
	// in the user's project, and reads the image, with it; ingot's own
	// token goes along as the service token, so Keystone accepts it after
	// it expired, as with Nova). A secret: never shown, logged or sent
	// anywhere else; cleared once no volume is left to make.
	VolumeToken string

	Excluded []string  // nodes this server must not be scheduled on again
	Attempts []Attempt // failed attempts, oldest first
	Fault    *Fault    // set in error; while releasing, the failure being handled
	// Held: an admin reset the server to error and it keeps its node
	// (HeldInError). Set only in phase error with a node; every change of
	// phase or node clears it (transitions.go).
	Held bool

	// MaintenanceSince is when the current node was first seen in maintenance during a deploy.
	MaintenanceSince time.Time
	// CapacityWaitSince is when the scheduler first found no node while
	// nodes of the class were on their way back (zero: not waiting).
	CapacityWaitSince time.Time

	// Op is the latest day-2 operation the user asked for. The API writes it,
	// with OpGen+1, before its 202; the reconciler never does.
	Op    Op
	OpGen int64
	// OpDone is the OpGen the reconciler has carried out or given up on;
	// an operation is pending while OpGen > OpDone.
	OpDone int64
	// OpSent: Ironic accepted the call of the operation in progress.
	OpSent bool
	// OpFallback: a soft reboot was refused; the reboot goes on hard.
	OpFallback bool
	// Nets is the networks the server's ports are on once an interface
	// was attached or detached (NetsSet); before that, Spec.Networks.
	// Read it through Networks.
	Nets    []string
	NetsSet bool
	// Detaching are the ports (row ids) an interface detach (or the
	// roll-back of an attach) did not free by its deadline: freed in the
	// background while the server is at rest.
	Detaching []string
	// OpFault is why the last operation failed without sending the server
	// to ERROR (an interface attach rolled back), for the API that waits on
	// it; cleared when the next operation starts.
	OpFault *Fault
	// StopAfterRebuild: the rebuild started from stopped, so the node is
	// powered off again once it is redeployed (as Nova does).
	StopAfterRebuild bool
	// Cycle is the step of a detach from ACTIVE under way (detachcycle.go).
	Cycle Cycle
	// PowerSeen is the node's power as last seen.
	PowerSeen Power
	// Lock is the server's lock (API-owned): a locked server refuses
	// actions and deletes from non-admins.
	Lock Lock

	CreatedAt         time.Time
	UpdatedAt         time.Time
	PhaseSince        time.Time
	Deadline          time.Time // build deadline
	DeleteRequestedAt time.Time // zero unless Desired == DesiredDeleted
	// DeleteFrom is the phase the delete was accepted in: while deleting,
	// the server shows the status it had, as Nova does.
	DeleteFrom Phase
	LaunchedAt time.Time // when it first became active

	// CreateRequestID and DeleteRequestID tie events to the user's actions.
	CreateRequestID string
	DeleteRequestID string

	// Version increments on every write; stores use it for compare-and-swap.
	Version int64
}

// Holds reports whether the server may still hold resources (a node
// reservation or ports) that must be released.
func (s *Server) Holds() bool {
	return s.NodeID != "" || s.PortsAllocated || s.HoldsVolumes()
}

// HoldsVolumes reports whether the server still holds its volumes.
func (s *Server) HoldsVolumes() bool {
	return len(s.Spec.Volumes) > 0 && !s.VolumesReleased
}

// NeedsWork reports whether the reconciler must look at the server on every
// tick: a non-stable phase, a delete not yet carried out, or a stable
// failure that still holds resources.
func (s *Server) NeedsWork() bool {
	if !s.Phase.Stable() {
		return true
	}
	if s.Desired == DesiredDeleted && s.Phase != PhaseDeleted {
		return true
	}
	if s.Phase.Up() || s.HeldInError() {
		// Watched for drift on its own cadence (the reconciler's drift check).
		return s.OpPending() || (s.Phase.Up() && len(s.Detaching) > 0)
	}
	return s.Holds() || (s.Phase == PhaseError && s.OpPending())
}

// Clone returns a deep copy, so decisions never alias the caller's record.
func (s *Server) Clone() *Server {
	c := *s
	c.Spec.Networks = slices.Clone(s.Spec.Networks)
	c.Nets = slices.Clone(s.Nets)
	c.Detaching = slices.Clone(s.Detaching)
	c.Spec.FixedIPs = maps.Clone(s.Spec.FixedIPs)
	c.Spec.UserPorts = maps.Clone(s.Spec.UserPorts)
	c.Spec.Volumes = slices.Clone(s.Spec.Volumes)
	c.Spec.RequiredTraits = slices.Clone(s.Spec.RequiredTraits)
	c.Spec.ForbiddenTraits = slices.Clone(s.Spec.ForbiddenTraits)
	c.Spec.ImageTraits = slices.Clone(s.Spec.ImageTraits)
	c.Spec.Capabilities = maps.Clone(s.Spec.Capabilities)
	c.Spec.Tags = slices.Clone(s.Spec.Tags)
	if s.Spec.Description != nil {
		d := *s.Spec.Description
		c.Spec.Description = &d
	}
	c.Spec.Metadata = maps.Clone(s.Spec.Metadata)
	c.Spec.SecurityGroups = slices.Clone(s.Spec.SecurityGroups)
	c.Spec.SecurityGroupIDs = slices.Clone(s.Spec.SecurityGroupIDs)
	c.Spec.Files = slices.Clone(s.Spec.Files)
	if s.Spec.Group != nil {
		g := *s.Spec.Group
		c.Spec.Group = &g
	}
	c.Excluded = slices.Clone(s.Excluded)
	c.Made = slices.Clone(s.Made)
	c.Attempts = slices.Clone(s.Attempts)
	if s.Fault != nil {
		f := *s.Fault
		c.Fault = &f
	}
	if s.OpFault != nil {
		f := *s.OpFault
		c.OpFault = &f
	}
	return &c
}
