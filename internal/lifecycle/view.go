package lifecycle

// NodeState is a node's provision state as the lifecycle tells them apart.
// The reconciler's view builder classifies Ironic's states into it once, at
// the edge; nothing in this package knows how Ironic spells them. The set is
// closed: a state the view builder does not know is NodeUnexpected, which
// every decision bounds by a deadline.
type NodeState int

const (
	// NodeUnobserved: Ironic did not answer for the node this tick, or it
	// was not looked at. Decisions that need the node wait.
	NodeUnobserved NodeState = iota
	// NodeGone: Ironic answered that the node does not exist.
	NodeGone
	// NodeAvailable: idle and ready for a deploy.
	NodeAvailable
	// NodeDeploying: the conductor is deploying; it cannot be interrupted.
	NodeDeploying
	// NodeDeployWaiting: a deploy waits on the machine (for the ramdisk's
	// callback, or held between deploy steps); unlike NodeDeploying it can
	// be undeployed.
	NodeDeployWaiting
	// NodeActive: deployed.
	NodeActive
	// NodeDeployFailed: the deploy failed; the node stays deployed-ish until undeployed.
	NodeDeployFailed
	// NodeFailed: a failure after a deploy (a failed teardown, rescue, unrescue or service).
	NodeFailed
	// NodeTearingDown: being undeployed or cleaned.
	NodeTearingDown
	// NodeCleanFailed: cleaning failed; an operator must act.
	NodeCleanFailed
	// NodeIdle: neither deployed nor available (enrolled, manageable, a failed inspection or adoption).
	NodeIdle
	// NodeBusy: an operator's transition that is not a deploy (verifying, inspecting, adopting, servicing).
	NodeBusy
	// NodeRescue: in, entering or leaving rescue mode.
	NodeRescue
	// NodeUnexpected: a state ingot does not know.
	NodeUnexpected
)

var nodeStateNames = [...]string{"unobserved", "gone", "available", "deploying", "deploy_waiting", "active", "deploy_failed", "failed",
	"tearing_down", "clean_failed", "idle", "busy", "rescue", "unexpected"}

func (s NodeState) String() string { return enumName(nodeStateNames[:], int(s), "node_state") }

// deployed reports whether the node carries (or was carrying) a deploy that
// must be undone before the node can be given back.
func (s NodeState) deployed() bool {
	switch s {
	case NodeDeploying, NodeDeployWaiting, NodeActive, NodeDeployFailed, NodeFailed, NodeRescue:
		return true
	}
	return false
}

// undone reports whether the state means the deploy was undone or never
// happened: the node is being cleaned, is idle, or is available again.
func (s NodeState) undone() bool {
	switch s {
	case NodeTearingDown, NodeCleanFailed, NodeAvailable, NodeIdle:
		return true
	}
	return false
}

// Holder says whose instance_uuid a node carries, from the server's side.
type Holder int

const (
	// HeldByNobody: the node carries no instance_uuid.
	HeldByNobody Holder = iota
	// HeldByUs: the node carries this server's id.
	HeldByUs
	// HeldByOther: the node carries another instance's id.
	HeldByOther
)

// NodeView is what Ironic shows now of the server's node (Server.NodeID),
// already classified.
type NodeView struct {
	State  NodeState
	Holder Holder
	// Other is the instance the node carries when Holder is HeldByOther (for messages).
	Other string
	// Settling: Ironic shows a target provision state, so a transition is under way.
	Settling    bool
	Maintenance bool
	Locked      bool // a conductor holds the node's lock
	LastError   string
	// Power is the node's power state; PowerSettling: Ironic shows a target
	// power state, so a power change is under way.
	Power         Power
	PowerSettling bool
	// Shown is the provision state as Ironic spells it, for messages only;
	// no decision reads it.
	Shown string
}

// Observed reports whether Ironic answered for the node this tick.
func (v NodeView) Observed() bool { return v.State != NodeUnobserved }

// Exists reports whether Ironic answered and the node exists.
func (v NodeView) Exists() bool { return v.State != NodeUnobserved && v.State != NodeGone }

// Transit is what a server waiting on Ironic waits for it to carry out.
type Transit int

const (
	NoTransit       Transit = iota // nothing Ironic does for it
	TransitPower                   // a power change or reboot; the node stays active
	TransitDeploy                  // a deploy or rebuild
	TransitTeardown                // an undeploy, then cleaning
	TransitRescue                  // into rescue
	TransitUnrescue                // out of rescue
)

// Awaits says what s waits for Ironic to finish of what the reconciler
// asked for, so that its outcome is worth watching closely. A failed or
// deleted server cleaning up, or a build waiting for capacity, waits on
// nothing: nobody watches them second by second.
func Awaits(s *Server) Transit {
	if s.NodeID == "" {
		return NoTransit
	}
	switch s.Phase {
	case PhaseDeploying:
		if s.DeployRequested {
			return TransitDeploy
		}
	case PhaseDeleting, PhaseReleasing:
		return TransitTeardown
	}
	if op, ok := opIn(s.Phase); ok && s.OpSent {
		return op.transit
	}
	return NoTransit
}

// WaitsOnIronic reports whether s waits for Ironic to finish something the
// reconciler asked for (Awaits).
func WaitsOnIronic(s *Server) bool { return Awaits(s) != NoTransit }
