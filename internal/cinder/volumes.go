package cinder

import (
	"context"
	"strconv"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
)

// Volume is a Cinder volume as ingot reads it.
type Volume struct {
	ID, Name, Description string
	// Status: creating, available, reserved, attaching, in-use, detaching,
	// deleting, error, …
	Status    string
	SizeGB    int
	Bootable  bool
	ProjectID string
	// ImageID is the image the volume was made from ("" for none).
	ImageID string
	// Attachments lists the servers it is attached to.
	Attachments []VolumeAttachment
	// CreatedAt is when Cinder made it (zero when Cinder did not say).
	CreatedAt time.Time
	// AvailabilityZone, VolumeType (its name) and SnapshotID (the snapshot
	// it was made from, "" for none) are Cinder's.
	AvailabilityZone, VolumeType, SnapshotID string
	// Metadata is the volume's key/value metadata (never nil).
	Metadata map[string]string
}

// VolumeAttachment is one attachment as the volume lists it.
type VolumeAttachment struct {
	AttachmentID, ServerID, Device string
}

// VolumeSpec is a volume to create.
type VolumeSpec struct {
	SizeGB            int
	Name, Description string
	// ImageID makes the volume from the image (Cinder copies it through
	// Glance; the volume is then bootable).
	ImageID string
	// SnapshotID makes the volume from a snapshot.
	SnapshotID string
	// VolumeType and AvailabilityZone: "" is Cinder's default.
	VolumeType, AvailabilityZone string
	Metadata                     map[string]string
}

func fromVolume(v *volumes.Volume) Volume {
	out := Volume{ID: v.ID, Name: v.Name, Description: v.Description, Status: v.Status, SizeGB: v.Size, CreatedAt: v.CreatedAt,
		ProjectID: v.TenantID, ImageID: v.VolumeImageMetadata["image_id"], AvailabilityZone: v.AvailabilityZone,
		VolumeType: v.VolumeType, SnapshotID: v.SnapshotID, Metadata: map[string]string{}}
	for k, val := range v.Metadata {
		out.Metadata[k] = val
	}
	out.Bootable, _ = strconv.ParseBool(v.Bootable)
	for _, a := range v.Attachments {
		out.Attachments = append(out.Attachments, VolumeAttachment{AttachmentID: a.AttachmentID, ServerID: a.ServerID, Device: a.Device})
	}
	return out
}

// GetVolume reads a volume.
func (c *Client) GetVolume(ctx context.Context, id string) (Volume, error) {
	const op = "get volume"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Volume{}, err
	}
	v, err := volumes.Get(ctx, sc, id).Extract()
	if err != nil {
		return Volume{}, classify(op, err, ErrVolumeNotFound)
	}
	return fromVolume(v), nil
}

// ListVolumes lists the user's project's volumes (every page).
func (c *Client) ListVolumes(ctx context.Context) ([]Volume, error) {
	const op = "list volumes"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return nil, err
	}
	pages, err := volumes.List(sc, volumes.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, classify(op, err, nil)
	}
	vs, err := volumes.ExtractVolumes(pages)
	if err != nil {
		return nil, classify(op, err, nil)
	}
	out := make([]Volume, 0, len(vs))
	for i := range vs {
		out = append(out, fromVolume(&vs[i]))
	}
	return out, nil
}

// CreateVolume asks for a volume; it is "creating" until Cinder's volume
// service has made it (then "available", or "error").
func (c *Client) CreateVolume(ctx context.Context, spec VolumeSpec) (Volume, error) {
	const op = "create volume"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Volume{}, err
	}
	v, err := volumes.Create(ctx, sc, volumes.CreateOpts{Size: spec.SizeGB, Name: spec.Name,
		Description: spec.Description, ImageID: spec.ImageID, SnapshotID: spec.SnapshotID,
		VolumeType: spec.VolumeType, AvailabilityZone: spec.AvailabilityZone, Metadata: spec.Metadata}, nil).Extract()
	if err != nil {
		return Volume{}, classify(op, err, nil)
	}
	return fromVolume(v), nil
}

// SetBootable marks a volume bootable or not (os-set_bootable).
func (c *Client) SetBootable(ctx context.Context, id string, bootable bool) error {
	const op = "set bootable"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return err
	}
	return classify(op, volumes.SetBootable(ctx, sc, id, volumes.BootableOpts{Bootable: bootable}).ExtractErr(), ErrVolumeNotFound)
}

// DeleteVolume asks for a volume's deletion ("deleting", then gone). An
// attached volume: ErrVolumeNotAvailable.
func (c *Client) DeleteVolume(ctx context.Context, id string) error {
	const op = "delete volume"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return err
	}
	return classify(op, volumes.Delete(ctx, sc, id, volumes.DeleteOpts{}).ExtractErr(), ErrVolumeNotFound)
}

// FindVolume returns the volume of project named name (the oldest when
// several are), listing every project's with all_tenants when the
// Client's calls are an admin's (AllProjects). ErrVolumeNotFound when
// there is none: how a retry finds a volume whose create's answer was
// lost (ingot names the volumes it makes for a server's block devices).
func (c *Client) FindVolume(ctx context.Context, projectID, name string) (Volume, error) {
	const op = "find volume"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Volume{}, err
	}
	opts := volumes.ListOpts{Name: name}
	if c.all {
		opts.AllTenants, opts.TenantID = true, projectID
	}
	pages, err := volumes.List(sc, opts).AllPages(ctx)
	if err != nil {
		return Volume{}, classify(op, err, nil)
	}
	vs, err := volumes.ExtractVolumes(pages)
	if err != nil {
		return Volume{}, classify(op, err, nil)
	}
	var found *Volume
	for i := range vs {
		v := fromVolume(&vs[i])
		if v.Name != name || (projectID != "" && v.ProjectID != "" && v.ProjectID != projectID) {
			continue // Cinder's name filter is exact; the check costs nothing
		}
		if found == nil || v.CreatedAt.Before(found.CreatedAt) {
			found = &v
		}
	}
	if found == nil {
		return Volume{}, &Error{Op: op, Status: 404, Message: "no volume named " + name, kind: ErrVolumeNotFound}
	}
	return *found, nil
}

// CreateVolumeAs is CreateVolume with user's token as the caller's (the
// volume is then that user's project's, and Cinder reads the image with
// it), the Client's service token still sent along.
func (c *Client) CreateVolumeAs(ctx context.Context, user string, spec VolumeSpec) (Volume, error) {
	return c.WithUser(StaticToken(user)).CreateVolume(ctx, spec)
}
