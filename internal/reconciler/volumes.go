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
// step idempotent (what exists is listed first). The registry already shows
// the node (syncVolumes ran before it: record before act).
func (r *Reconciler) attachVolumes(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	vols, err := r.store.ServerVolumes(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	for _, v := range vols {
		if v.Status == store.VolumeError || v.NodeID != s.NodeID {
			// I8 backstop: the core never asks this of a stranded volume.
			return lifecycle.Result{Outcome: lifecycle.Rejected, Message: fmt.Sprintf(
				"volume %s may still have a target on node %q (status %s): not attaching it to node %s", v.ID, v.NodeID, v.Status, s.NodeID)}
		}
	}
	if r.cinder != nil {
		return r.attachCinder(ctx, s, vols)
	}
	if res := r.ensureConnector(ctx, s.NodeID); res.Outcome != lifecycle.OK {
		return res
	}
	return r.eachVolume(ctx, s.NodeID, vols, func(v store.Volume, bootIndex int, hasTarget bool) lifecycle.Result {
		if hasTarget {
			return lifecycle.Result{Outcome: lifecycle.OK}
		}
		_, err := r.ironic.CreateVolumeTarget(ctx, embeddedTarget(s.NodeID, v, bootIndex))
		return resultOf(err)
	})
}

// eachVolume lists node's volume targets, calls step for each volume with
// its target's boot index and whether the node has a target of it, and
// then, when one is the boot volume, sets the node's storage interface to
// external (the targets are managed outside Ironic: by ingot, or by the
// Cinder attachments it made, so Ironic's own Cinder calls stay off).
func (r *Reconciler) eachVolume(ctx context.Context, node string, vols []store.Volume,
	step func(v store.Volume, bootIndex int, hasTarget bool) lifecycle.Result) lifecycle.Result {
	tgts, err := r.ironic.ListVolumeTargets(ctx, node)
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
		if res := step(v, idx[v.ID], have[v.ID]); res.Outcome != lifecycle.OK {
			return res
		}
	}
	if boot {
		if err := r.ironic.SetStorageInterface(ctx, node, "external"); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// ensureConnector creates the node's iqn volume connector unless it has it.
func (r *Reconciler) ensureConnector(ctx context.Context, node string) lifecycle.Result {
	conns, err := r.ironic.ListVolumeConnectors(ctx, node)
	if err != nil {
		return resultOf(err)
	}
	for _, c := range conns {
		if c.ConnectorID == connectorID(node) {
			return lifecycle.Result{Outcome: lifecycle.OK}
		}
	}
	_, err = r.ironic.CreateVolumeConnector(ctx, node, "iqn", connectorID(node))
	return resultOf(err)
}

// detachVolumes powers the node off (Ironic removes targets only then) and
// removes our targets and connector.
func (r *Reconciler) detachVolumes(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	vols, err := r.store.ServerVolumes(ctx, s.ID)
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
		if nodeview.Of(n, s.ID).Power != lifecycle.PowerOff {
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
	if r.cinder != nil {
		// The targets are gone: now the attachments may go.
		return r.dropAttachments(ctx, s, vols)
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// releaseVolumes ends the server's hold: volumes become available, or are
// deleted with the server when it asked for delete_on_termination.
func (r *Reconciler) releaseVolumes(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	vols, err := r.store.ServerVolumes(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	if r.cinder != nil {
		return r.releaseCinder(ctx, s, vols)
	}
	for _, v := range vols {
		if err := r.store.ReleaseVolume(ctx, v.ID, s.ID, destroys(s, v)); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// syncVolumes writes what the core says the registry must show for the
// volumes s holds (lifecycle.Marks), where it differs. Idempotent; a
// stranded volume keeps its error whatever the mark (it is never handed
// out again until an operator acts).
func (r *Reconciler) syncVolumes(ctx context.Context, s *lifecycle.Server) error {
	if _, ok := lifecycle.Marks(s); !ok {
		return nil
	}
	vols, err := r.store.ServerVolumes(ctx, s.ID)
	if err != nil {
		return err
	}
	for _, v := range vols {
		mark, _ := lifecycle.MarkOf(s, v.ID)
		status := string(mark.Status)
		if v.Status == store.VolumeError && status != store.VolumeError {
			continue
		}
		if v.Status == status && v.NodeID == mark.Node && v.StatusReason == mark.Reason {
			continue
		}
		v.Status, v.NodeID, v.StatusReason, v.UpdatedAt = status, mark.Node, mark.Reason, r.clock.Now()
		if err := r.store.UpdateVolume(ctx, v); err != nil {
			return fmt.Errorf("volume %s: %w", v.ID, err)
		}
	}
	return nil
}
