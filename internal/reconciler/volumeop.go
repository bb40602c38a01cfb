package reconciler

import (
	"context"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/nodeview"
	"github.com/ingot-dev/ingot/internal/store"
)

// attachVolume attaches the volume of s's pending attach (os-volume_attachments
// POST) to s.NodeID: the node's connector, then with Cinder the attachment
// (found again by server and volume after a crash, recorded at once), the
// volume target from its connection info, os-complete; with the embedded
// registry the target from the registry's description. Each step looks
// first, so a retry makes nothing twice. The registry row shows the node
// before any call (syncVolumes).
func (r *Reconciler) attachVolume(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	v, err := r.store.GetVolume(ctx, s.Op.VolumeID)
	if err != nil {
		return resultOf(err)
	}
	if v.ServerID != s.ID || v.Status == store.VolumeError || v.NodeID != s.NodeID {
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: fmt.Sprintf(
			"volume %s is not held for node %s (server %q, node %q, status %s)", v.ID, s.NodeID, v.ServerID, v.NodeID, v.Status)}
	}
	if res := r.ensureConnector(ctx, s.NodeID); res.Outcome != lifecycle.OK {
		return res
	}
	tgts, err := r.ironic.ListVolumeTargets(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	// A data volume: the first boot index after the node's targets (Ironic
	// wants them distinct; 0 is the boot volume's).
	idx, has := 1, false
	for _, t := range tgts {
		if t.VolumeID == v.ID {
			idx, has = t.BootIndex, true
			break
		}
		idx = max(idx, t.BootIndex+1)
	}
	if r.cinder == nil {
		if has {
			return lifecycle.Result{Outcome: lifecycle.OK}
		}
		_, err := r.ironic.CreateVolumeTarget(ctx, embeddedTarget(s.NodeID, v, idx))
		return resultOf(err)
	}
	att, err := r.nodeAttachment(ctx, s, v, idx, "cinder_attach_volume_create")
	if err != nil {
		return cinderResult(err)
	}
	if !has {
		ci := att.ConnectionInfo
		if ci.DriverVolumeType == "" {
			return lifecycle.Result{Outcome: lifecycle.Rejected, Message: fmt.Sprintf(
				"Cinder gave attachment %s of volume %s no connection info", att.ID, v.ID)}
		}
		if _, err := r.ironic.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: s.NodeID, VolumeType: ci.DriverVolumeType,
			VolumeID: v.ID, BootIndex: idx, Properties: ci.Data}); err != nil {
			return resultOf(err)
		}
	}
	if att.Status != "attached" {
		return cinderResult(r.cinder.CompleteAttachment(ctx, att.ID))
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// embeddedTarget is the Ironic volume target of an embedded-registry volume.
func embeddedTarget(node string, v store.Volume, bootIndex int) ironic.VolumeTarget {
	return ironic.VolumeTarget{NodeID: node, VolumeType: "iscsi", VolumeID: v.ID, BootIndex: bootIndex,
		Properties: map[string]any{"target_iqn": v.TargetIQN, "target_lun": v.TargetLUN,
			"target_portal": v.TargetPortal, "auth_method": "none"}}
}

// detachVolume detaches the volume of s's pending detach, or undoes a
// failed attach: its target comes off the node (Ironic removes one only
// from a powered-off node; a node powered on is waited for, within the
// deadline), then its Cinder attachments go, then the server's hold on it
// ends. A volume the server no longer holds is detached already.
func (r *Reconciler) detachVolume(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	v, err := r.store.GetVolume(ctx, s.Op.VolumeID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && v.ServerID != s.ID) {
		return lifecycle.Result{Outcome: lifecycle.OK}
	}
	if err != nil {
		return resultOf(err)
	}
	if v.Status == store.VolumeError {
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: "volume " + v.ID + " is stranded: " + v.StatusReason}
	}
	tgts, err := r.ironic.ListVolumeTargets(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	var doomed []string
	for _, t := range tgts {
		if t.VolumeID == v.ID {
			doomed = append(doomed, t.UUID)
		}
	}
	if len(doomed) > 0 {
		n, err := r.ironic.GetNode(ctx, s.NodeID)
		if err != nil {
			return resultOf(err)
		}
		if nodeview.Of(n, s.ID).Power != lifecycle.PowerOff {
			return lifecycle.Result{Outcome: lifecycle.Transient, Message: fmt.Sprintf(
				"node %s is not powered off: Ironic removes the target of volume %s only from a powered-off node", s.NodeID, v.ID)}
		}
		if n.Reservation != "" {
			return lifecycle.Result{Outcome: lifecycle.Transient, Message: "node " + s.NodeID + " is locked"}
		}
	}
	for _, id := range doomed {
		if err := r.ironic.DeleteVolumeTarget(ctx, id); err != nil && !errors.Is(err, ironic.ErrNotFound) {
			return resultOf(err)
		}
	}
	if r.cinder != nil {
		if res := r.dropAttachments(ctx, s, []store.Volume{v}); res.Outcome != lifecycle.OK {
			return res
		}
	}
	// With Cinder the registry row only stood for the hold: it goes.
	return resultOf(r.store.ReleaseVolume(ctx, v.ID, s.ID, r.cinder != nil))
}
