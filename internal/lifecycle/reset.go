package lifecycle

import "fmt"

// The states an admin's os-resetState sets (Nova accepts these two).
const (
	ResetError  = "error"
	ResetActive = "active"
)

// HeldInError reports whether s is an ERROR server that keeps its node: an
// admin reset it to error. Unlike a failed build it is not released (the
// machine and what runs on it stay the server's) until it is deleted,
// rebuilt or reset to active.
func (s *Server) HeldInError() bool { return s.Held && s.Phase == PhaseError && s.NodeID != "" }

// resetPending reports whether s has a reset not yet carried out on a
// server a rebuild could start from (active, stopped, or reset to error).
func resetPending(s *Server) bool {
	return s.OpPending() && s.Op.Kind == OpReset &&
		(s.Phase == PhaseActive || s.Phase == PhaseStopped || s.HeldInError())
}

// AllowedReset says whether an admin may reset s to state to now. Only a
// server at rest with no operation pending: ingot's deadlines end every
// task, so there is no stuck task to clear, and resetting a build or a
// release midway would abandon what it holds. ACTIVE needs a node the
// server still holds (a failed build released its node: ACTIVE would lie).
// A reset not yet carried out is no task: Nova's reset is synchronous, so
// clients reset again right away (to error, then back to active); the new
// one replaces it and the reconciler carries out only the latest (both are
// writes with no Ironic action, so nothing is abandoned midway).
func AllowedReset(s *Server, to string) *StateConflict {
	st := Nova(s)
	otherOp := s.OpPending() && s.Op.Kind != OpReset
	if st.TaskState != "" || otherOp || !(s.Phase.Up() || s.Phase == PhaseError) {
		return &StateConflict{Op: OpReset, Attr: "task_state", State: st.TaskState}
	}
	if to == ResetActive && (s.Phase == PhaseRescued || (s.Phase == PhaseError && !s.HeldInError())) {
		return &StateConflict{Op: OpReset, Attr: "vm_state", State: st.VMState}
	}
	return nil
}

// resetStatus is Nova's status and vm_state for a reset to state to.
func resetStatus(to string) (status, vm string) {
	if to == ResetError {
		return "ERROR", "error"
	}
	return "ACTIVE", "active"
}

// decideReset carries out a pending reset: a write, no Ironic action. To
// error keeps the node (HeldInError); to active puts the server in the
// resting phase its node shows (active, stopped or rescued) and hands it
// back to the resting logic, so a reset never makes ingot show what Ironic
// does not.
func decideReset(in Input) Action {
	s := in.Server
	switch {
	case s.Op.ResetTo == ResetError && s.Phase != PhaseError:
		msg := fmt.Sprintf("the server's state was reset to error by an administrator (was %s); it keeps node %s", s.Phase, s.NodeID)
		f := &Fault{Reason: ReasonResetState, Message: msg, Node: s.NodeID, Step: StepReset, At: in.Now}
		n := toResetError(s, in.Now, f)
		return save(n, in.Now, "reset to error", opEvent(s, in.Now, ResultSuccess, msg), errorEvent(n, in.Now))
	case s.Op.ResetTo == ResetActive && s.Phase == PhaseError && s.NodeID != "":
		if !in.Node.Observed() || in.Node.Settling || in.Node.PowerSettling {
			return wait("reset to active: node not observed at rest")
		}
		// Back to where Ironic shows the node: a node in rescue is RESCUE,
		// one powered off SHUTOFF.
		p := restingPhase(s, in.Node)
		return save(toResetActive(s, p, in.Node.Power, in.Now), in.Now, "reset to active",
			opEvent(s, in.Now, ResultSuccess, fmt.Sprintf("the server's state was reset by an administrator; node %s shows it %s", s.NodeID, p)))
	case s.Op.ResetTo == ResetActive && (s.Phase == PhaseStopped || s.Phase == PhaseActive):
		return opFinished(in, PhaseActive, ResultSuccess, "reset to active")
	case s.Op.ResetTo == ResetError || s.Op.ResetTo == ResetActive:
		return save(opDropped(s), in.Now, "reset: nothing to do", opEvent(s, in.Now, ResultSuccess, "already "+s.Op.ResetTo))
	}
	return opFinished(in, s.Phase, ResultError, fmt.Sprintf("reset to %q is not a state", s.Op.ResetTo))
}

// decideHeldInError handles a server an admin reset to error: what it holds
// stays, an operation asked for (reset, rebuild) is carried out. An
// operation recorded on any other ERROR server (its state changed after the
// API's check) is finished here too, so it never stays pending.
func decideHeldInError(in Input, cfg Config) Action {
	s := in.Server
	if v := in.Node; s.HeldInError() && v.Observed() && (v.State == NodeGone || v.Holder != HeldByUs) {
		a, _ := upLost(in) // gone or not ours: an ordinary ERROR now, released as any other
		return a
	}
	if !s.OpPending() {
		return wait("reset to error: holds node " + s.NodeID)
	}
	switch s.Op.Kind {
	case OpReset:
		return decideReset(in)
	case OpRebuild:
		if !s.HeldInError() {
			break
		}
		if !in.Node.Observed() {
			return wait("node not observed")
		}
		if in.Node.State == NodeActive && !in.Node.Settling {
			return startOp(in, cfg)
		}
		// Reset to error from rescue: Ironic rebuilds an active node only.
	}
	return save(opDropped(s), in.Now, string(s.Op.Kind)+" refused in error",
		opEvent(s, in.Now, ResultError, fmt.Sprintf("%s is not possible while the server is error", s.Op.Kind)))
}
