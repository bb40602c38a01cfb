package lifecycle

import (
	"fmt"
	"slices"
	"time"
)

// The transitions of a server's record. Each is written once, here, with the
// intent it records (record before act: a flag saying what is about to be
// created is set in the same write that enters the phase creating it) and
// the event that tells it. Decide and Apply only choose among them.

// with returns a copy of s changed by set, for the bookkeeping transitions
// that change one field.
func with(s *Server, set func(*Server)) *Server {
	n := s.Clone()
	set(n)
	return n
}

// toPhase returns a copy of s in phase p since now.
func toPhase(s *Server, p Phase, now time.Time) *Server {
	n := s.Clone()
	n.Phase, n.PhaseSince, n.Held = p, now, false
	return n
}

// toReserving records the scheduler's choice: the node is ours to try.
func toReserving(s *Server, node string, now time.Time) (*Server, Event) {
	n := toPhase(s, PhaseReserving, now)
	n.NodeID = node
	n.DeployRequested = false
	n.CapacityWaitSince = time.Time{}
	return n, event(n, now, "conductor_schedule_and_build_instances", ResultSuccess,
		fmt.Sprintf("attempt %d: node %s chosen", len(s.Attempts)+1, node))
}

// toNetworking records the reservation; ports are about to be allocated.
func toNetworking(s *Server, now time.Time) (*Server, Event) {
	n := toPhase(s, PhaseNetworking, now)
	n.PortsAllocated = n.PortsAllocated || len(s.Spec.Networks) > 0
	return n, event(s, now, "compute_reserve_node", ResultSuccess, fmt.Sprintf("node %s reserved", s.NodeID))
}

// afterNetworking records the wired networks and enters the next build
// phase: volumes (their targets about to be created) or deploying.
func afterNetworking(s *Server, now time.Time) (*Server, []Event) {
	details := "no networks requested"
	if len(s.Spec.Networks) > 0 {
		details = fmt.Sprintf("%d port(s) attached to node %s", len(s.Spec.Networks), s.NodeID)
	}
	evs := []Event{event(s, now, "compute_attach_networks", ResultSuccess, details)}
	if len(s.Spec.Volumes) > 0 {
		n := toPhase(s, PhaseVolumes, now)
		n.VolumesOnNode = true
		return n, evs
	}
	n, ev := toDeploying(s, now)
	return n, append(evs, ev)
}

// afterVolumes records the volume targets and enters deploying.
func afterVolumes(s *Server, now time.Time) (*Server, []Event) {
	n, ev := toDeploying(s, now)
	return n, []Event{event(s, now, "compute_attach_volumes", ResultSuccess,
		fmt.Sprintf("%d volume target(s) on node %s", len(s.Spec.Volumes), s.NodeID)), ev}
}

// toDeploying enters deploying; the deploy is about to be requested.
func toDeploying(s *Server, now time.Time) (*Server, Event) {
	n := toPhase(s, PhaseDeploying, now)
	n.DeployRequested = true
	return n, event(s, now, "compute__do_build_and_run_instance", "", fmt.Sprintf("deploy requested on node %s", s.NodeID))
}

// toActive records the node's deploy as done, powered as Ironic shows it.
func toActive(s *Server, now time.Time, power Power) *Server {
	n := toPhase(s, PhaseActive, now)
	n.Fault = nil
	n.MaintenanceSince = time.Time{}
	n.PowerSeen = power
	n.InstanceInfoOn = "" // the deploy it spared is done; a rebuild patches its own
	if n.LaunchedAt.IsZero() {
		n.LaunchedAt = now
	}
	return n
}

// fail ends the current attempt: the server releases what the attempt holds,
// then reschedules or goes to ERROR.
func fail(in Input, reason Reason, step Step, msg string) Action {
	s := in.Server
	n := toPhase(s, PhaseReleasing, in.Now)
	n.Fault = &Fault{Reason: reason, Message: msg, Node: s.NodeID, Step: step, At: in.Now}
	addAttempt(n, n.Fault)
	n.MaintenanceSince = time.Time{}
	if s.NodeID != "" && !slices.Contains(n.Excluded, s.NodeID) {
		n.Excluded = append(n.Excluded, s.NodeID)
	}
	return save(n, in.Now, "attempt failed: "+string(reason), errorEvent(n, in.Now))
}

// giveBack records that a node we just reserved is not fit after all: the
// release takes our instance_uuid off it, then the server chooses again
// without spending an attempt (the reason is not an attempt's).
func giveBack(s *Server, now time.Time, why string) (*Server, Event) {
	n := toPhase(s, PhaseReleasing, now)
	n.Fault = &Fault{Reason: ReasonNodeUnsuitable, Message: why + " (the scheduler's view was stale)", Node: s.NodeID, Step: StepReserve, At: now}
	return n, event(s, now, "compute_reserve_node", ResultError, why+"; giving it back")
}

// toRescheduled sends a released attempt back to the scheduler.
func toRescheduled(s *Server, now time.Time) *Server {
	n := toPhase(s, PhasePending, now)
	n.Fault = nil
	n.DeployRequested = false
	n.CapacityWaitSince = time.Time{}
	return n
}

// toError is the stable failure with its fault (I5).
func toError(s *Server, now time.Time, f *Fault) *Server {
	n := toPhase(s, PhaseError, now)
	n.MaintenanceSince = time.Time{}
	if f == nil {
		f = &Fault{Reason: ReasonBuildTimeout, Message: "build failed", At: now}
	}
	cp := *f
	n.Fault = &cp
	return n
}

// dropNode forgets the node: the server no longer holds it (released, gone,
// or someone else's now).
func dropNode(s *Server) *Server {
	n := s.Clone()
	n.NodeID, n.Held = "", false
	n.DeployRequested, n.InstanceInfoOn = false, ""
	n.VolumesOnNode = false // removed, gone with the node, or stranded there (VolumesStrandedOn)
	n.MaintenanceSince = time.Time{}
	return n
}

// strand records that our volume targets stay on a node another instance
// now holds (I7 forbids touching it): those volumes may never be attached
// elsewhere (I8), and the server lets go of the node.
func strand(s *Server) *Server {
	n := dropNode(s)
	n.VolumesStrandedOn = s.NodeID
	return n
}

// addAttempt records the failed attempt fault f describes.
func addAttempt(n *Server, f *Fault) {
	n.Attempts = append(n.Attempts, Attempt{Node: f.Node, Step: f.Step, Reason: f.Reason, Message: f.Message, At: f.At})
}

// toFailed is a failure that ends in ERROR at once, never rescheduled (a
// build past its deadline, a built server's node lost, an operation
// failed): the fault (on the server's node) and its attempt recorded, an
// operation pending ended.
func toFailed(s *Server, now time.Time, reason Reason, step Step, msg string) *Server {
	n := toError(s, now, &Fault{Reason: reason, Message: msg, Node: s.NodeID, Step: step, At: now})
	addAttempt(n, n.Fault)
	endOp(n, s)
	return n
}

// maintenanceSince records when the node was first seen in maintenance
// during a deploy (zero: it left maintenance).
func maintenanceSince(s *Server, at time.Time) *Server {
	return with(s, func(n *Server) { n.MaintenanceSince = at })
}

// capacityWait records that a build waits, since now, for nodes of its
// class on their way back.
func capacityWait(s *Server, now time.Time) *Server {
	return with(s, func(n *Server) { n.CapacityWaitSince = now })
}

// rechosen sends a server whose reservation did not happen (why) back to
// the scheduler without spending an attempt, excluding the node if asked.
func rechosen(s *Server, now time.Time, why string, exclude bool) (*Server, Event) {
	n := toPhase(dropNode(s), PhasePending, now)
	if exclude && !slices.Contains(n.Excluded, s.NodeID) {
		n.Excluded = append(n.Excluded, s.NodeID)
	}
	return n, event(s, now, "compute_reserve_node", ResultError, why+"; choosing another")
}

// volumesDetached records our volume targets removed from the node.
func volumesDetached(s *Server) *Server { return with(s, func(n *Server) { n.VolumesOnNode = false }) }

// volumesReleased records the end of the server's hold on its volumes.
func volumesReleased(s *Server) *Server {
	return with(s, func(n *Server) { n.VolumesReleased, n.VolumeToken = true, "" })
}

// portsFreed records every port of the server freed.
func portsFreed(s *Server) *Server { return with(s, func(n *Server) { n.PortsAllocated = false }) }

// toDeleting accepts the user's delete.
func toDeleting(s *Server, now time.Time) *Server {
	n := toPhase(s, PhaseDeleting, now)
	n.DeleteFrom = s.Phase
	n.MaintenanceSince = time.Time{}
	return n
}

// toDeleted ends the delete: gone for the user (what it still holds is
// released in the background).
func toDeleted(s *Server, now time.Time) *Server { return toPhase(s, PhaseDeleted, now) }

// synced follows what Ironic shows of a resting server: phase p, power seen.
func synced(s *Server, p Phase, power Power, now time.Time) *Server {
	n := s.Clone()
	if p != s.Phase {
		n = toPhase(s, p, now)
	}
	n.PowerSeen = power
	return n
}

// toOp enters phase p of an operation (or, after a rebuild from stopped,
// of the power-off that follows it), bounded by deadline.
func toOp(s *Server, p Phase, now, deadline time.Time) *Server {
	n := toPhase(s, p, now)
	n.Fault = nil // a rebuild from a reset-to-error server leaves that fault behind
	n.Deadline = deadline
	n.OpSent, n.OpFallback, n.OpFault = false, false, nil
	n.StopAfterRebuild = s.Op.Kind == OpRebuild && s.Phase == PhaseStopped
	// Record before act: an interface attach may make a port.
	n.PortsAllocated = n.PortsAllocated || s.Op.Kind == OpAttachInterface
	// Record before act: an attach's target may exist from here on.
	n.VolumesOnNode = n.VolumesOnNode || s.Op.Kind == OpAttachVolume
	// Record before act: a detach from ACTIVE powers the node off first.
	if s.Op.Kind == OpDetachVolume && s.Phase == PhaseActive {
		n.Cycle = CyclePowerOff
	}
	return n
}

// toUndoAttach records a failed attach being undone: the detach of its
// volume, under a deadline of its own.
func toUndoAttach(s *Server, now, deadline time.Time) *Server {
	n := toPhase(s, PhaseDetachingVolume, now)
	n.Deadline, n.OpSent, n.OpFallback = deadline, false, true
	return n
}

// opSent records that Ironic accepted the operation's call.
func opSent(s *Server) *Server { return with(s, func(n *Server) { n.OpSent = true }) }

// opFallback records a soft reboot refused: the reboot goes on hard.
func opFallback(s *Server) *Server { return with(s, func(n *Server) { n.OpFallback = true }) }

// endOp records the pending operation carried out or given up on.
func endOp(n, s *Server) {
	n.OpDone = s.OpGen
	n.OpSent, n.OpFallback, n.StopAfterRebuild, n.Cycle = false, false, false, ""
}

// opDropped ends the pending operation with nothing else changed (nothing
// to do, or no longer possible).
func opDropped(s *Server) *Server {
	n := s.Clone()
	endOp(n, s)
	return n
}

// toOpDone ends the operation with the server resting in phase p.
func toOpDone(s *Server, p Phase, now time.Time) *Server {
	n := toPhase(s, p, now)
	endOp(n, s)
	if p == PhaseStopped {
		n.PowerSeen = PowerOff
	} else if p == PhaseActive && (s.Phase == PhasePoweringOn || s.Phase == PhaseRebooting) {
		n.PowerSeen = PowerOn
	}
	return n
}

// toResetError carries out an admin's reset to error: the server keeps its
// node (HeldInError) under fault f.
func toResetError(s *Server, now time.Time, f *Fault) *Server {
	n := toError(s, now, f)
	endOp(n, s)
	n.Held = true
	return n
}

// toResetActive carries out an admin's reset to active of a server held in
// error: back to phase p, where its node shows it, powered as seen.
func toResetActive(s *Server, p Phase, power Power, now time.Time) *Server {
	n := toOpDone(s, p, now)
	n.Fault = nil
	n.PowerSeen = power
	return n
}
