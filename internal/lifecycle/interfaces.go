package lifecycle

import (
	"fmt"
	"slices"
	"time"
)

// Interface attach and detach (os-interface) as Nova's Ironic driver does
// them on a server at rest, active or stopped: attach makes the port on
// the network and attaches its VIF to a free Ironic port of the node;
// detach detaches the VIF and frees the port (a user's own port is
// released, not deleted). The API records the interface asked for in the
// operation (Op.Network, FixedIP, UserPort, and Port: the id its row is
// made with, or the row a detach frees) before it answers; the
// reconciler records the networks the ports are on (Networks) as each
// ends (Spec.Networks stays what the build asked for). An attach that fails is rolled back
// through the detach phase, so nothing is left, and ends with OpFault
// saying why. Neither changes task_state, as in Nova.

const (
	OpAttachInterface OpKind = "attach_interface"
	OpDetachInterface OpKind = "detach_interface"

	// PhaseAttachingInterface: the port of Op.Network is being made and
	// its VIF attached.
	PhaseAttachingInterface Phase = "attaching_interface"
	// PhaseDetachingInterface: the VIF of the port on Op.Network is being
	// detached and the port freed (a detach, or the roll-back of an
	// attach that failed: OpFault set).
	PhaseDetachingInterface Phase = "detaching_interface"

	StepAttachInterface Step = "attach_interface"
	StepDetachInterface Step = "detach_interface"
)

func init() {
	// Kept out of ops' literal so that the table's other rows merge apart.
	ops[OpAttachInterface] = opSpec{step: StepAttachInterface, event: "compute_attach_interface", phase: PhaseAttachingInterface,
		from: []Phase{PhaseActive, PhaseStopped}}
	ops[OpDetachInterface] = opSpec{step: StepDetachInterface, event: "compute_detach_interface", phase: PhaseDetachingInterface,
		from: []Phase{PhaseActive, PhaseStopped}}
}

// decideInterface drives an interface attach or detach to its end: the
// deadline first (an attach past it is rolled back; a detach past it gives
// up with the port still there), then the node (lost: ERROR, where the
// release frees every port), then the one effect of the phase.
func decideInterface(in Input, cfg Config) Action {
	s, v := in.Server, in.Node
	if in.Now.After(s.Deadline) {
		why := fmt.Sprintf("%s of a port on network %s to node %s did not finish within %s", s.Op.Kind, s.Op.Network, s.NodeID, cfg.timeout(s.Op.Kind))
		if in.IronicDown {
			why += " (Ironic unreachable)"
		}
		if s.Phase == PhaseAttachingInterface {
			return rollBack(s, in.Now, cfg, ReasonVIFAttachFailed, why)
		}
		// The user was answered (202, or the attach's error): the port is
		// freed in the background, at rest, so that a detach half done
		// (the VIF off, the port not yet freed) is finished, not left.
		n := toOpDone(s, volumeOpFrom(s), in.Now)
		n.OpFault = s.OpFault
		n.Nets = slices.Clone(s.Networks())
		if s.Op.Kind == OpDetachInterface {
			n.Nets = withoutOne(n.Nets, s.Op.Network)
		}
		n.NetsSet = true
		if !slices.Contains(n.Detaching, s.Op.Port) {
			n.Detaching = append(n.Detaching, s.Op.Port)
		}
		return save(n, in.Now, string(s.Op.Kind)+" past its deadline", opEvent(s, in.Now, ResultError, why+"; the port is freed in the background"))
	}
	if a, ok := opNodeNotOurs(in); ok {
		return a
	}
	if v.State != NodeActive {
		return opFailed(in, ReasonNodeTornDown, fmt.Sprintf("node %s left active during the %s (%s)", s.NodeID, s.Op.Kind, v.Shown))
	}
	if s.Phase == PhaseAttachingInterface {
		return Action{Kind: KindAttachInterface, Why: "interface to attach on network " + s.Op.Network}
	}
	return Action{Kind: KindDetachInterface, Why: "interface to detach on network " + s.Op.Network}
}

// backgroundDetach frees, at rest, the ports a detach left past its
// deadline, one network at a time, while the node is ours and active.
func backgroundDetach(in Input) (Action, bool) {
	s, v := in.Server, in.Node
	if len(s.Detaching) == 0 || v.State != NodeActive || v.Holder != HeldByUs {
		return Action{}, false
	}
	return Action{Kind: KindDetachInterface, Why: "port " + s.Detaching[0] + " left by a detach"}, true
}

// DetachPort is the port row a KindDetachInterface frees.
func (s *Server) DetachPort() string {
	if s.Phase == PhaseDetachingInterface || len(s.Detaching) == 0 {
		return s.Op.Port
	}
	return s.Detaching[0]
}

// PortSlot is the slot of the server's port on the network that is to be
// made now: "" for a build's network, the attach's port id for the
// network of an attach under way (its row is made with that id).
func (s *Server) PortSlot(networkID string) string {
	if s.Phase == PhaseAttachingInterface && s.Op.Network == networkID {
		return s.Op.Port
	}
	return ""
}

// rollBack turns a failed attach into the detach of what it may have made
// (port, VIF), bounded by a deadline of its own; OpFault says why.
func rollBack(s *Server, now time.Time, cfg Config, reason Reason, msg string) Action {
	n := toPhase(s, PhaseDetachingInterface, now)
	n.Deadline = now.Add(cfg.timeout(OpDetachInterface))
	n.OpFault = &Fault{Reason: reason, Message: msg, Node: s.NodeID, Step: StepAttachInterface, At: now}
	return save(n, now, "interface attach failed: "+string(reason),
		opEvent(s, now, "", msg+"; detaching and freeing the port"))
}

// Networks is what the server's ports are on: its build's networks, with
// the interfaces attached and detached since.
func (s *Server) Networks() []string {
	if s.NetsSet {
		return s.Nets
	}
	return s.Spec.Networks
}

// interfaceDone ends an interface operation: the port on Op.Network is
// attached (attached true) or gone.
func interfaceDone(s *Server, now time.Time, attached bool) Applied {
	n := toOpDone(s, volumeOpFrom(s), now)
	n.OpFault = s.OpFault
	if attached {
		n.Nets = append(slices.Clone(s.Networks()), s.Op.Network)
	} else if s.Op.Kind == OpDetachInterface {
		n.Nets = withoutOne(s.Networks(), s.Op.Network)
	} else {
		n.Nets = slices.Clone(s.Networks()) // a roll-back: never counted
	}
	n.NetsSet = true
	result, details := ResultSuccess, fmt.Sprintf("port on network %s attached to node %s", s.Op.Network, s.NodeID)
	switch {
	case s.OpFault != nil:
		result, details = ResultError, fmt.Sprintf("%s: %s; the port was freed", s.OpFault.Reason, s.OpFault.Message)
	case !attached:
		details = fmt.Sprintf("port on network %s detached from node %s and freed", s.Op.Network, s.NodeID)
	}
	return stop(applied(n, now, opEvent(s, now, result, details)))
}

// Attaching is the server as the attach's port is to be made: the
// operation's fixed IP and user's port asked for on its network, and only
// those (the build's on that network are another port's).
func (s *Server) Attaching() *Server {
	n := s.Clone()
	n.Spec.FixedIPs, n.Spec.UserPorts = nil, nil
	if s.Op.FixedIP != "" {
		n.Spec.FixedIPs = map[string]string{s.Op.Network: s.Op.FixedIP}
	}
	if s.Op.UserPort != "" {
		n.Spec.UserPorts = map[string]string{s.Op.Network: s.Op.UserPort}
	}
	return n
}

// withoutOne is nets with one occurrence of net taken out (a server may
// have several ports on one network).
func withoutOne(nets []string, net string) []string {
	out := slices.Clone(nets)
	if i := slices.Index(out, net); i >= 0 {
		out = slices.Delete(out, i, i+1)
	}
	return out
}

// applyInterface is what the outcome of an attach or detach effect means.
func applyInterface(s *Server, a Action, r Result, now time.Time, cfg Config) Applied {
	in := Input{Server: s, Now: now}
	if s.Phase.Up() { // a background detach (backgroundDetach)
		if r.Outcome != OK {
			return Applied{Stop: true} // retried; a lost node is seen at rest
		}
		port := s.DetachPort()
		n := with(s, func(n *Server) {
			n.Detaching = slices.DeleteFunc(n.Detaching, func(id string) bool { return id == port })
		})
		return applied(n, now, event(s, now, ops[OpDetachInterface].event, ResultSuccess,
			fmt.Sprintf("port %s left by a detach past its deadline freed", port)))
	}
	if r.Outcome == Gone {
		return fromAction(opFailed(in, ReasonNodeDeleted, fmt.Sprintf("node %s was deleted during the %s", s.NodeID, s.Op.Kind)))
	}
	if a.Kind == KindAttachInterface {
		switch r.Outcome {
		case OK:
			return interfaceDone(s, now, true)
		case Exhausted:
			return stop(fromAction(rollBack(s, now, cfg, ReasonNetworkAllocationFailed, "network allocation failed: "+r.Message)))
		case Rejected, Taken:
			return stop(fromAction(rollBack(s, now, cfg, ReasonVIFAttachFailed, fmt.Sprintf("VIF attach to node %s failed: %s", s.NodeID, r.Message))))
		}
		return Applied{Stop: true}
	}
	switch r.Outcome {
	case OK:
		return interfaceDone(s, now, false)
	case Rejected, Taken, Exhausted:
		n := toOpDone(s, volumeOpFrom(s), now)
		n.OpFault = s.OpFault
		return stop(applied(n, now, opEvent(s, now, ResultError, fmt.Sprintf("detach of the port on network %s failed: %s; the port stays", s.Op.Network, r.Message))))
	}
	return Applied{Stop: true}
}
