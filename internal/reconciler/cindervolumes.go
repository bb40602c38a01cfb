package reconciler

import (
	"context"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// Cinder is what the reconciler asks of Cinder with the cinder volume
// backend (implemented by *cinder.Client, calling with ingot's own token
// as the user's and the service token, every project's attachments
// listed).
type Cinder interface {
	ListAttachments(ctx context.Context, serverID, volumeID string) ([]cinder.Attachment, error)
	CreateAttachment(ctx context.Context, volumeID, serverID string, k *cinder.Connector) (cinder.Attachment, error)
	UpdateAttachment(ctx context.Context, id string, k cinder.Connector) (cinder.Attachment, error)
	CompleteAttachment(ctx context.Context, id string) error
	DeleteAttachment(ctx context.Context, id string) error
	DeleteVolume(ctx context.Context, id string) error
	// GetVolume, FindVolume (by project and name) and CreateVolumeAs
	// (with a user's token) make the volumes of a build's block devices
	// (madevolumes.go).
	GetVolume(ctx context.Context, id string) (cinder.Volume, error)
	FindVolume(ctx context.Context, projectID, name string) (cinder.Volume, error)
	CreateVolumeAs(ctx context.Context, user string, spec cinder.VolumeSpec) (cinder.Volume, error)
}

// cinderConnector is the node's side of an attachment, as Nova's Ironic
// driver sends it: the initiator is the node's Ironic volume connector.
func (r *Reconciler) cinderConnector(node string, bootIndex int) cinder.Connector {
	k := cinder.Connector{Initiator: connectorID(node), Host: r.cinderHost, Platform: "x86_64", OSType: "baremetal"}
	if bootIndex == 0 {
		k.Mountpoint = "/dev/sda"
	}
	return k
}

// attachCinder is attachVolumes with Cinder: for each volume, the
// attachment made for this node (found by server and volume, so one a
// crash kept from being recorded is found again rather than doubled),
// then the Ironic volume target from its connection info, then
// os-complete. Each step is recorded before the next is taken: the
// registry row shows the node before any call (syncVolumes), the
// attachment id right after Cinder answers, and the target is made only
// from a recorded attachment.
func (r *Reconciler) attachCinder(ctx context.Context, s *lifecycle.Server, vols []store.Volume) lifecycle.Result {
	if res := r.ensureConnector(ctx, s.NodeID); res.Outcome != lifecycle.OK {
		return res
	}
	return r.eachVolume(ctx, s.NodeID, vols, func(v store.Volume, bootIndex int, hasTarget bool) lifecycle.Result {
		att, err := r.nodeAttachment(ctx, s, v, bootIndex, "cinder_attachment_create")
		if err != nil {
			return cinderResult(err)
		}
		if !hasTarget {
			ci := att.ConnectionInfo
			if ci.DriverVolumeType == "" {
				return lifecycle.Result{Outcome: lifecycle.Rejected, Message: fmt.Sprintf(
					"Cinder gave attachment %s of volume %s no connection info", att.ID, v.ID)}
			}
			_, err := r.ironic.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: s.NodeID, VolumeType: ci.DriverVolumeType,
				VolumeID: v.ID, BootIndex: bootIndex, Properties: ci.Data})
			if err != nil {
				return resultOf(err)
			}
		}
		if att.Status != "attached" {
			return cinderResult(r.cinder.CompleteAttachment(ctx, att.ID))
		}
		return lifecycle.Result{Outcome: lifecycle.OK}
	})
}

// nodeAttachment returns s's attachment of v made for s.NodeID, with its
// connection info. An attachment ingot did not record for this node (made
// for a node the server left, or before a crash) is deleted first: its
// connection info may be another initiator's. The new one is recorded
// before anything is made from it.
// point names its crash points (before: and after: the create).
func (r *Reconciler) nodeAttachment(ctx context.Context, s *lifecycle.Server, v store.Volume, bootIndex int, point string) (cinder.Attachment, error) {
	found, err := r.cinder.ListAttachments(ctx, s.ID, v.ID)
	if err != nil {
		return cinder.Attachment{}, err
	}
	k := r.cinderConnector(s.NodeID, bootIndex)
	for _, a := range found {
		if a.ID == v.AttachmentID && v.AttachmentNode == s.NodeID {
			if a.ConnectionInfo.DriverVolumeType != "" {
				return a, nil
			}
			return r.cinder.UpdateAttachment(ctx, a.ID, k)
		}
	}
	for _, a := range found {
		if err := r.cinder.DeleteAttachment(ctx, a.ID); err != nil && !errors.Is(err, cinder.ErrAttachmentNotFound) {
			return cinder.Attachment{}, err
		}
	}
	r.step("before:" + point)
	a, err := r.cinder.CreateAttachment(ctx, v.ID, s.ID, &k)
	if err != nil {
		return cinder.Attachment{}, err
	}
	r.step("after:" + point)
	if err := r.store.SetVolumeAttachment(ctx, v.ID, s.ID, a.ID, s.NodeID); err != nil {
		return cinder.Attachment{}, fmt.Errorf("record attachment %s of volume %s: %w", a.ID, v.ID, err)
	}
	return a, nil
}

// dropAttachments deletes every attachment s has of the volumes in vols
// (after their targets are gone: detach, or a node that no longer exists)
// and forgets them. A stranded volume keeps its attachment: its target
// is still on a node another instance holds, and Cinder must not hand the
// volume out while it is there (I8).
func (r *Reconciler) dropAttachments(ctx context.Context, s *lifecycle.Server, vols []store.Volume) lifecycle.Result {
	for _, v := range vols {
		if v.Status == store.VolumeError {
			continue
		}
		found, err := r.cinder.ListAttachments(ctx, s.ID, v.ID)
		if err != nil {
			return cinderResult(err)
		}
		for _, a := range found {
			if err := r.cinder.DeleteAttachment(ctx, a.ID); err != nil && !errors.Is(err, cinder.ErrAttachmentNotFound) {
				return cinderResult(err)
			}
		}
		if v.AttachmentID != "" {
			if err := r.store.SetVolumeAttachment(ctx, v.ID, s.ID, "", ""); err != nil && !errors.Is(err, store.ErrNotFound) {
				return resultOf(err)
			}
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// releaseCinder ends the server's hold with Cinder: its attachments go
// (a node deleted out of band took the targets but not them), a volume
// asked for delete_on_termination is deleted in Cinder, and the registry
// row that stood for the hold is dropped (a stranded one stays).
func (r *Reconciler) releaseCinder(ctx context.Context, s *lifecycle.Server, vols []store.Volume) lifecycle.Result {
	if res := r.dropAttachments(ctx, s, vols); res.Outcome != lifecycle.OK {
		return res
	}
	if res := r.releaseUnmade(ctx, s); res.Outcome != lifecycle.OK {
		return res
	}
	for _, v := range vols {
		if v.Status != store.VolumeError && destroys(s, v) {
			err := r.cinder.DeleteVolume(ctx, v.ID)
			if errors.Is(err, cinder.ErrVolumeNotAvailable) {
				// Still detaching: look again.
				return lifecycle.Result{Outcome: lifecycle.Transient, Message: err.Error()}
			}
			if err != nil && !errors.Is(err, cinder.ErrVolumeNotFound) {
				return cinderResult(err)
			}
		}
		if err := r.store.ReleaseVolume(ctx, v.ID, s.ID, true); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// cinderResult classifies a Cinder error for the core: unreachable or
// failing is worth a retry, anything Cinder refused is a failed attach.
func cinderResult(err error) lifecycle.Result {
	if err == nil {
		return lifecycle.Result{Outcome: lifecycle.OK}
	}
	msg := err.Error()
	switch {
	case errors.Is(err, cinder.ErrUnavailable), errors.Is(err, cinder.ErrUnauthorized):
		return lifecycle.Result{Outcome: lifecycle.Transient, Message: msg}
	case errors.Is(err, cinder.ErrVolumeNotAvailable), errors.Is(err, cinder.ErrVolumeNotFound),
		errors.Is(err, cinder.ErrForbidden), errors.Is(err, cinder.ErrBadRequest), errors.Is(err, cinder.ErrDuplicateConnector),
		errors.Is(err, cinder.ErrImageNotUsable):
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: msg}
	case errors.Is(err, cinder.ErrAttachmentNotFound):
		return lifecycle.Result{Outcome: lifecycle.Transient, Message: msg}
	}
	return resultOf(err)
}
