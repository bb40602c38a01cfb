package reconciler

import (
	"context"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// VolumeStore is the volume registry (implemented by the store).
type VolumeStore interface {
	ServerVolumes(ctx context.Context, serverID string) ([]store.Volume, error)
	UpdateVolume(ctx context.Context, v store.Volume) error
	ReleaseVolume(ctx context.Context, id, serverID string, destroy bool) error
}

// connectorID is the iSCSI initiator name ingot gives a node.
func connectorID(node string) string { return "iqn.2026-11.io.ingot:node-" + node }

// targetBootIndexes numbers the volume targets of one node: the boot volume
// 0, data volumes 1, 2, … (Ironic wants a distinct boot_index per target).
func targetBootIndexes(vols []store.Volume) map[string]int {
	idx := map[string]int{}
	next := 1
	for _, v := range vols {
		if v.BootIndex == 0 {
			idx[v.ID] = 0
		}
	}
	for _, v := range vols {
		if _, ok := idx[v.ID]; !ok {
			idx[v.ID] = next
			next++
		}
	}
	return idx
}

// attachVolumes creates the node's connector and a target per volume, each
// step idempotent (what exists is listed first), then marks the volumes in-use.
func (r *Reconciler) attachVolumes(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	if r.volumes == nil {
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: "this ingot has no volume registry"}
	}
	vols, err := r.volumes.ServerVolumes(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	for i := range vols {
		if vols[i].NodeID != s.NodeID {
			// Record before act: cleanup finds the target even after a crash.
			vols[i].NodeID = s.NodeID
			vols[i].StatusReason = "attaching to node " + s.NodeID
			if err := r.volumes.UpdateVolume(ctx, vols[i]); err != nil {
				return resultOf(err)
			}
		}
	}
	conns, err := r.ironic.ListVolumeConnectors(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	haveConn := false
	for _, c := range conns {
		haveConn = haveConn || c.ConnectorID == connectorID(s.NodeID)
	}
	if !haveConn {
		if _, err := r.ironic.CreateVolumeConnector(ctx, s.NodeID, "iqn", connectorID(s.NodeID)); err != nil {
			return resultOf(err)
		}
	}
	tgts, err := r.ironic.ListVolumeTargets(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	have := map[string]bool{}
	for _, t := range tgts {
		have[t.VolumeID] = true
	}
	idx := targetBootIndexes(vols)
	boot := false
	for _, v := range vols {
		boot = boot || v.BootIndex == 0
		if have[v.ID] {
			continue
		}
		_, err := r.ironic.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: s.NodeID, VolumeType: "iscsi", VolumeID: v.ID,
			BootIndex: idx[v.ID], Properties: map[string]any{"target_iqn": v.TargetIQN, "target_lun": v.TargetLUN,
				"target_portal": v.TargetPortal, "auth_method": "none"}})
		if err != nil {
			return resultOf(err)
		}
	}
	if boot {
		if err := r.ironic.SetStorageInterface(ctx, s.NodeID, "external"); err != nil {
			return resultOf(err)
		}
	}
	for _, v := range vols {
		v.Status, v.StatusReason = store.VolumeInUse, ""
		if err := r.volumes.UpdateVolume(ctx, v); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// detachVolumes powers the node off (Ironic removes targets only then) and
// removes our targets and connector; the volumes go back to reserved.
func (r *Reconciler) detachVolumes(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	if r.volumes == nil {
		return lifecycle.Result{Outcome: lifecycle.OK}
	}
	vols, err := r.volumes.ServerVolumes(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	ours := map[string]bool{}
	for _, v := range vols {
		ours[v.ID] = true
	}
	tgts, err := r.ironic.ListVolumeTargets(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	conns, err := r.ironic.ListVolumeConnectors(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	var doomedT, doomedC []string
	for _, t := range tgts {
		if ours[t.VolumeID] {
			doomedT = append(doomedT, t.UUID)
		}
	}
	for _, c := range conns {
		if c.ConnectorID == connectorID(s.NodeID) {
			doomedC = append(doomedC, c.UUID)
		}
	}
	if len(doomedT)+len(doomedC) > 0 {
		// NOTE: Ironic deletes targets and connectors only on a node whose
		// power_state is exactly "power off" (docs/ironic.md §5), and a power
		// change holds the node's lock for a moment: ask once, then come back
		// on a later tick rather than racing the lock.
		n, err := r.ironic.GetNode(ctx, s.NodeID)
		if err != nil {
			return resultOf(err)
		}
		if n.PowerState != "power off" {
			if err := r.ironic.SetPowerOff(ctx, s.NodeID); err != nil {
				return resultOf(err)
			}
			return lifecycle.Result{Outcome: lifecycle.Transient, Message: "waiting for node " + s.NodeID + " to power off"}
		}
		if n.Reservation != "" {
			return lifecycle.Result{Outcome: lifecycle.Transient, Message: "node " + s.NodeID + " is locked"}
		}
	}
	for _, id := range doomedT {
		if err := r.ironic.DeleteVolumeTarget(ctx, id); err != nil && !errors.Is(err, ironic.ErrNotFound) {
			return resultOf(err)
		}
	}
	for _, id := range doomedC {
		if err := r.ironic.DeleteVolumeConnector(ctx, id); err != nil && !errors.Is(err, ironic.ErrNotFound) {
			return resultOf(err)
		}
	}
	for _, v := range vols {
		v.NodeID, v.Status, v.StatusReason = "", store.VolumeReserved, ""
		if err := r.volumes.UpdateVolume(ctx, v); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// strandVolumes marks the volumes whose targets sit on a node that another
// instance now holds: ingot may not touch that node (I7), so the volumes must
// never be handed out again until an operator removes the targets.
func (r *Reconciler) strandVolumes(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	if r.volumes == nil {
		return lifecycle.Result{Outcome: lifecycle.OK}
	}
	vols, err := r.volumes.ServerVolumes(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	for _, v := range vols {
		if v.NodeID != s.NodeID {
			continue
		}
		v.Status = store.VolumeError
		v.StatusReason = fmt.Sprintf("its Ironic volume target was left on node %s, which another instance now holds; "+
			"remove the target there, then delete this volume", s.NodeID)
		if err := r.volumes.UpdateVolume(ctx, v); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// releaseVolumes ends the server's hold: volumes become available, or are
// deleted with the server when it asked for delete_on_termination.
func (r *Reconciler) releaseVolumes(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	if r.volumes == nil {
		return lifecycle.Result{Outcome: lifecycle.OK}
	}
	vols, err := r.volumes.ServerVolumes(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	for _, v := range vols {
		destroy := s.Desired == lifecycle.DesiredDeleted && v.DeleteOnTermination
		if err := r.volumes.ReleaseVolume(ctx, v.ID, s.ID, destroy); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// noteVolumes says on each volume why it is still held while its server is
// being deleted or failed and Ironic still has to let go of it.
func (r *Reconciler) noteVolumes(ctx context.Context, s *lifecycle.Server) {
	if r.volumes == nil || !s.HoldsVolumes() || !s.VolumesOnNode {
		return
	}
	vols, err := r.volumes.ServerVolumes(ctx, s.ID)
	if err != nil {
		return
	}
	for _, v := range vols {
		reason := fmt.Sprintf("waiting for Ironic to remove its volume target from node %s", s.NodeID)
		status := v.Status
		if s.Desired == lifecycle.DesiredDeleted {
			status = store.VolumeDeleting
		}
		if v.StatusReason == reason && v.Status == status {
			continue
		}
		v.Status, v.StatusReason = status, reason
		if err := r.volumes.UpdateVolume(ctx, v); err != nil {
			r.log.Warn("volume status", logServer, s.ID, "volume", v.ID, "err", err)
		}
	}
}
