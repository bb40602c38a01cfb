package lifecycle

import (
	"fmt"
	"time"
)

// A volume attached or detached after the build (os-volume_attachments'
// POST and DELETE) is a day-2 operation of its own phase. The API holds
// the volume for the server (and lists it in Spec.Volumes) in the write
// that records the attach; one idempotent action then does every step
// (KindAttachVolume, KindDetachVolume); a detach from ACTIVE powers the
// node off for it and on again (detachcycle.go). A failed attach is undone by the
// detach of the same volume (OpFallback set in phase detaching_volume),
// so nothing is left half-made. Ironic attaches a node's volume targets at
// power-on: the machine sees the volume from its next boot.

// volumeOpFrom is the resting phase a volume (or interface) operation
// started from and goes back to: attaching or detaching changes nothing of
// the power (a detach from ACTIVE powers the node off and on again, and
// stays ACTIVE throughout).
func volumeOpFrom(s *Server) Phase {
	if s.PowerSeen == PowerOff && s.Cycle == "" {
		return PhaseStopped
	}
	return PhaseActive
}

// volumeOpDeadline ends a volume operation past its deadline: an attach is
// undone (with a deadline of its own), a detach or an undo gives up with
// the volume still held by the server (a later detach or the delete
// removes it).
func volumeOpDeadline(in Input, cfg Config) Action {
	s := in.Server
	if s.Cycle != "" {
		return cycleDeadline(in, cfg)
	}
	d := cfg.timeout(s.Op.Kind)
	if s.Phase == PhaseAttachingVolume {
		return save(toUndoAttach(s, in.Now, in.Now.Add(d)), in.Now, "attach timed out; undoing it",
			opEvent(s, in.Now, "", fmt.Sprintf("attach of volume %s to node %s did not finish within %s; undoing it", s.Op.VolumeID, s.NodeID, d)))
	}
	what := "detach"
	if s.OpFallback {
		what = "undoing the attach"
	}
	return opFinished(in, volumeOpFrom(s), ResultError, fmt.Sprintf(
		"%s of volume %s on node %s did not finish within %s; the volume stays attached (stop the server and detach it, or delete the server)",
		what, s.Op.VolumeID, s.NodeID, d))
}

// decideVolumeOp asks for the operation's one action until it succeeds,
// is refused, or the deadline passes.
func decideVolumeOp(in Input) Action {
	s := in.Server
	if s.Cycle != "" {
		return decideCycle(in)
	}
	if s.Phase == PhaseAttachingVolume {
		return Action{Kind: KindAttachVolume, Why: "attach volume " + s.Op.VolumeID}
	}
	why := "detach volume " + s.Op.VolumeID
	if s.OpFallback {
		why = "undo the attach of volume " + s.Op.VolumeID
	}
	return Action{Kind: KindDetachVolume, Why: why}
}

// applyVolumeOp is what the outcome of a volume operation's action means.
func applyVolumeOp(s *Server, a Action, r Result, now time.Time, cfg Config) Applied {
	if s.Cycle != "" {
		return applyCycle(s, a, r, now, cfg)
	}
	in := Input{Server: s, Now: now}
	vol, node := s.Op.VolumeID, s.NodeID
	switch {
	case r.Outcome == Gone:
		return fromAction(opFailed(in, ReasonNodeDeleted, fmt.Sprintf("node %s was deleted during the %s of volume %s", node, s.Op.Kind, vol)))
	case a.Kind == KindAttachVolume && r.Outcome == OK:
		return fromAction(opFinished(in, volumeOpFrom(s), ResultSuccess, fmt.Sprintf(
			"volume %s attached to node %s (the machine sees it from its next boot)", vol, node)))
	case a.Kind == KindAttachVolume:
		d := cfg.timeout(OpAttachVolume)
		return stop(applied(toUndoAttach(s, now, now.Add(d)), now, opEvent(s, now, "", fmt.Sprintf(
			"attach of volume %s to node %s failed (%s); undoing it", vol, node, r.Message))))
	case r.Outcome == OK && s.OpFallback:
		return fromAction(opFinished(in, volumeOpFrom(s), ResultError, fmt.Sprintf("attach of volume %s to node %s failed; undone", vol, node)))
	case r.Outcome == OK:
		return fromAction(opFinished(in, volumeOpFrom(s), ResultSuccess, fmt.Sprintf("volume %s detached from node %s", vol, node)))
	}
	return stop(fromAction(opFinished(in, volumeOpFrom(s), ResultError, fmt.Sprintf(
		"detach of volume %s from node %s refused (%s); the volume stays attached", vol, node, r.Message))))
}
