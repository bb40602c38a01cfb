package lifecycle

import (
	"fmt"
	"slices"
	"time"
)

// Outcome classifies what an effect's I/O came back with. The reconciler
// maps the adapters' typed errors to these; the core never sees HTTP.
type Outcome int

const (
	// OK: the effect is done.
	OK Outcome = iota
	// Transient: retry later (node locked, a 5xx); nothing changes.
	Transient
	// Unreachable: Ironic could not be reached; retry later. Names the fault if the deadline passes.
	Unreachable
	// Gone: the node does not exist.
	Gone
	// Taken: the node is associated with another instance.
	Taken
	// InvalidState: Ironic refused the action in the node's current state; look again next tick.
	InvalidState
	// Rejected: Ironic refused the request for good.
	Rejected
	// Exhausted: no address is left on a requested network.
	Exhausted
	// NoCandidate: the scheduler found no node that fits.
	NoCandidate
)

var outcomeNames = [...]string{"ok", "transient", "unreachable", "gone", "taken", "invalid_state", "rejected", "exhausted", "no_candidate"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Result is an effect's outcome.
type Result struct {
	Outcome Outcome
	Message string // what Ironic or the allocator said
	Node    string // KindSchedule: the node chosen
}

// Applied is the consequence of an effect.
type Applied struct {
	Next   *Server // nil: nothing to record
	Events []Event
	// Stop: the node view this tick is stale after the effect (Ironic was
	// asked to change it, or could not be asked); look again next tick.
	Stop bool
	// IronicDown: the effect failed because Ironic was unreachable.
	IronicDown bool
}

// Apply computes, purely, what an effect's result means for the server.
func Apply(s *Server, a Action, r Result, now time.Time, cfg Config) Applied {
	switch r.Outcome {
	case Transient, InvalidState:
		return Applied{Stop: true}
	case Unreachable:
		return Applied{Stop: true, IronicDown: true}
	}
	switch a.Kind {
	case KindSchedule:
		return applySchedule(s, r, now)
	case KindReserve:
		return applyReserve(s, r, now)
	case KindNetwork:
		return applyNetwork(s, r, now)
	case KindDeploy:
		if r.Outcome == Gone {
			return failed(s, now, ReasonNodeDeleted, StepDeploy, fmt.Sprintf("node %s was deleted before the deploy started", s.NodeID))
		}
		if r.Outcome == Rejected || r.Outcome == Taken {
			return failed(s, now, ReasonInvalidRequest, StepDeploy, fmt.Sprintf("Ironic refused to deploy node %s: %s", s.NodeID, r.Message))
		}
		return Applied{Stop: true}
	case KindUndeploy:
		if r.Outcome == Gone {
			return Applied{Next: stamp(dropNode(s, now), now), Events: []Event{event(s, now, "release_node", ResultSuccess,
				fmt.Sprintf("node %s no longer exists", s.NodeID))}, Stop: true}
		}
		if r.Outcome == OK {
			return Applied{Events: nil, Stop: true}
		}
		return Applied{Stop: true} // rejected: look again next tick; the deadline bounds it
	case KindUnreserve:
		if r.Outcome == OK || r.Outcome == Gone {
			return Applied{Next: stamp(dropNode(s, now), now), Events: []Event{event(s, now, "release_node", ResultSuccess,
				fmt.Sprintf("node %s released", s.NodeID))}}
		}
		return Applied{Stop: true}
	case KindAttachVolumes:
		switch r.Outcome {
		case OK:
			n := s.Clone()
			n.Phase = PhaseDeploying
			n.PhaseSince = now
			n.DeployRequested = true
			return Applied{Next: stamp(n, now), Events: []Event{
				event(s, now, "compute_attach_volumes", ResultSuccess, fmt.Sprintf("%d volume target(s) on node %s", len(s.Spec.Volumes), s.NodeID)),
				event(s, now, "compute__do_build_and_run_instance", "", fmt.Sprintf("deploy requested on node %s", s.NodeID))}}
		case Gone:
			return failed(s, now, ReasonNodeDeleted, StepVolumes, fmt.Sprintf("node %s was deleted while attaching volumes", s.NodeID))
		case Rejected, Taken:
			return failed(s, now, ReasonVolumeAttachFailed, StepVolumes, fmt.Sprintf("volume target on node %s failed: %s", s.NodeID, r.Message))
		}
		return Applied{Stop: true}
	case KindDetachVolumes:
		if r.Outcome == OK || r.Outcome == Gone {
			n := s.Clone()
			n.VolumesOnNode = false
			return Applied{Next: stamp(n, now), Events: []Event{event(s, now, "compute_detach_volumes", ResultSuccess,
				fmt.Sprintf("volume targets removed from node %s", s.NodeID))}}
		}
		return Applied{Stop: true}
	case KindStrandVolumes:
		if r.Outcome == OK {
			return Applied{Next: stamp(dropNode(s, now), now), Events: []Event{event(s, now, "compute_detach_volumes", ResultError,
				fmt.Sprintf("node %s now belongs to another instance; its volume targets of ours are left there and the volumes marked error", s.NodeID))}}
		}
		return Applied{Stop: true}
	case KindReleaseVolumes:
		if r.Outcome == OK {
			n := s.Clone()
			n.VolumesReleased = true
			return Applied{Next: stamp(n, now), Events: []Event{event(s, now, "compute_release_volumes", ResultSuccess, "volumes released")}}
		}
		return Applied{Stop: true}
	case KindFreePorts:
		if r.Outcome == OK {
			n := s.Clone()
			n.PortsAllocated = false
			return Applied{Next: stamp(n, now), Events: []Event{event(s, now, "deallocate_network", ResultSuccess, "ports freed")}}
		}
		return Applied{Stop: true}
	}
	return Applied{Stop: true}
}

func applySchedule(s *Server, r Result, now time.Time) Applied {
	if r.Outcome == NoCandidate {
		var f *Fault
		if len(s.Attempts) == 0 {
			f = &Fault{Reason: ReasonNoValidHost, Message: fmt.Sprintf("no available node of resource class %q", s.Spec.ResourceClass),
				Step: StepSchedule, At: now}
			if r.Message != "" {
				f.Message += ": " + r.Message
			}
		} else {
			last := s.Attempts[len(s.Attempts)-1]
			f = &Fault{Reason: last.Reason, Message: fmt.Sprintf("%s (no other node available after %d attempt(s))", last.Message, len(s.Attempts)),
				Node: last.Node, Step: last.Step, At: now}
		}
		n := toError(s, now, f)
		n.UpdatedAt = now
		return Applied{Next: n, Events: []Event{errorEvent(n, now)}}
	}
	if r.Outcome != OK || r.Node == "" {
		return Applied{Stop: true}
	}
	n := s.Clone()
	n.NodeID = r.Node
	n.Phase = PhaseReserving
	n.PhaseSince = now
	n.Reserved, n.DeployRequested = false, false
	n.UpdatedAt = now
	return Applied{Next: n, Events: []Event{{ServerID: s.ID, RequestID: s.CreateRequestID, Action: ActionCreate,
		Name: "conductor_schedule_and_build_instances", Node: r.Node, Result: ResultSuccess,
		Details: fmt.Sprintf("attempt %d: node %s chosen", len(s.Attempts)+1, r.Node), Start: now, Finish: now}}}
}

func applyReserve(s *Server, r Result, now time.Time) Applied {
	switch r.Outcome {
	case OK:
		n := s.Clone()
		n.Reserved = true
		n.Phase = PhaseNetworking
		n.PhaseSince = now
		n.UpdatedAt = now
		// Record before act, in the same write: ports are about to be allocated.
		n.PortsAllocated = n.PortsAllocated || len(s.Spec.Networks) > 0
		return Applied{Next: n, Events: []Event{event(s, now, "compute_reserve_node", ResultSuccess, fmt.Sprintf("node %s reserved", s.NodeID))}}
	case Taken, Gone, Rejected:
		// The node was taken (or vanished) between the choice and the
		// reservation: choose again without spending an attempt.
		n := dropNode(s, now)
		n.Phase = PhasePending
		n.PhaseSince = now
		n.UpdatedAt = now
		if r.Outcome == Gone && !slices.Contains(n.Excluded, s.NodeID) {
			n.Excluded = append(n.Excluded, s.NodeID)
		}
		return Applied{Next: n, Events: []Event{event(s, now, "compute_reserve_node", ResultError,
			fmt.Sprintf("node %s could not be reserved (%s: %s); choosing another", s.NodeID, r.Outcome, r.Message))}}
	}
	return Applied{Stop: true}
}

func applyNetwork(s *Server, r Result, now time.Time) Applied {
	switch r.Outcome {
	case OK:
		n := s.Clone()
		n.PhaseSince = now
		n.UpdatedAt = now
		details := "no networks requested"
		if len(s.Spec.Networks) > 0 {
			details = fmt.Sprintf("%d port(s) attached to node %s", len(s.Spec.Networks), s.NodeID)
		}
		if r.Message != "" { // a warning from the attach (a node without Ironic ports)
			details += "; " + r.Message
		}
		evs := []Event{event(s, now, "compute_attach_networks", ResultSuccess, details)}
		if len(s.Spec.Volumes) > 0 {
			// Record before act, in the same write: volume targets come next.
			n.Phase = PhaseVolumes
			n.VolumesOnNode = true
			return Applied{Next: n, Events: evs}
		}
		// Record before act, in the same write: the deploy is about to be requested.
		n.Phase = PhaseDeploying
		n.DeployRequested = true
		evs = append(evs, event(s, now, "compute__do_build_and_run_instance", "", fmt.Sprintf("deploy requested on node %s", s.NodeID)))
		return Applied{Next: n, Events: evs}
	case Exhausted:
		return failed(s, now, ReasonNetworkAllocationFailed, StepNetwork, "network allocation failed: "+r.Message)
	case Gone:
		return failed(s, now, ReasonNodeDeleted, StepNetwork, fmt.Sprintf("node %s was deleted while attaching networks", s.NodeID))
	case Rejected, Taken:
		return failed(s, now, ReasonVIFAttachFailed, StepNetwork, fmt.Sprintf("VIF attach to node %s failed: %s", s.NodeID, r.Message))
	}
	return Applied{Stop: true}
}

func failed(s *Server, now time.Time, reason Reason, step Step, msg string) Applied {
	a := fail(Input{Server: s, Now: now}, reason, step, msg)
	return Applied{Next: a.Next, Events: a.Events}
}

func stamp(n *Server, now time.Time) *Server {
	n.UpdatedAt = now
	return n
}
