package cinder

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
)

// Snapshot is a Cinder volume snapshot as ingot reads it (what Nova's
// os-snapshots proxy shows).
type Snapshot struct {
	ID, VolumeID, Name, Description string
	// Status: creating, available, deleting, error, …
	Status string
	// SizeGB is the size of the volume it was taken of.
	SizeGB int
	// CreatedAt is when Cinder made it (zero when Cinder did not say).
	CreatedAt time.Time
}

// SnapshotSpec is a snapshot to take.
type SnapshotSpec struct {
	VolumeID, Name, Description string
	// Force takes it of an in-use volume too.
	Force bool
}

func fromSnapshot(s *snapshots.Snapshot) Snapshot {
	return Snapshot{ID: s.ID, VolumeID: s.VolumeID, Name: s.Name, Description: s.Description,
		Status: s.Status, SizeGB: s.Size, CreatedAt: s.CreatedAt}
}

// GetSnapshot reads a snapshot (ErrSnapshotNotFound when Cinder, for the
// user's token, has none with that id).
func (c *Client) GetSnapshot(ctx context.Context, id string) (Snapshot, error) {
	const op = "get snapshot"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Snapshot{}, err
	}
	s, err := snapshots.Get(ctx, sc, id).Extract()
	if err != nil {
		return Snapshot{}, classify(op, err, ErrSnapshotNotFound)
	}
	return fromSnapshot(s), nil
}

// ListSnapshots lists the user's project's snapshots in detail (every
// page), in Cinder's order.
func (c *Client) ListSnapshots(ctx context.Context) ([]Snapshot, error) {
	const op = "list snapshots"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return nil, err
	}
	pages, err := snapshots.ListDetail(sc, snapshots.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, classify(op, err, nil)
	}
	ss, err := snapshots.ExtractSnapshots(pages)
	if err != nil {
		return nil, classify(op, err, nil)
	}
	out := make([]Snapshot, 0, len(ss))
	for i := range ss {
		out = append(out, fromSnapshot(&ss[i]))
	}
	return out, nil
}

// CreateSnapshot asks for a snapshot of a volume; it is "creating" until
// Cinder's volume service has made it. An unknown volume:
// ErrVolumeNotFound; an in-use volume without Force: ErrBadRequest.
func (c *Client) CreateSnapshot(ctx context.Context, spec SnapshotSpec) (Snapshot, error) {
	const op = "create snapshot"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Snapshot{}, err
	}
	s, err := snapshots.Create(ctx, sc, snapshots.CreateOpts{VolumeID: spec.VolumeID, Force: spec.Force,
		Name: spec.Name, Description: spec.Description}).Extract()
	if err != nil {
		return Snapshot{}, classify(op, err, ErrVolumeNotFound)
	}
	return fromSnapshot(s), nil
}

// DeleteSnapshot asks for a snapshot's deletion ("deleting", then gone).
func (c *Client) DeleteSnapshot(ctx context.Context, id string) error {
	const op = "delete snapshot"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return err
	}
	return classify(op, snapshots.Delete(ctx, sc, id).ExtractErr(), ErrSnapshotNotFound)
}
