package lifecycle

import (
	"fmt"
	"time"
)

// Config holds the lifecycle's limits. DefaultConfig is the one place their
// defaults live; the configuration file and the API start from it.
type Config struct {
	BuildTimeout     time.Duration // deadline of a build, from creation
	DeleteTimeout    time.Duration // deadline of a delete, from the request
	MaintenanceGrace time.Duration // how long a deploy may sit in maintenance before it fails
	MaxAttempts      int           // node attempts before ERROR
	// CapacityWait is how long a build waits for nodes of its class that are
	// on their way back (being cleaned or released) before no_valid_host.
	CapacityWait time.Duration
	// The deadlines of the day-2 operations, from the moment each starts.
	RebootTimeout  time.Duration
	PowerTimeout   time.Duration // stop and start
	RebuildTimeout time.Duration
	RescueTimeout  time.Duration // rescue and unrescue
	// InterfaceTimeout bounds an interface attach or detach (and, after
	// it, the roll-back of an attach that failed).
	InterfaceTimeout time.Duration
	VolumeTimeout    time.Duration // a volume attach or detach after the build
}

// DefaultConfig is what ingot runs with unless configured otherwise.
func DefaultConfig() Config {
	return Config{
		BuildTimeout:     60 * time.Minute,
		DeleteTimeout:    10 * time.Minute,
		MaintenanceGrace: 5 * time.Minute,
		MaxAttempts:      3,
		CapacityWait:     2 * time.Minute,
		RebootTimeout:    10 * time.Minute,
		PowerTimeout:     5 * time.Minute,
		RebuildTimeout:   60 * time.Minute,
		RescueTimeout:    30 * time.Minute,
		InterfaceTimeout: 2 * time.Minute,
		VolumeTimeout:    5 * time.Minute,
	}
}

// BuildDeadline is the deadline of a build accepted at created.
func (c Config) BuildDeadline(created time.Time) time.Time { return created.Add(c.BuildTimeout) }

// Deadline is the deadline that bounds s now: its delete's once a delete is
// accepted, otherwise its build's.
func Deadline(s *Server, cfg Config) time.Time {
	if s.Desired == DesiredDeleted || s.Phase == PhaseDeleting {
		return s.DeleteRequestedAt.Add(cfg.DeleteTimeout)
	}
	return s.Deadline
}

// PastDue reports whether s is in a non-stable phase later than its deadline
// plus grace (I1 allows one reconcile interval of grace).
func PastDue(s *Server, cfg Config, now time.Time, grace time.Duration) bool {
	return !s.Phase.Stable() && now.After(Deadline(s, cfg).Add(grace))
}

// NeedsNode reports whether Decide reads the node view for s, so the
// reconciler knows when a node missing from its bulk view must be fetched.
func NeedsNode(s *Server) bool {
	deleting := s.Desired == DesiredDeleted || s.Phase == PhaseDeleting
	return s.NodeID != "" && (deleting || (s.Phase != PhasePending && s.Phase != PhaseReserving))
}

// Input is everything Decide looks at.
type Input struct {
	Server *Server
	Node   NodeView
	Now    time.Time
	// IronicDown: the last call to Ironic for this server failed because Ironic
	// was unreachable; it names the fault if the deadline passes meanwhile.
	IronicDown bool
}

// Decide returns the one next action for a server. It is pure: the same
// input always gives the same action. The user's delete is consulted first,
// and every non-stable phase has a deadline, so there is always a way out.
func Decide(in Input, cfg Config) Action {
	s := in.Server
	if s.Desired == DesiredDeleted || s.Phase == PhaseDeleting {
		return decideDelete(in, cfg)
	}
	if in.Now.After(s.Deadline) {
		switch s.Phase {
		case PhasePending, PhaseReserving, PhaseNetworking, PhaseVolumes, PhaseDeploying:
			return buildTimedOut(in)
		case PhaseReleasing:
			n := toError(s, in.Now, s.Fault)
			return save(n, in.Now, "deadline passed while releasing", errorEvent(n, in.Now))
		}
	}
	switch s.Phase {
	case PhasePending:
		return Action{Kind: KindSchedule, Why: "no node yet"}
	case PhaseReserving:
		return Action{Kind: KindReserve, Why: "node chosen"}
	case PhaseNetworking:
		if a, ok := notOurs(in, StepNetwork, "during networking"); ok {
			return a
		}
		return Action{Kind: KindNetwork, Why: "node reserved"}
	case PhaseVolumes:
		if s.VolumesStrandedOn != "" {
			return strandedError(in) // I8: never a second node while a target may remain on the first
		}
		if a, ok := notOurs(in, StepVolumes, "during volumes"); ok {
			return a
		}
		if i := ToMake(s); i >= 0 {
			// Made before the attach, which attaches it like any other.
			return Action{Kind: KindCreateVolume, Volume: i, Why: "a block device to make"}
		}
		return Action{Kind: KindAttachVolumes, Why: "networks wired"}
	case PhaseDeploying:
		return decideDeploying(in, cfg)
	case PhaseActive, PhaseStopped, PhaseRescued:
		return decideUp(in, cfg)
	case PhaseRebooting, PhasePoweringOff, PhasePoweringOn, PhaseRebuilding, PhaseRescuing, PhaseUnrescuing,
		PhaseAttachingVolume, PhaseDetachingVolume:
		return decideOp(in, cfg)
	case PhaseAttachingInterface, PhaseDetachingInterface:
		return decideInterface(in, cfg)
	case PhaseReleasing:
		if s.NodeID != "" || s.PortsAllocated {
			return decideRelease(in)
		}
		return afterRelease(in, cfg)
	case PhaseError, PhaseDeleted:
		if s.HeldInError() || (s.Phase == PhaseError && s.OpPending()) {
			return decideHeldInError(in, cfg)
		}
		if s.Holds() {
			return decideRelease(in)
		}
		return wait("stable")
	}
	return wait("unknown phase " + string(s.Phase))
}

// notOurs stops a build step that would touch the reserved node unless
// Ironic shows it as ours this tick (I7: an operator may have taken our
// instance_uuid away, and another tenant the node, since the reservation).
func notOurs(in Input, step Step, during string) (Action, bool) {
	s, v := in.Server, in.Node
	switch {
	case !v.Observed():
		return wait("node not observed"), true
	case v.State == NodeGone:
		return fail(in, ReasonNodeDeleted, step, fmt.Sprintf("node %s was deleted %s", s.NodeID, during)), true
	case v.Holder != HeldByUs:
		reason, msg := lostReason(s, v)
		return fail(in, reason, step, msg), true
	}
	return Action{}, false
}

// buildTimedOut moves a build past its deadline to ERROR at once (I1); what
// it still holds is released afterwards, in phase error.
func buildTimedOut(in Input) Action {
	s := in.Server
	reason, msg := ReasonBuildTimeout, fmt.Sprintf("build timed out in phase %s", s.Phase)
	if in.IronicDown {
		reason, msg = ReasonIronicUnavailable, fmt.Sprintf("Ironic unreachable until the build deadline, in phase %s", s.Phase)
	}
	if s.NodeID != "" {
		msg += " on node " + s.NodeID
	}
	if i := ToMake(s); i >= 0 && s.Phase == PhaseVolumes && !in.IronicDown {
		msg = notMadeInTime(s, i, in.Now)
	}
	n := toFailed(s, in.Now, reason, phaseStep(s.Phase), msg)
	return save(n, in.Now, "build deadline passed", errorEvent(n, in.Now))
}

func decideDeploying(in Input, cfg Config) Action {
	s, v := in.Server, in.Node
	if a, ok := notOurs(in, StepDeploy, "while deploying"); ok {
		return a
	}
	switch v.State {
	case NodeActive:
		switch {
		case v.PowerSettling:
			return wait("deployed; power settling")
		case v.Power == PowerOff:
			// A deploy ends with the machine running; a deploy interface that
			// leaves it off (Ironic's fake one) gets it powered on, so an
			// ACTIVE server is a running one.
			return Action{Kind: KindPowerOn, Why: "deployed node is powered off"}
		}
		return save(toActive(s, in.Now, v.Power), in.Now, "node active",
			event(s, in.Now, "compute__do_build_and_run_instance", ResultSuccess, fmt.Sprintf("node %s is active", s.NodeID)))
	case NodeDeployFailed, NodeFailed:
		msg := fmt.Sprintf("deploy failed on node %s", s.NodeID)
		if v.State == NodeFailed {
			msg = fmt.Sprintf("node %s went to %s while deploying", s.NodeID, v.Shown)
		}
		if v.LastError != "" {
			msg += ": " + v.LastError
		}
		return fail(in, ReasonDeployFailed, StepDeploy, msg)
	case NodeTearingDown, NodeCleanFailed, NodeIdle:
		return fail(in, ReasonNodeTornDown, StepDeploy, fmt.Sprintf("node %s was torn down while deploying (%s)", s.NodeID, v.Shown))
	}
	if v.Maintenance {
		return maintenance(in, cfg)
	}
	if !s.MaintenanceSince.IsZero() {
		return save(maintenanceSince(s, time.Time{}), in.Now, "maintenance cleared")
	}
	switch v.State {
	case NodeAvailable:
		if !v.Settling && !v.Locked {
			// Our instance_uuid is there but no deploy runs: the request was never
			// sent (a crash after recording it) or was refused. Sending it again is safe.
			return Action{Kind: KindDeploy, Why: "deploy not started"}
		}
	case NodeUnexpected, NodeBusy, NodeRescue:
		// Not a deploy's state; the build deadline bounds the wait.
		return wait("node in an unexpected state while deploying (" + v.Shown + ")")
	}
	return wait("deploying (" + v.Shown + ")")
}

func maintenance(in Input, cfg Config) Action {
	s := in.Server
	if s.MaintenanceSince.IsZero() {
		return save(maintenanceSince(s, in.Now), in.Now, "node in maintenance",
			event(s, in.Now, "node_maintenance", "", fmt.Sprintf("node %s put in maintenance while deploying; waiting up to %s", s.NodeID, cfg.MaintenanceGrace)))
	}
	if in.Now.Sub(s.MaintenanceSince) >= cfg.MaintenanceGrace {
		return fail(in, ReasonNodeMaintenance, StepDeploy,
			fmt.Sprintf("node %s stayed in maintenance for %s while deploying", s.NodeID, cfg.MaintenanceGrace))
	}
	return wait("node in maintenance")
}

// lostReason tells a teardown from a disassociation of the server's node.
func lostReason(s *Server, v NodeView) (Reason, string) {
	if v.Holder == HeldByNobody && v.State.undone() {
		return ReasonNodeTornDown, fmt.Sprintf("node %s was torn down (%s, instance_uuid cleared)", s.NodeID, v.Shown)
	}
	if v.Holder == HeldByOther {
		return ReasonNodeDisassociated, fmt.Sprintf("node %s now belongs to instance %s", s.NodeID, v.Other)
	}
	return ReasonNodeDisassociated, fmt.Sprintf("instance_uuid of node %s was removed behind ingot's back", s.NodeID)
}

// afterRelease decides, once a failed attempt holds nothing, between a
// reschedule and ERROR.
func afterRelease(in Input, cfg Config) Action {
	s := in.Server
	if s.VolumesStrandedOn != "" {
		return strandedError(in)
	}
	if s.Fault != nil && s.Fault.Reason == ReasonNodeUnsuitable {
		return save(toRescheduled(s, in.Now), in.Now, "unsuitable node given back",
			event(s, in.Now, "reschedule", ResultSuccess, "node given back; choosing another without spending an attempt"))
	}
	if s.Fault != nil && s.Fault.Reason.Reschedulable() && len(s.Attempts) < cfg.MaxAttempts {
		return save(toRescheduled(s, in.Now), in.Now, "rescheduling",
			event(s, in.Now, "reschedule", ResultSuccess, fmt.Sprintf("attempt %d of %d failed (%s); rescheduling", len(s.Attempts), cfg.MaxAttempts, s.Fault.Reason)))
	}
	f := s.Fault
	if f == nil {
		f = &Fault{Reason: ReasonBuildTimeout, Message: "build failed", At: in.Now}
	}
	if f.Reason.Reschedulable() {
		f = &Fault{Reason: f.Reason, Message: fmt.Sprintf("%s (attempt %d of %d; no attempts left)", f.Message, len(s.Attempts), cfg.MaxAttempts), Node: f.Node, Step: f.Step, At: f.At}
	}
	n := toError(s, in.Now, f)
	return save(n, in.Now, "attempts exhausted", errorEvent(n, in.Now))
}

// strandedError ends a build that cannot go on with its volumes in ERROR,
// saying why.
func strandedError(in Input) Action {
	s := in.Server
	msg := fmt.Sprintf("the Ironic volume targets of this server's volumes were left on node %s, which another instance now holds; "+
		"a volume cannot be attached to a second node while a target of it remains on another (remove the targets there, then delete the volumes)", s.VolumesStrandedOn)
	if s.Fault != nil {
		msg += "; the attempt had failed with " + string(s.Fault.Reason) + ": " + s.Fault.Message
	}
	n := toError(s, in.Now, &Fault{Reason: ReasonVolumeStranded, Message: msg, Node: s.VolumesStrandedOn, Step: StepVolumes, At: in.Now})
	return save(n, in.Now, "volumes stranded", errorEvent(n, in.Now))
}

func decideDelete(in Input, cfg Config) Action {
	s := in.Server
	switch s.Phase {
	case PhaseDeleted:
		if s.Holds() {
			return decideRelease(in)
		}
		return wait("deleted")
	case PhaseDeleting:
		if s.Holds() && !in.Now.After(Deadline(s, cfg)) {
			return decideRelease(in)
		}
		details := "server deleted"
		if s.Holds() {
			details = "delete deadline passed; releasing continues in the background"
		}
		return save(toDeleted(s, in.Now), in.Now, "delete done", deleteEvent(s, in.Now, ResultSuccess, details))
	}
	return save(toDeleting(s, in.Now), in.Now, "delete accepted", deleteEvent(s, in.Now, "", fmt.Sprintf("deleting from phase %s", s.Phase)))
}

// decideRelease picks the next release step for a server that holds something.
func decideRelease(in Input) Action {
	s, v := in.Server, in.Node
	if s.NodeID == "" {
		if s.PortsAllocated {
			return Action{Kind: KindFreePorts, Why: "ports held"}
		}
		if s.HoldsVolumes() && s.Phase != PhaseReleasing {
			// A reschedule keeps its volumes; ERROR and delete give them up.
			return Action{Kind: KindReleaseVolumes, Why: "volumes held"}
		}
		return wait("nothing held")
	}
	switch {
	case !v.Observed():
		return wait("node not observed")
	case v.State == NodeGone:
		return save(dropNode(s), in.Now, "node gone",
			event(s, in.Now, "release_node", ResultSuccess, fmt.Sprintf("node %s no longer exists; nothing to release in Ironic", s.NodeID)))
	case v.Holder == HeldByOther:
		// I7: the node is someone else's now; never touch it.
		if s.VolumesOnNode {
			return save(strand(s), in.Now, "volume targets on a node another instance holds",
				event(s, in.Now, "compute_detach_volumes", ResultError,
					fmt.Sprintf("node %s now belongs to another instance; its volume targets of ours are left there and the volumes marked error", s.NodeID)))
		}
		return save(dropNode(s), in.Now, "node not ours",
			event(s, in.Now, "release_node", ResultSuccess, fmt.Sprintf("node %s belongs to instance %s; left alone", s.NodeID, v.Other)))
	case v.Locked:
		return wait("node locked")
	}
	ours := v.Holder == HeldByUs
	if v.State.deployed() {
		if !ours {
			// Deployed, but our instance_uuid was removed behind our back: not
			// ours to undeploy (I7), it stays operator-visible in Ironic. Our
			// own VIFs and volume targets still come off it: the volumes are
			// freed next, and a target left here would still point at a
			// volume another server may take (found by test/dst, seed 67).
			if s.VolumesOnNode {
				return Action{Kind: KindDetachVolumes, Why: "our volume targets on a deployed node no longer ours"}
			}
			return Action{Kind: KindUnreserve, RemoveInstance: false, Why: "deployed node no longer carries our instance_uuid"}
		}
		if v.State == NodeDeploying {
			return wait("deploy in progress; undeploy once it settles")
		}
		return Action{Kind: KindUndeploy, Why: "node deployed (" + v.Shown + ")"}
	}
	if v.State == NodeTearingDown || v.State == NodeBusy {
		return wait("node busy (" + v.Shown + ")")
	}
	if s.VolumesOnNode {
		// Targets survive an undeploy and block nothing, but they are ours:
		// remove them while the node is still ours, before the reservation.
		return Action{Kind: KindDetachVolumes, Why: "volume targets on an idle node (" + v.Shown + ")"}
	}
	return Action{Kind: KindUnreserve, RemoveInstance: ours, Why: "node idle (" + v.Shown + ")"}
}

// buildSteps are the steps a build phase's faults name (StepRelease for the others).
var buildSteps = map[Phase]Step{PhasePending: StepSchedule, PhaseReserving: StepReserve, PhaseNetworking: StepNetwork,
	PhaseVolumes: StepVolumes, PhaseDeploying: StepDeploy, PhaseActive: StepActive}

func phaseStep(p Phase) Step {
	if st, ok := buildSteps[p]; ok {
		return st
	}
	return StepRelease
}
