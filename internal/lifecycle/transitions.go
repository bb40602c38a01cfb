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

// toPhase returns a copy of s in phase p since now.
func toPhase(s *Server, p Phase, now time.Time) *Server {
	n := s.Clone()
	n.Phase = p
	n.PhaseSince = now
	return n
}

// toReserving records the scheduler's choice: the node is ours to try.
func toReserving(s *Server, node string, now time.Time) (*Server, Event) {
	n := toPhase(s, PhaseReserving, now)
	n.NodeID = node
	n.DeployRequested = false
	n.CapacityWaitSince = time.Time{}
	return n, Event{ServerID: s.ID, RequestID: s.CreateRequestID, Action: ActionCreate,
		Name: "conductor_schedule_and_build_instances", Node: node, Result: ResultSuccess,
		Details: fmt.Sprintf("attempt %d: node %s chosen", len(s.Attempts)+1, node), Start: now, Finish: now}
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

// toActive records the node's deploy as done.
func toActive(s *Server, now time.Time) *Server {
	n := toPhase(s, PhaseActive, now)
	n.Fault = nil
	n.MaintenanceSince = time.Time{}
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
	n.Attempts = append(n.Attempts, Attempt{Node: s.NodeID, Step: step, Reason: reason, Message: msg, At: in.Now})
	n.MaintenanceSince = time.Time{}
	if s.NodeID != "" && !slices.Contains(n.Excluded, s.NodeID) {
		n.Excluded = append(n.Excluded, s.NodeID)
	}
	return save(n, in.Now, "attempt failed: "+string(reason),
		Event{ServerID: s.ID, RequestID: s.CreateRequestID, Action: ActionCreate, Name: "compute__do_build_and_run_instance",
			Node: s.NodeID, Result: ResultError, Details: string(reason) + ": " + msg, Start: in.Now, Finish: in.Now})
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
	n.NodeID = ""
	n.DeployRequested = false
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
