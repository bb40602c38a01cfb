package lifecycle

import (
	"fmt"
	"time"
)

// timeout is the deadline length of an operation (defaults for a zero field).
func (c Config) timeout(k OpKind) time.Duration {
	d := DefaultConfig()
	v, def := c.RescueTimeout, d.RescueTimeout
	switch k {
	case OpReboot:
		v, def = c.RebootTimeout, d.RebootTimeout
	case OpStop, OpStart:
		v, def = c.PowerTimeout, d.PowerTimeout
	case OpRebuild:
		v, def = c.RebuildTimeout, d.RebuildTimeout
	case OpAttachInterface, OpDetachInterface:
		v, def = c.InterfaceTimeout, d.InterfaceTimeout
	case OpAttachVolume, OpDetachVolume:
		v, def = c.VolumeTimeout, d.VolumeTimeout
	}
	if v > 0 {
		return v
	}
	return def
}

// decideUp handles a built server at rest (active, stopped, rescued): a lost
// node first, then the operation the user asked for, then the power sync.
func decideUp(in Input, cfg Config) Action {
	s, v := in.Server, in.Node
	if v.Observed() {
		if a, lost := upLost(in); lost {
			return a
		}
	}
	if s.OpPending() {
		return startOp(in, cfg)
	}
	if !v.Observed() {
		return wait("node not observed")
	}
	if a, ok := backgroundDetach(in); ok {
		return a
	}
	return powerSync(in)
}

// upLost sends a built server whose node is gone, no longer ours, or in a
// state its phase cannot be in, to ERROR (S12): never rescheduled.
func upLost(in Input) (Action, bool) {
	s, v := in.Server, in.Node
	var reason Reason
	var msg string
	want := NodeActive
	if s.Phase == PhaseRescued {
		want = NodeRescue
	}
	switch {
	case v.State == NodeGone:
		reason, msg = ReasonNodeDeleted, fmt.Sprintf("node %s was deleted while the server was %s", s.NodeID, s.Phase)
	case v.Holder != HeldByUs:
		reason, msg = lostReason(s, v)
	case v.State == want, s.Phase == PhaseRescued && v.State == NodeActive:
		return Action{}, false // unrescued out-of-band: the power sync sees it
	default:
		reason, msg = ReasonNodeTornDown, fmt.Sprintf("node %s left %s while the server was %s (%s)", s.NodeID, want, s.Phase, v.Shown)
	}
	step := StepActive
	if s.OpPending() {
		step = opOf(s.Op.Kind).step
	}
	n := toFailed(s, in.Now, reason, step, msg)
	return save(n, in.Now, "node lost while "+string(s.Phase), errorEvent(n, in.Now)), true
}

// powerSync follows what Ironic shows of a resting server, as Nova's power
// sync does: a node powered off out-of-band is SHUTOFF (S20), not ERROR.
func powerSync(in Input) Action {
	s, v := in.Server, in.Node
	if v.PowerSettling || v.Locked {
		return wait(string(s.Phase))
	}
	switch {
	case s.Phase == PhaseActive && v.Power == PowerOff:
		return save(synced(s, PhaseStopped, PowerOff, in.Now), in.Now, "power sync: off",
			event(s, in.Now, "power_sync", ResultSuccess, fmt.Sprintf("node %s was found powered off; the server is SHUTOFF", s.NodeID)))
	case s.Phase == PhaseStopped && v.Power == PowerOn:
		return save(synced(s, PhaseActive, PowerOn, in.Now), in.Now, "power sync: on",
			event(s, in.Now, "power_sync", ResultSuccess, fmt.Sprintf("node %s was found powered on; the server is ACTIVE", s.NodeID)))
	case s.Phase == PhaseRescued && v.State == NodeActive && !v.Settling:
		return save(synced(s, PhaseActive, s.PowerSeen, in.Now), in.Now, "unrescued out-of-band",
			event(s, in.Now, "power_sync", ResultSuccess, fmt.Sprintf("node %s left rescue; the server is ACTIVE", s.NodeID)))
	case v.Power != PowerUnknown && v.Power != s.PowerSeen:
		return save(synced(s, s.Phase, v.Power, in.Now), in.Now, "power seen "+string(v.Power))
	}
	return wait(string(s.Phase))
}

// startOp enters the phase of the operation asked for, or finishes it at once
// when there is nothing to do (or it is no longer allowed: the API checked,
// but the server may have changed since).
func startOp(in Input, cfg Config) Action {
	s, p := in.Server, in.Server.Phase
	op := ops[s.Op.Kind]
	switch {
	case s.Op.Kind == OpReset:
		return decideReset(in)
	case op.noop != "" && p == op.done:
		return opFinished(in, p, ResultSuccess, op.noop)
	case !startsFrom(s.Op.Kind, p, s.Op.Hard, s.HeldInError()):
		return opFinished(in, p, ResultError, fmt.Sprintf("%s is not possible while the server is %s", s.Op.Kind, p))
	}
	return save(toOp(s, op.phase, in.Now, in.Now.Add(cfg.timeout(s.Op.Kind))), in.Now, string(s.Op.Kind)+" started",
		opEvent(s, in.Now, "", fmt.Sprintf("%s of node %s started (deadline %s)", s.Op.Kind, s.NodeID, cfg.timeout(s.Op.Kind))))
}

// opFinished records the operation as carried out (or given up on) and the
// server resting in phase p.
func opFinished(in Input, p Phase, result, details string) Action {
	s := in.Server
	return save(toOpDone(s, p, in.Now), in.Now, fmt.Sprintf("%s finished: %s", s.Op.Kind, details), opEvent(s, in.Now, result, details))
}

// opFailed ends an operation in ERROR: the node is lost or its deploy or
// rescue failed. Never rescheduled (the node is the server's); what it
// holds is released in phase error.
func opFailed(in Input, reason Reason, msg string) Action {
	s := in.Server
	n := toFailed(s, in.Now, reason, opOf(s.Op.Kind).step, msg)
	return save(n, in.Now, string(s.Op.Kind)+" failed: "+string(reason), opEvent(s, in.Now, ResultError, string(reason)+": "+msg),
		errorEvent(n, in.Now))
}

// restingPhase is where a server goes back when an operation gives up: what
// Ironic shows, or else the phase the operation started from.
func restingPhase(s *Server, v NodeView) Phase {
	if v.Exists() && v.Holder == HeldByUs && !v.PowerSettling {
		switch {
		case v.State == NodeRescue && !v.Settling:
			return PhaseRescued
		case v.State == NodeActive && v.Power == PowerOff:
			return PhaseStopped
		case v.State == NodeActive:
			return PhaseActive
		}
	}
	switch s.Phase {
	case PhasePoweringOn:
		return PhaseStopped
	case PhaseUnrescuing:
		return PhaseRescued
	}
	return PhaseActive
}

// decideOp drives an operation in progress to its end.
func decideOp(in Input, cfg Config) Action {
	s, v := in.Server, in.Node
	if in.Now.After(s.Deadline) && v.Observed() {
		// Past the deadline a node seen lost still ends the server in
		// ERROR, not back at rest on a node that is no longer its own.
		if a, ok := opNodeNotOurs(in); ok {
			return a
		}
	}
	if in.Now.After(s.Deadline) {
		if s.Phase == PhaseAttachingVolume || s.Phase == PhaseDetachingVolume {
			return volumeOpDeadline(in, cfg)
		}
		if s.Phase == PhaseRebuilding {
			return opFailed(in, ReasonRebuildTimeout, fmt.Sprintf("rebuild of node %s did not finish within %s", s.NodeID, cfg.timeout(OpRebuild)))
		}
		why := fmt.Sprintf("%s of node %s did not finish within %s", s.Op.Kind, s.NodeID, cfg.timeout(s.Op.Kind))
		if in.IronicDown {
			why += " (Ironic unreachable)"
		}
		return opFinished(in, restingPhase(s, v), ResultError, why)
	}
	if a, ok := opNodeNotOurs(in); ok {
		return a
	}
	// From here on the node is observed and ours.
	switch s.Phase {
	case PhaseRebooting:
		return decidePower(in, KindReboot, PowerOn, PhaseActive)
	case PhasePoweringOff:
		return decidePower(in, KindPowerOff, PowerOff, PhaseStopped)
	case PhasePoweringOn:
		return decidePower(in, KindPowerOn, PowerOn, PhaseActive)
	case PhaseRebuilding:
		return decideRebuild(in, cfg)
	case PhaseRescuing:
		return decideRescue(in, KindRescue, NodeRescue, PhaseRescued)
	case PhaseUnrescuing:
		return decideRescue(in, KindUnrescue, NodeActive, PhaseActive)
	case PhaseAttachingVolume, PhaseDetachingVolume:
		return decideVolumeOp(in)
	}
	return wait("unknown operation phase " + string(s.Phase))
}

// opNodeNotOurs stops an operation in progress unless Ironic shows its
// node as ours this tick: a wait when unobserved (it may no longer be
// ours, I7), ERROR when gone or someone else's.
func opNodeNotOurs(in Input) (Action, bool) {
	s, v := in.Server, in.Node
	switch {
	case !v.Observed():
		return wait("node not observed"), true
	case v.State == NodeGone:
		return opFailed(in, ReasonNodeDeleted, fmt.Sprintf("node %s was deleted during the %s", s.NodeID, s.Op.Kind)), true
	case v.Holder != HeldByUs:
		reason, msg := lostReason(s, v)
		return opFailed(in, reason, msg+" during the "+string(s.Op.Kind)), true
	}
	return Action{}, false
}

// decidePower sends a power change once and waits for the node to show it.
func decidePower(in Input, kind Kind, want Power, done Phase) Action {
	s, v := in.Server, in.Node
	if v.State != NodeActive {
		return opFailed(in, ReasonNodeTornDown, fmt.Sprintf("node %s left active during the %s (%s)", s.NodeID, s.Op.Kind, v.Shown))
	}
	if !s.OpSent {
		if kind != KindReboot && v.Power == want && !v.PowerSettling {
			return opFinished(in, done, ResultSuccess, fmt.Sprintf("node %s is already powered %s", s.NodeID, want))
		}
		return Action{Kind: kind, Hard: s.Op.Hard || s.OpFallback, Why: string(s.Op.Kind) + " to send"}
	}
	if v.Power == want && !v.PowerSettling && !v.Locked {
		return opFinished(in, done, ResultSuccess, fmt.Sprintf("node %s is powered %s", s.NodeID, want))
	}
	return wait(fmt.Sprintf("%s under way (power %q)", s.Op.Kind, v.Power))
}

// decideRebuild redeploys the server's node with its current Spec.
func decideRebuild(in Input, cfg Config) Action {
	s, v := in.Server, in.Node
	if !s.OpSent {
		if v.State == NodeDeploying || v.State == NodeDeployWaiting {
			// Sent before a crash: Ironic is at it already.
			return save(opSent(s), in.Now, "rebuild already under way")
		}
		return Action{Kind: KindRebuild, Why: "rebuild to send"}
	}
	switch v.State {
	case NodeActive:
		if v.Settling || v.Locked {
			return wait("rebuild settling")
		}
		if s.StopAfterRebuild {
			return save(toOp(s, PhasePoweringOff, in.Now, in.Now.Add(cfg.timeout(OpStop))), in.Now, "rebuilt; powering off again",
				opEvent(s, in.Now, "", fmt.Sprintf("node %s redeployed; powering it off again (it was stopped)", s.NodeID)))
		}
		return opFinished(in, PhaseActive, ResultSuccess, fmt.Sprintf("node %s redeployed", s.NodeID))
	case NodeDeployFailed, NodeFailed:
		msg := fmt.Sprintf("rebuild failed on node %s", s.NodeID)
		if v.LastError != "" {
			msg += ": " + v.LastError
		}
		return opFailed(in, ReasonDeployFailed, msg)
	case NodeTearingDown, NodeCleanFailed, NodeIdle, NodeAvailable:
		return opFailed(in, ReasonNodeTornDown, fmt.Sprintf("node %s was torn down during the rebuild (%s)", s.NodeID, v.Shown))
	}
	return wait("rebuilding (" + v.Shown + ")")
}

// decideRescue sends a rescue or unrescue once and waits for the node to
// settle in the wanted state.
func decideRescue(in Input, kind Kind, want NodeState, done Phase) Action {
	s, v := in.Server, in.Node
	if !s.OpSent {
		if v.State == want && !v.Settling {
			return opFinished(in, done, ResultSuccess, fmt.Sprintf("node %s is already there (%s)", s.NodeID, v.Shown))
		}
		return Action{Kind: kind, Why: string(s.Op.Kind) + " to send"}
	}
	switch {
	case v.State == want && !v.Settling && !v.Locked:
		return opFinished(in, done, ResultSuccess, fmt.Sprintf("node %s: %s done", s.NodeID, s.Op.Kind))
	case v.State == NodeFailed:
		msg := fmt.Sprintf("%s failed on node %s (%s)", s.Op.Kind, s.NodeID, v.Shown)
		if v.LastError != "" {
			msg += ": " + v.LastError
		}
		return opFailed(in, ReasonRescueFailed, msg)
	case v.State.undone():
		return opFailed(in, ReasonNodeTornDown, fmt.Sprintf("node %s was torn down during the %s (%s)", s.NodeID, s.Op.Kind, v.Shown))
	}
	return wait(fmt.Sprintf("%s under way (%s)", s.Op.Kind, v.Shown))
}

// applyOp is what the outcome of an operation's Ironic call means.
func applyOp(s *Server, a Action, r Result, now time.Time) Applied {
	in := Input{Server: s, Now: now}
	switch r.Outcome {
	case OK:
		n := opSent(s)
		details := fmt.Sprintf("Ironic accepted the %s of node %s", s.Op.Kind, s.NodeID)
		if a.Kind == KindReboot && a.Hard && !s.Op.Hard {
			details += " (hard: the node cannot soft-reboot)"
		}
		return stop(applied(n, now, opEvent(s, now, "", details)))
	case Gone:
		return fromAction(opFailed(in, ReasonNodeDeleted, fmt.Sprintf("node %s was deleted during the %s", s.NodeID, s.Op.Kind)))
	case Taken:
		return fromAction(opFailed(in, ReasonNodeDisassociated, fmt.Sprintf("node %s belongs to another instance", s.NodeID)))
	case Rejected:
		if a.Kind == KindReboot && !a.Hard {
			// As Nova's Ironic driver: a node that cannot soft-reboot is
			// rebooted hard.
			return applied(opFallback(s), now, opEvent(s, now, "", fmt.Sprintf("node %s refused a soft reboot (%s); rebooting it hard", s.NodeID, r.Message)))
		}
		if a.Kind == KindRebuild {
			return fromAction(opFailed(in, ReasonInvalidRequest, fmt.Sprintf("Ironic refused to rebuild node %s: %s", s.NodeID, r.Message)))
		}
		return stop(fromAction(opFinished(in, restingPhase(s, NodeView{}), ResultError,
			fmt.Sprintf("Ironic refused the %s of node %s: %s", s.Op.Kind, s.NodeID, r.Message))))
	}
	return Applied{Stop: true}
}

func fromAction(a Action) Applied { return Applied{Next: a.Next, Events: a.Events} }
