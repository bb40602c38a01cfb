package cinder

import (
	"context"
	"errors"
	"net/http"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
)

// Attachment is one of Cinder's attachments (a volume reserved for, or
// attached to, one server).
type Attachment struct {
	ID, VolumeID string
	// ServerID is the attachment's instance_uuid.
	ServerID string
	// Status: reserved (no connector yet), attaching, attached, …
	Status string
	// Mode: rw or ro.
	Mode string
	// ConnectionInfo is empty until a connector was given.
	ConnectionInfo ConnectionInfo
}

// ConnectionInfo is how the server reaches the volume: for iSCSI, Data
// carries target_iqn, target_portal, target_lun, auth_* (what an Ironic
// volume target's properties take).
type ConnectionInfo struct {
	DriverVolumeType string
	Data             map[string]any
}

// Connector is the server's side of the connection, as Nova sends it for a
// bare-metal node: the initiator is the node's Ironic volume connector of
// type iqn.
type Connector struct {
	Initiator  string
	Host       string
	Mountpoint string // e.g. /dev/sda for the boot volume
	Platform   string // e.g. x86_64
	OSType     string // "" means baremetal
	Multipath  bool
}

func (k Connector) toMap() map[string]any {
	os := k.OSType
	if os == "" {
		os = "baremetal"
	}
	m := map[string]any{"initiator": k.Initiator, "host": k.Host, "platform": k.Platform,
		"os_type": os, "multipath": k.Multipath}
	if k.Mountpoint != "" {
		m["mountpoint"] = k.Mountpoint
	}
	return m
}

func fromAttachment(a *attachments.Attachment) Attachment {
	out := Attachment{ID: a.ID, VolumeID: a.VolumeID, ServerID: a.Instance, Status: a.Status, Mode: a.AttachMode}
	// The attachments API answers the driver's data flat, with
	// driver_volume_type and attachment_id beside it; Nova rebuilds the
	// {driver_volume_type, data} form from it.
	if len(a.ConnectionInfo) > 0 {
		out.ConnectionInfo.Data = map[string]any{}
		for k, v := range a.ConnectionInfo {
			switch k {
			case "driver_volume_type":
				out.ConnectionInfo.DriverVolumeType, _ = v.(string)
			case "attachment_id":
			default:
				out.ConnectionInfo.Data[k] = v
			}
		}
	}
	return out
}

// CreateAttachment reserves volumeID for serverID (the volume goes
// "reserved"); with a connector, the attachment carries the connection
// info at once ("attaching"). Nova creates it without and updates it. An
// attached volume of another server: ErrVolumeNotAvailable.
func (c *Client) CreateAttachment(ctx context.Context, volumeID, serverID string, k *Connector) (Attachment, error) {
	const op = "create attachment"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Attachment{}, err
	}
	opts := attachments.CreateOpts{VolumeUUID: volumeID, InstanceUUID: serverID}
	if k != nil {
		opts.Connector = k.toMap()
	}
	a, err := attachments.Create(ctx, sc, opts).Extract()
	if err != nil {
		return Attachment{}, classify(op, err, ErrVolumeNotFound)
	}
	return fromAttachment(a), nil
}

// UpdateAttachment gives the attachment the server's connector and returns
// it with the connection info.
func (c *Client) UpdateAttachment(ctx context.Context, id string, k Connector) (Attachment, error) {
	const op = "update attachment"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Attachment{}, err
	}
	a, err := attachments.Update(ctx, sc, id, attachments.UpdateOpts{Connector: k.toMap()}).Extract()
	if err != nil {
		return Attachment{}, classify(op, err, ErrAttachmentNotFound)
	}
	return fromAttachment(a), nil
}

// CompleteAttachment marks the attachment in use (os-complete: the volume
// goes "in-use").
func (c *Client) CompleteAttachment(ctx context.Context, id string) error {
	const op = "complete attachment"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return err
	}
	return classify(op, attachments.Complete(ctx, sc, id).ExtractErr(), ErrAttachmentNotFound)
}

// DeleteAttachment removes the attachment (the volume is "available" after
// its last). Without a service token, Cinder first asks the catalog's
// compute endpoint whether the server still uses it: ErrComputeRefused.
func (c *Client) DeleteAttachment(ctx context.Context, id string) error {
	const op = "delete attachment"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return err
	}
	err = classify(op, attachments.Delete(ctx, sc, id).ExtractErr(), ErrAttachmentNotFound)
	// Cinder's 500 says nothing; without a service token its call-back
	// to compute is what fails (no compute endpoint, or compute down).
	if e, ok := errors.AsType[*Error](err); ok && c.service == nil && e.Status == http.StatusInternalServerError {
		e.kind = errors.Join(ErrComputeRefused, ErrUnavailable)
	}
	return err
}

// GetAttachment reads one attachment.
func (c *Client) GetAttachment(ctx context.Context, id string) (Attachment, error) {
	const op = "get attachment"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return Attachment{}, err
	}
	a, err := attachments.Get(ctx, sc, id).Extract()
	if err != nil {
		return Attachment{}, classify(op, err, ErrAttachmentNotFound)
	}
	return fromAttachment(a), nil
}

// ListAttachments lists the attachments of serverID, of volumeID when it
// is not empty (every page, with connection info).
func (c *Client) ListAttachments(ctx context.Context, serverID, volumeID string) ([]Attachment, error) {
	const op = "list attachments"
	sc, err := c.sc(ctx, op)
	if err != nil {
		return nil, err
	}
	pages, err := attachments.List(sc, attachments.ListOpts{InstanceID: serverID, VolumeID: volumeID, AllTenants: c.all}).AllPages(ctx)
	if err != nil {
		return nil, classify(op, err, nil)
	}
	as, err := attachments.ExtractAttachments(pages)
	if err != nil {
		return nil, classify(op, err, nil)
	}
	out := make([]Attachment, 0, len(as))
	for i := range as {
		out = append(out, fromAttachment(&as[i]))
	}
	return out, nil
}

// EnsureAttachment returns serverID's attachment of volumeID, creating it
// (without a connector, as Nova) only when there is none: a step retried
// after a crash finds the attachment it made instead of making a second.
// created says which.
func (c *Client) EnsureAttachment(ctx context.Context, volumeID, serverID string) (a Attachment, created bool, err error) {
	found, err := c.ListAttachments(ctx, serverID, volumeID)
	if err != nil {
		return Attachment{}, false, err
	}
	if len(found) > 0 {
		return found[0], false, nil
	}
	a, err = c.CreateAttachment(ctx, volumeID, serverID, nil)
	return a, err == nil, err
}
