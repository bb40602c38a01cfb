package lifecycle

import (
	"fmt"
	"time"
)

// Ironic removes a volume target only from a powered-off node, so a detach
// from ACTIVE is a power cycle: the node is powered off, the volume's target
// and Cinder attachments removed (KindDetachVolume), and the node powered on
// again. Cycle records which step is under way, each before it is taken; any
// failure goes on to the power-on, so a server that was ACTIVE is never
// left powered off without an error saying so.

// Cycle is the step of a detach from ACTIVE ("": no power cycle, a detach
// from SHUTOFF).
type Cycle string

const (
	CyclePowerOff Cycle = "power_off" // powering the node off (OpSent: Ironic accepted it)
	CycleDetach   Cycle = "detach"    // node seen off: the target and attachments go
	CyclePowerOn  Cycle = "power_on"  // powering the node on again (OpSent: Ironic accepted it)
)

// toCycle records the next step of the cycle; a failure (OpFault) is kept
// for the end, which reports it once the node is on again.
func toCycle(s *Server, c Cycle, power Power, now time.Time, fault *Fault) *Server {
	return with(s, func(n *Server) {
		n.Cycle, n.OpSent, n.UpdatedAt = c, false, now
		if power != PowerUnknown {
			n.PowerSeen = power
		}
		if fault != nil {
			n.OpFault = fault
		}
	})
}

// cycleFailed goes on to the power-on after a failed step.
func cycleFailed(s *Server, now time.Time, cfg Config, msg string) *Server {
	n := toCycle(s, CyclePowerOn, PowerUnknown, now, &Fault{Reason: ReasonVolumeDetachFailed, Message: msg, Node: s.NodeID, Step: StepDetach, At: now})
	n.Deadline = now.Add(cfg.timeout(OpStart))
	return n
}

// decideCycle drives a detach from ACTIVE; the node is observed and ours.
func decideCycle(in Input) Action {
	s, v := in.Server, in.Node
	if v.State != NodeActive {
		return opFailed(in, ReasonNodeTornDown, fmt.Sprintf("node %s left active during the %s (%s)", s.NodeID, s.Op.Kind, v.Shown))
	}
	settled := !v.PowerSettling && !v.Locked
	switch s.Cycle {
	case CyclePowerOff:
		if v.Power == PowerOff && settled {
			return save(toCycle(s, CycleDetach, PowerOff, in.Now, nil), in.Now, "node off; detach",
				opEvent(s, in.Now, "", fmt.Sprintf("node %s powered off; removing the target of volume %s", s.NodeID, s.Op.VolumeID)))
		}
		if !s.OpSent {
			return Action{Kind: KindPowerOff, Why: "power off for the detach of volume " + s.Op.VolumeID}
		}
		return wait(fmt.Sprintf("powering off for the detach (power %q)", v.Power))
	case CycleDetach:
		return Action{Kind: KindDetachVolume, Why: "detach volume " + s.Op.VolumeID + " from the powered-off node"}
	}
	if v.Power == PowerOn && settled {
		return cycleDone(in)
	}
	if !s.OpSent {
		return Action{Kind: KindPowerOn, Why: "power on after the detach of volume " + s.Op.VolumeID}
	}
	return wait(fmt.Sprintf("powering on after the detach (power %q)", v.Power))
}

// cycleDone ends the detach with the node on again: ACTIVE, the detach's
// own outcome reported.
func cycleDone(in Input) Action {
	s := in.Server
	n := toOpDone(s, PhaseActive, in.Now)
	n.PowerSeen = PowerOn
	result, details := ResultSuccess, fmt.Sprintf("volume %s detached from node %s (the node was powered off for it and on again)", s.Op.VolumeID, s.NodeID)
	if s.OpFault != nil {
		result, details = ResultError, s.OpFault.Message+"; the node is powered on again"
	}
	return save(n, in.Now, "detach finished: "+details, opEvent(s, in.Now, result, details))
}

// cycleDeadline: past the deadline before the target went, the volume
// stays attached and the node is powered on again (a deadline of its own);
// past that one too, the server rests where its node shows it, with the
// error.
func cycleDeadline(in Input, cfg Config) Action {
	s := in.Server
	if s.Cycle != CyclePowerOn {
		msg := fmt.Sprintf("detach of volume %s from node %s did not finish within %s; the volume stays attached", s.Op.VolumeID, s.NodeID, cfg.timeout(s.Op.Kind))
		return save(cycleFailed(s, in.Now, cfg, msg), in.Now, "detach timed out; powering on again", opEvent(s, in.Now, "", msg+"; powering the node on again"))
	}
	p := restingPhase(s, in.Node)
	msg := fmt.Sprintf("node %s was not powered on again within %s after the detach of volume %s", s.NodeID, cfg.timeout(OpStart), s.Op.VolumeID)
	if s.OpFault != nil {
		msg = s.OpFault.Message + "; " + msg
	}
	n := toOpDone(s, p, in.Now)
	return save(n, in.Now, "detach: power-on timed out", opEvent(s, in.Now, ResultError, fmt.Sprintf("%s (the server is %s)", msg, Nova(n).Status)))
}

// applyCycle is what the outcome of a cycle's action means.
func applyCycle(s *Server, a Action, r Result, now time.Time, cfg Config) Applied {
	in := Input{Server: s, Now: now}
	vol, node := s.Op.VolumeID, s.NodeID
	switch {
	case r.Outcome == Gone:
		return fromAction(opFailed(in, ReasonNodeDeleted, fmt.Sprintf("node %s was deleted during the detach of volume %s", node, vol)))
	case r.Outcome == Taken:
		return fromAction(opFailed(in, ReasonNodeDisassociated, fmt.Sprintf("node %s belongs to another instance", node)))
	case r.Outcome == OK && a.Kind == KindDetachVolume:
		return applied(toCycle(s, CyclePowerOn, PowerUnknown, now, nil), now,
			opEvent(s, now, "", fmt.Sprintf("volume %s detached from node %s; powering it on again", vol, node)))
	case r.Outcome == OK:
		return stop(applied(opSent(s), now, opEvent(s, now, "", fmt.Sprintf("Ironic accepted the %s of node %s", a.Kind, node))))
	case r.Outcome != Rejected:
		return Applied{Stop: true} // transient: again next tick, under the deadline
	case a.Kind == KindPowerOn:
		msg := fmt.Sprintf("Ironic refused to power node %s on again after the detach of volume %s: %s", node, vol, r.Message)
		if s.OpFault != nil {
			msg = s.OpFault.Message + "; " + msg
		}
		return stop(fromAction(save(toOpDone(s, PhaseStopped, now), now, "detach: power-on refused", opEvent(s, now, ResultError, msg+" (the server is SHUTOFF)"))))
	}
	what := "power-off"
	if a.Kind == KindDetachVolume {
		what = "detach"
	}
	msg := fmt.Sprintf("%s for the detach of volume %s from node %s refused (%s); the volume stays attached", what, vol, node, r.Message)
	return stop(applied(cycleFailed(s, now, cfg, msg), now, opEvent(s, now, "", msg+"; powering the node on again")))
}
