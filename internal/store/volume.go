package store

import (
	"context"
	"errors"
	"time"
)

// ErrVolumeInUse: the volume is reserved by or attached to a server.
var ErrVolumeInUse = errors.New("store: volume in use")

// Volume statuses, as Cinder spells them.
const (
	VolumeAvailable = "available" // free
	VolumeReserved  = "reserved"  // held by a server, not (or no longer) on a node
	VolumeInUse     = "in-use"    // an Ironic volume target on the server's node carries it
	VolumeDeleting  = "deleting"  // being released for a server that is gone
	// VolumeDetaching: a detach after the build is under way.
	VolumeDetaching = "detaching"
	// VolumeError: stranded — an Ironic volume target for it was left on a
	// node ingot may no longer touch (I7). It is never handed out again; an
	// operator removes the target, then deletes the volume. StatusReason says where.
	VolumeError = "error"
)

// Volume is one volume of the embedded registry, with the iSCSI-style target
// description the embedded backend gives it.
type Volume struct {
	ID   string // UUID
	Name string
	// Description is Cinder's description, given at create ("" for none).
	Description string
	// ImageID is the image the volume was made from (Cinder's imageRef at
	// create; "" for a blank volume). The embedded registry records it
	// only: it has no data path to write the image's bytes.
	ImageID string
	// ProjectID and UserID own the volume ("" for none: any project's
	// server may take it).
	ProjectID string
	UserID    string
	SizeGB    int
	Status    string
	// ServerID holds the volume (reserved, in-use, deleting); "" when available.
	ServerID string
	// NodeID is the node whose Ironic volume target carries the volume; set
	// before the target is created, cleared after it is removed.
	NodeID              string
	BootIndex           int  // the holder's boot_index (-1: data volume)
	DeleteOnTermination bool // the holder asked for deletion with the server
	TargetIQN           string
	TargetLUN           int
	TargetPortal        string
	// StatusReason says why a volume is still in-use or deleting (e.g.
	// "waiting for Ironic to remove the volume target").
	StatusReason string
	// AttachmentID is the holder's Cinder attachment of the volume (the
	// cinder backend), made for AttachmentNode's volume connector; both
	// "" when none is known.
	AttachmentID, AttachmentNode string
	CreatedAt                    time.Time
	UpdatedAt                    time.Time
}

// Volumes is the volume registry, part of Store's implementations.
type Volumes interface {
	// CreateVolume inserts an available volume. ErrExists on a duplicate id.
	CreateVolume(ctx context.Context, v Volume) error
	// CreateHeldVolume inserts a volume already held by v.ServerID (a volume
	// a build made for it): Status reserved, with v's BootIndex and
	// DeleteOnTermination; NodeID and StatusReason empty. ErrExists on a
	// duplicate id (the caller reads it to see whose it is).
	CreateHeldVolume(ctx context.Context, v Volume) error
	// GetVolume returns one volume. ErrNotFound when unknown.
	GetVolume(ctx context.Context, id string) (Volume, error)
	// ListVolumes pages volumes by id (after = last id of the previous page).
	ListVolumes(ctx context.Context, after string, limit int) ([]Volume, error)
	// ListProjectVolumes is ListVolumes for the volumes of one project.
	ListProjectVolumes(ctx context.Context, projectID, after string, limit int) ([]Volume, error)
	// DeleteVolume removes an available volume. ErrVolumeInUse when a server
	// holds it; ErrNotFound when unknown.
	DeleteVolume(ctx context.Context, id string) error
	// ServerVolumes lists the volumes a server holds, by boot index then id.
	ServerVolumes(ctx context.Context, serverID string) ([]Volume, error)
	// VolumesOn lists the volumes many servers hold at once (map server id
	// -> volumes in ServerVolumes order; servers holding none are absent).
	VolumesOn(ctx context.Context, serverIDs []string) (map[string][]Volume, error)
	// UpdateVolume writes Status, NodeID, StatusReason and UpdatedAt of a
	// volume held by v.ServerID. ErrNotFound when it is not held by that server.
	UpdateVolume(ctx context.Context, v Volume) error
	// ReleaseVolume ends serverID's hold on a volume: destroy deletes it,
	// otherwise it becomes available (ServerID, NodeID cleared). A volume in
	// VolumeError is neither deleted nor freed: it keeps its status, NodeID
	// and StatusReason, with no server. Idempotent: nil when the volume is
	// gone or held by another server.
	ReleaseVolume(ctx context.Context, id, serverID string, destroy bool) error
	// SetVolumeAttachment records the Cinder attachment of a volume
	// serverID holds and the node it was made for ("", "": none).
	// ErrNotFound when the volume is not held by that server.
	SetVolumeAttachment(ctx context.Context, id, serverID, attachmentID, nodeID string) error
}

// DefaultTargetPortal is the iSCSI portal the embedded backend gives its
// volumes when no other is configured.
const DefaultTargetPortal = "127.0.0.1:3260"

// NewVolume returns an available volume with the embedded backend's target
// description: IQN iqn.2026-11.io.ingot:volume-<id>, LUN 0, and portal (""
// means DefaultTargetPortal).
func NewVolume(id, name string, sizeGB int, portal string, now time.Time) Volume {
	return NewVolumeAt(id, name, sizeGB, portal, "", now)
}

// DefaultIQNPrefix is the prefix of the embedded backend's target IQNs
// when no other is configured.
const DefaultIQNPrefix = "iqn.2026-11.io.ingot"

// NewVolumeAt is NewVolume with the target's IQN prefix ("" means
// DefaultIQNPrefix): IQN <prefix>:volume-<id>.
func NewVolumeAt(id, name string, sizeGB int, portal, iqnPrefix string, now time.Time) Volume {
	if portal == "" {
		portal = DefaultTargetPortal
	}
	if iqnPrefix == "" {
		iqnPrefix = DefaultIQNPrefix
	}
	return Volume{
		ID: id, Name: name, SizeGB: sizeGB, Status: VolumeAvailable, BootIndex: -1,
		TargetIQN: iqnPrefix + ":volume-" + id, TargetLUN: 0, TargetPortal: portal,
		CreatedAt: now, UpdatedAt: now,
	}
}
