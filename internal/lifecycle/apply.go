package lifecycle

import (
	"fmt"
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

func (o Outcome) String() string { return enumName(outcomeNames[:], int(o), "outcome") }

// Result is an effect's outcome.
type Result struct {
	Outcome Outcome
	Message string // what Ironic or the allocator said
	Node    string // KindSchedule: the node chosen
	// Returning (KindSchedule, NoCandidate): nodes of the class on their way
	// back — being cleaned, or held by servers of ours that are letting go.
	Returning int
	// View (KindReserve): the node as Ironic answered the reservation (or,
	// when it was refused as locked, as Ironic shows it now); nil if unknown.
	View *NodeView
	// VolumeID (KindCreateVolume): the volume found or made for the entry;
	// VolumeReady: it is available and held for the server; VolumeStatus:
	// the status it ended in when that is not available (error).
	VolumeID     string
	VolumeReady  bool
	VolumeStatus string
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
// Outcomes an effect does not name leave the record as it is and look again
// next tick; the deadline bounds how long.
func Apply(s *Server, a Action, r Result, now time.Time, cfg Config) Applied {
	if a.Kind == KindReserve && r.Outcome == Transient && r.View != nil {
		return applyReserve(s, r, now) // refused while the node is busy: see what it is busy with
	}
	switch r.Outcome {
	case Transient, InvalidState:
		return Applied{Stop: true}
	case Unreachable:
		return Applied{Stop: true, IronicDown: true}
	}
	switch a.Kind {
	case KindSchedule:
		return applySchedule(s, r, now, cfg)
	case KindReserve:
		return applyReserve(s, r, now)
	case KindNetwork:
		switch r.Outcome {
		case OK:
			n, evs := afterNetworking(s, now)
			if r.Message != "" { // a warning from the attach (a node without Ironic ports)
				evs[0].Details += "; " + r.Message
			}
			return applied(n, now, evs...)
		case Exhausted:
			return failed(s, now, ReasonNetworkAllocationFailed, StepNetwork, "network allocation failed: "+r.Message)
		case Gone:
			return failed(s, now, ReasonNodeDeleted, StepNetwork, fmt.Sprintf("node %s was deleted while attaching networks", s.NodeID))
		case Rejected, Taken:
			return failed(s, now, ReasonVIFAttachFailed, StepNetwork, fmt.Sprintf("VIF attach to node %s failed: %s", s.NodeID, r.Message))
		}
	case KindCreateVolume:
		return applyCreateVolume(s, a, r, now)
	case KindAttachVolumes:
		switch r.Outcome {
		case OK:
			n, evs := afterVolumes(s, now)
			return applied(n, now, evs...)
		case Gone:
			return failed(s, now, ReasonNodeDeleted, StepVolumes, fmt.Sprintf("node %s was deleted while attaching volumes", s.NodeID))
		case Rejected, Taken:
			return failed(s, now, ReasonVolumeAttachFailed, StepVolumes, fmt.Sprintf("volume target on node %s failed: %s", s.NodeID, r.Message))
		}
	case KindDeploy:
		switch r.Outcome {
		case Gone:
			return failed(s, now, ReasonNodeDeleted, StepDeploy, fmt.Sprintf("node %s was deleted before the deploy started", s.NodeID))
		case Rejected, Taken:
			return failed(s, now, ReasonInvalidRequest, StepDeploy, fmt.Sprintf("Ironic refused to deploy node %s: %s", s.NodeID, r.Message))
		}
	case KindUndeploy:
		if r.Outcome == Gone {
			return stop(released(s, now, fmt.Sprintf("node %s no longer exists", s.NodeID)))
		}
	case KindUnreserve:
		if r.Outcome == OK || r.Outcome == Gone {
			return released(s, now, fmt.Sprintf("node %s released", s.NodeID))
		}
	case KindDetachVolumes:
		if r.Outcome == OK || r.Outcome == Gone {
			return applied(volumesDetached(s), now, event(s, now, "compute_detach_volumes", ResultSuccess,
				fmt.Sprintf("volume targets removed from node %s", s.NodeID)))
		}
	case KindReleaseVolumes:
		if r.Outcome == OK {
			return applied(volumesReleased(s), now, event(s, now, "compute_release_volumes", ResultSuccess, "volumes released"))
		}
	case KindPowerOn, KindPowerOff:
		if s.Phase == PhaseDetachingVolume && s.Cycle != "" {
			return applyVolumeOp(s, a, r, now, cfg)
		}
		if a.Kind == KindPowerOff {
			return applyOp(s, a, r, now)
		}
		if s.Phase == PhaseDeploying {
			if r.Outcome == Gone {
				return failed(s, now, ReasonNodeDeleted, StepDeploy, fmt.Sprintf("node %s was deleted while being powered on", s.NodeID))
			}
			return Applied{Stop: true} // look again; the build deadline bounds it
		}
		return applyOp(s, a, r, now)
	case KindReboot, KindRebuild, KindRescue, KindUnrescue:
		return applyOp(s, a, r, now)
	case KindAttachInterface, KindDetachInterface:
		return applyInterface(s, a, r, now, cfg)
	case KindAttachVolume, KindDetachVolume:
		return applyVolumeOp(s, a, r, now, cfg)
	case KindFreePorts:
		if r.Outcome == OK {
			return applied(portsFreed(s), now, event(s, now, "deallocate_network", ResultSuccess, "ports freed"))
		}
	}
	return Applied{Stop: true}
}

func applySchedule(s *Server, r Result, now time.Time, cfg Config) Applied {
	if r.Outcome == NoCandidate && r.Returning > 0 {
		switch {
		case s.CapacityWaitSince.IsZero() && cfg.CapacityWait > 0:
			return stop(applied(capacityWait(s, now), now, event(s, now, "conductor_schedule_and_build_instances", "",
				fmt.Sprintf("no node of resource class %q is free; %d on the way back, waiting up to %s", s.Spec.ResourceClass, r.Returning, cfg.CapacityWait))))
		case now.Sub(s.CapacityWaitSince) < cfg.CapacityWait:
			return Applied{Stop: true}
		}
	}
	if r.Outcome == NoCandidate {
		var f *Fault
		if len(s.Attempts) == 0 {
			f = &Fault{Reason: ReasonNoValidHost, Message: fmt.Sprintf("no available node of resource class %q", s.Spec.ResourceClass),
				Step: StepSchedule, At: now}
			if r.Message != "" {
				f.Message += ": " + r.Message
			}
			if !s.CapacityWaitSince.IsZero() {
				f.Message += fmt.Sprintf(" (waited %s for nodes on their way back)", now.Sub(s.CapacityWaitSince).Round(time.Second))
			}
		} else {
			last := s.Attempts[len(s.Attempts)-1]
			f = &Fault{Reason: last.Reason, Message: fmt.Sprintf("%s (no other node available after %d attempt(s))", last.Message, len(s.Attempts)),
				Node: last.Node, Step: last.Step, At: now}
		}
		n := toError(s, now, f)
		return applied(n, now, errorEvent(n, now))
	}
	if r.Outcome != OK || r.Node == "" {
		return Applied{Stop: true}
	}
	n, ev := toReserving(s, r.Node, now)
	return applied(n, now, ev)
}

func applyReserve(s *Server, r Result, now time.Time) Applied {
	if v := r.View; v != nil && (r.Outcome == OK || r.Outcome == Transient) {
		fit := v.State == NodeAvailable && !v.Maintenance
		switch {
		case v.Holder == HeldByUs && !fit:
			// Ours now, but the scheduler's view was stale: give it back at
			// once and choose another, without spending an attempt.
			n, ev := giveBack(s, now, unfitReason(s, v))
			return applied(n, now, ev)
		case v.Holder != HeldByUs && r.Outcome == Transient && !fit:
			// Refused because the node is busy with something else.
			n, ev := rechosen(s, now, fmt.Sprintf("node %s could not be reserved: %s", s.NodeID, unfitReason(s, v)), false)
			return applied(n, now, ev)
		case v.Holder == HeldByUs && r.Outcome == Transient:
			// An earlier reservation of ours went through; its answer was
			// lost, and with it whether that PATCH carried instance_info.
			n, ev := toNetworking(s, now)
			n.InstanceInfoOn = ""
			return applied(n, now, ev)
		}
	}
	switch r.Outcome {
	case OK:
		n, ev := toNetworking(s, now)
		n.InstanceInfoOn = s.NodeID
		return applied(n, now, ev)
	case Taken, Gone, Rejected:
		// The node was taken (or vanished) between the choice and the
		// reservation: choose again without spending an attempt.
		n, ev := rechosen(s, now, fmt.Sprintf("node %s could not be reserved (%s: %s)", s.NodeID, r.Outcome, r.Message), r.Outcome == Gone)
		return applied(n, now, ev)
	}
	return Applied{Stop: true}
}

func unfitReason(s *Server, v *NodeView) string {
	if v.Maintenance {
		return fmt.Sprintf("node %s is in maintenance", s.NodeID)
	}
	return fmt.Sprintf("node %s is %s, not available", s.NodeID, v.Shown)
}

// released records that the server no longer holds its node.
func released(s *Server, now time.Time, details string) Applied {
	return applied(dropNode(s), now, event(s, now, "release_node", ResultSuccess, details))
}

func failed(s *Server, now time.Time, reason Reason, step Step, msg string) Applied {
	return fromAction(fail(Input{Server: s, Now: now}, reason, step, msg))
}

func applied(n *Server, now time.Time, events ...Event) Applied {
	n.UpdatedAt = now
	return Applied{Next: n, Events: events}
}

// stop marks the node view of this tick stale after a (Applied.Stop).
func stop(a Applied) Applied {
	a.Stop = true
	return a
}
