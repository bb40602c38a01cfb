package lifecycle

import (
	"fmt"
	"slices"
	"time"
)

// Config holds the lifecycle's limits.
type Config struct {
	BuildTimeout     time.Duration // deadline of a build, from creation
	DeleteTimeout    time.Duration // deadline of a delete, from the request
	MaintenanceGrace time.Duration // how long a deploy may sit in maintenance before it fails
	MaxAttempts      int           // node attempts before ERROR
}

// DefaultConfig is what ingot runs with unless configured otherwise.
func DefaultConfig() Config {
	return Config{
		BuildTimeout:     60 * time.Minute,
		DeleteTimeout:    10 * time.Minute,
		MaintenanceGrace: 5 * time.Minute,
		MaxAttempts:      3,
	}
}

// NodeView is what Ironic shows now of the server's node (Server.NodeID).
type NodeView struct {
	// Observed: Ironic answered for this node this tick. False when Ironic
	// is unreachable, or when the node was not looked at.
	Observed             bool
	Exists               bool // false: Ironic answered 404
	InstanceUUID         string
	ProvisionState       string
	TargetProvisionState string
	LastError            string
	Maintenance          bool
	Locked               bool // a conductor holds the node's lock
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

// Kind is the closed set of next actions.
type Kind int

const (
	// KindWait: nothing to do until Ironic or the user changes something.
	KindWait Kind = iota
	// KindSave: persist Action.Next (a pure transition) with its events.
	KindSave
	// KindSchedule: choose a node; report it with Scheduled or NoCandidate.
	KindSchedule
	// KindReserve: PATCH our instance_uuid onto Server.NodeID.
	KindReserve
	// KindNetwork: allocate a port per network and attach its VIF to Server.NodeID.
	KindNetwork
	// KindDeploy: set instance_info and ask Ironic to deploy Server.NodeID.
	KindDeploy
	// KindUndeploy: ask Ironic to tear down Server.NodeID (provision "deleted").
	KindUndeploy
	// KindUnreserve: detach our VIFs from Server.NodeID, then remove our
	// instance_uuid and instance_info if Action.RemoveInstance.
	KindUnreserve
	// KindFreePorts: free every port of the server (VIFs already detached or gone with the node).
	KindFreePorts
	// KindAttachVolumes: create the volume connector and one volume target per
	// volume on Server.NodeID, and mark the volumes in-use.
	KindAttachVolumes
	// KindDetachVolumes: power Server.NodeID off, remove our volume targets and
	// connector from it; the volumes go back to reserved.
	KindDetachVolumes
	// KindReleaseVolumes: end the server's hold on its volumes (available, or
	// deleted with the server when delete_on_termination).
	KindReleaseVolumes
	// KindStrandVolumes: our volume targets are on a node another instance
	// now holds (I7: never touch it); mark those volumes stranded (error, with
	// the reason) so they are never handed out while a target points at them.
	KindStrandVolumes
)

var kindNames = [...]string{"wait", "save", "schedule", "reserve", "network", "deploy", "undeploy", "unreserve", "free_ports",
	"attach_volumes", "detach_volumes", "release_volumes", "strand_volumes"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Action is Decide's answer.
type Action struct {
	Kind   Kind
	Next   *Server // KindSave: the new record
	Events []Event // KindSave: what to record with it
	// RemoveInstance (KindUnreserve): the node still carries our instance_uuid.
	RemoveInstance bool
	Why            string // for logs
}

func wait(why string) Action { return Action{Kind: KindWait, Why: why} }

// Decide returns the one next action for a server. It is pure: the same
// input always gives the same action. The user's delete is consulted first,
// and every non-stable phase has a deadline, so there is always a way out.
func Decide(in Input, cfg Config) Action {
	s := in.Server
	if s.Desired == DesiredDeleted || s.Phase == PhaseDeleting {
		return decideDelete(in, cfg)
	}
	switch s.Phase {
	case PhasePending:
		if a, ok := buildDeadline(in); ok {
			return a
		}
		return Action{Kind: KindSchedule, Why: "no node yet"}
	case PhaseReserving:
		if a, ok := buildDeadline(in); ok {
			return a
		}
		return Action{Kind: KindReserve, Why: "node chosen"}
	case PhaseNetworking:
		if a, ok := buildDeadline(in); ok {
			return a
		}
		if !s.PortsAllocated && len(s.Spec.Networks) > 0 {
			n := s.Clone()
			n.PortsAllocated = true
			return save(n, in.Now, "ports about to be allocated")
		}
		return Action{Kind: KindNetwork, Why: "node reserved"}
	case PhaseVolumes:
		if a, ok := buildDeadline(in); ok {
			return a
		}
		if !s.VolumesOnNode {
			n := s.Clone()
			n.VolumesOnNode = true
			return save(n, in.Now, "volume targets about to be created")
		}
		return Action{Kind: KindAttachVolumes, Why: "networks wired"}
	case PhaseDeploying:
		if a, ok := buildDeadline(in); ok {
			return a
		}
		if !s.DeployRequested {
			n := s.Clone()
			n.DeployRequested = true
			return save(n, in.Now, "deploy about to be requested",
				event(s, in.Now, "compute__do_build_and_run_instance", "", fmt.Sprintf("deploy requested on node %s", s.NodeID)))
		}
		return decideDeploying(in, cfg)
	case PhaseActive:
		return decideActive(in)
	case PhaseReleasing:
		if in.Now.After(s.Deadline) {
			n := toError(s, in.Now, s.Fault)
			return save(n, in.Now, "deadline passed while releasing", errorEvent(n, in.Now))
		}
		if s.NodeID != "" || s.PortsAllocated {
			return decideRelease(in)
		}
		return afterRelease(in, cfg)
	case PhaseError, PhaseDeleted:
		if s.Holds() {
			return decideRelease(in)
		}
		return wait("stable")
	}
	return wait("unknown phase " + string(s.Phase))
}

// buildDeadline moves a build past its deadline to ERROR at once (I1); what
// it still holds is released afterwards, in phase error.
func buildDeadline(in Input) (Action, bool) {
	s := in.Server
	if !in.Now.After(s.Deadline) {
		return Action{}, false
	}
	reason, msg := ReasonBuildTimeout, fmt.Sprintf("build timed out in phase %s", s.Phase)
	if in.IronicDown {
		reason, msg = ReasonIronicUnavailable, fmt.Sprintf("Ironic unreachable until the build deadline, in phase %s", s.Phase)
	}
	if s.NodeID != "" {
		msg += " on node " + s.NodeID
	}
	f := &Fault{Reason: reason, Message: msg, Node: s.NodeID, Step: phaseStep(s.Phase), At: in.Now}
	n := toError(s, in.Now, f)
	n.Attempts = append(n.Attempts, Attempt{Node: s.NodeID, Step: f.Step, Reason: reason, Message: msg, At: in.Now})
	return save(n, in.Now, "build deadline passed", errorEvent(n, in.Now)), true
}

func decideDeploying(in Input, cfg Config) Action {
	s, v := in.Server, in.Node
	if !v.Observed {
		return wait("node not observed")
	}
	if !v.Exists {
		return fail(in, ReasonNodeDeleted, StepDeploy, fmt.Sprintf("node %s was deleted while deploying", s.NodeID))
	}
	if v.InstanceUUID != s.ID {
		return lostNode(in, StepDeploy)
	}
	switch v.ProvisionState {
	case "active":
		n := s.Clone()
		n.Phase = PhaseActive
		n.PhaseSince = in.Now
		n.Fault = nil
		n.MaintenanceSince = time.Time{}
		if n.LaunchedAt.IsZero() {
			n.LaunchedAt = in.Now
		}
		return save(n, in.Now, "node active",
			event(s, in.Now, "compute__do_build_and_run_instance", ResultSuccess, fmt.Sprintf("node %s is active", s.NodeID)))
	case "deploy failed":
		msg := fmt.Sprintf("deploy failed on node %s", s.NodeID)
		if v.LastError != "" {
			msg += ": " + v.LastError
		}
		return fail(in, ReasonDeployFailed, StepDeploy, msg)
	case "deleting", "cleaning", "clean wait", "clean failed":
		return fail(in, ReasonNodeTornDown, StepDeploy, fmt.Sprintf("node %s was torn down while deploying (%s)", s.NodeID, v.ProvisionState))
	case "error":
		msg := fmt.Sprintf("node %s went to error while deploying", s.NodeID)
		if v.LastError != "" {
			msg += ": " + v.LastError
		}
		return fail(in, ReasonDeployFailed, StepDeploy, msg)
	}
	if v.Maintenance {
		return maintenance(in, cfg)
	}
	if !s.MaintenanceSince.IsZero() {
		n := s.Clone()
		n.MaintenanceSince = time.Time{}
		return save(n, in.Now, "maintenance cleared")
	}
	if v.ProvisionState == "available" && v.TargetProvisionState == "" && !v.Locked {
		// Our instance_uuid is there but no deploy runs: the request was never
		// sent (a crash after recording it) or was refused. Sending it again is safe.
		return Action{Kind: KindDeploy, Why: "deploy not started"}
	}
	return wait("deploying (" + v.ProvisionState + ")")
}

func maintenance(in Input, cfg Config) Action {
	s := in.Server
	if s.MaintenanceSince.IsZero() {
		n := s.Clone()
		n.MaintenanceSince = in.Now
		return save(n, in.Now, "node in maintenance",
			event(s, in.Now, "node_maintenance", "", fmt.Sprintf("node %s put in maintenance while deploying; waiting up to %s", s.NodeID, cfg.MaintenanceGrace)))
	}
	if in.Now.Sub(s.MaintenanceSince) >= cfg.MaintenanceGrace {
		return fail(in, ReasonNodeMaintenance, StepDeploy,
			fmt.Sprintf("node %s stayed in maintenance for %s while deploying", s.NodeID, cfg.MaintenanceGrace))
	}
	return wait("node in maintenance")
}

// lostNode handles a node whose instance_uuid is no longer ours.
func lostNode(in Input, step Step) Action {
	s, v := in.Server, in.Node
	if v.InstanceUUID == "" && tornDown(v.ProvisionState) {
		return fail(in, ReasonNodeTornDown, step, fmt.Sprintf("node %s was torn down (%s, instance_uuid cleared)", s.NodeID, v.ProvisionState))
	}
	msg := fmt.Sprintf("instance_uuid of node %s was removed behind ingot's back", s.NodeID)
	if v.InstanceUUID != "" {
		msg = fmt.Sprintf("node %s now belongs to instance %s", s.NodeID, v.InstanceUUID)
	}
	return fail(in, ReasonNodeDisassociated, step, msg)
}

func decideActive(in Input) Action {
	s, v := in.Server, in.Node
	if !v.Observed {
		return wait("node not observed")
	}
	var reason Reason
	var msg string
	switch {
	case !v.Exists:
		reason, msg = ReasonNodeDeleted, fmt.Sprintf("node %s was deleted while the server was active", s.NodeID)
	case v.InstanceUUID != s.ID && v.InstanceUUID == "" && tornDown(v.ProvisionState):
		reason, msg = ReasonNodeTornDown, fmt.Sprintf("node %s was torn down while the server was active (%s)", s.NodeID, v.ProvisionState)
	case v.InstanceUUID != s.ID:
		reason, msg = ReasonNodeDisassociated, fmt.Sprintf("instance_uuid of node %s was removed behind ingot's back", s.NodeID)
		if v.InstanceUUID != "" {
			msg = fmt.Sprintf("node %s now belongs to instance %s", s.NodeID, v.InstanceUUID)
		}
	case v.ProvisionState != "active":
		reason, msg = ReasonNodeTornDown, fmt.Sprintf("node %s left active while the server was active (%s)", s.NodeID, v.ProvisionState)
	default:
		return wait("active")
	}
	f := &Fault{Reason: reason, Message: msg, Node: s.NodeID, Step: StepActive, At: in.Now}
	n := toError(s, in.Now, f)
	n.Attempts = append(n.Attempts, Attempt{Node: s.NodeID, Step: StepActive, Reason: reason, Message: msg, At: in.Now})
	return save(n, in.Now, "node lost while active", errorEvent(n, in.Now))
}

// fail ends the current attempt: the server releases what the attempt holds,
// then reschedules or goes to ERROR.
func fail(in Input, reason Reason, step Step, msg string) Action {
	s := in.Server
	n := s.Clone()
	n.Phase = PhaseReleasing
	n.PhaseSince = in.Now
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

// afterRelease decides, once a failed attempt holds nothing, between a
// reschedule and ERROR.
func afterRelease(in Input, cfg Config) Action {
	s := in.Server
	if s.Fault != nil && s.Fault.Reason.Reschedulable() && len(s.Attempts) < cfg.MaxAttempts {
		n := s.Clone()
		n.Phase = PhasePending
		n.PhaseSince = in.Now
		n.Fault = nil
		n.Reserved, n.DeployRequested = false, false
		return save(n, in.Now, "rescheduling",
			event(s, in.Now, "reschedule", ResultSuccess, fmt.Sprintf("attempt %d of %d failed (%s); rescheduling", len(s.Attempts), cfg.MaxAttempts, faultReason(s))))
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

func faultReason(s *Server) Reason {
	if s.Fault == nil {
		return ""
	}
	return s.Fault.Reason
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
		if s.Holds() && in.Now.Before(s.DeleteRequestedAt.Add(cfg.DeleteTimeout)) {
			return decideRelease(in)
		}
		n := s.Clone()
		n.Phase = PhaseDeleted
		n.PhaseSince = in.Now
		details := "server deleted"
		if s.Holds() {
			details = "delete deadline passed; releasing continues in the background"
		}
		return save(n, in.Now, "delete done", Event{ServerID: s.ID, RequestID: s.DeleteRequestID, Action: ActionDelete,
			Name: "compute_terminate_instance", Node: s.NodeID, Result: ResultSuccess, Details: details, Start: in.Now, Finish: in.Now})
	}
	n := s.Clone()
	n.Phase = PhaseDeleting
	n.PhaseSince = in.Now
	n.MaintenanceSince = time.Time{}
	return save(n, in.Now, "delete accepted", Event{ServerID: s.ID, RequestID: s.DeleteRequestID, Action: ActionDelete,
		Name: "compute_terminate_instance", Node: s.NodeID, Details: fmt.Sprintf("deleting from phase %s", s.Phase), Start: in.Now})
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
	if !v.Observed {
		return wait("node not observed")
	}
	if !v.Exists {
		return save(dropNode(s, in.Now), in.Now, "node gone",
			event(s, in.Now, "release_node", ResultSuccess, fmt.Sprintf("node %s no longer exists; nothing to release in Ironic", s.NodeID)))
	}
	if v.InstanceUUID != "" && v.InstanceUUID != s.ID {
		// I7: the node is someone else's now; never touch it.
		if s.VolumesOnNode {
			return Action{Kind: KindStrandVolumes, Why: "volume targets on a node another instance holds"}
		}
		return save(dropNode(s, in.Now), in.Now, "node not ours",
			event(s, in.Now, "release_node", ResultSuccess, fmt.Sprintf("node %s belongs to instance %s; left alone", s.NodeID, v.InstanceUUID)))
	}
	if v.Locked {
		return wait("node locked")
	}
	ours := v.InstanceUUID == s.ID
	switch v.ProvisionState {
	case "deploying", "wait call-back", "active", "deploy failed", "deploy hold", "error",
		"rescue", "rescue failed", "rescue wait", "rescuing", "unrescuing", "service failed":
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
		if v.ProvisionState == "deploying" {
			return wait("deploy in progress; undeploy once it settles")
		}
		return Action{Kind: KindUndeploy, Why: "node deployed (" + v.ProvisionState + ")"}
	case "deleting", "cleaning", "clean wait", "verifying", "inspecting", "inspect wait", "adopting", "servicing", "service wait":
		return wait("node busy (" + v.ProvisionState + ")")
	}
	if s.VolumesOnNode {
		// Targets survive an undeploy and block nothing, but they are ours:
		// remove them while the node is still ours, before the reservation.
		return Action{Kind: KindDetachVolumes, Why: "volume targets on an idle node (" + v.ProvisionState + ")"}
	}
	return Action{Kind: KindUnreserve, RemoveInstance: ours, Why: "node idle (" + v.ProvisionState + ")"}
}

// dropNode forgets the node: the server no longer holds it.
func dropNode(s *Server, now time.Time) *Server {
	n := s.Clone()
	n.NodeID = ""
	n.Reserved = false
	n.DeployRequested = false
	n.VolumesOnNode = false // gone with the node, or left on a node no longer ours (I7)
	n.MaintenanceSince = time.Time{}
	return n
}

func toError(s *Server, now time.Time, f *Fault) *Server {
	n := s.Clone()
	n.Phase = PhaseError
	n.PhaseSince = now
	n.MaintenanceSince = time.Time{}
	if f == nil {
		f = &Fault{Reason: ReasonBuildTimeout, Message: "build failed", At: now}
	}
	cp := *f
	n.Fault = &cp
	return n
}

func errorEvent(n *Server, now time.Time) Event {
	return Event{ServerID: n.ID, RequestID: n.CreateRequestID, Action: ActionCreate, Name: "compute__do_build_and_run_instance",
		Node: n.Fault.Node, Result: ResultError, Details: string(n.Fault.Reason) + ": " + n.Fault.Message, Start: now, Finish: now}
}

func save(n *Server, now time.Time, why string, events ...Event) Action {
	n.UpdatedAt = now
	return Action{Kind: KindSave, Next: n, Events: events, Why: why}
}

// event builds an event of the action the server is in (create or delete).
func event(s *Server, now time.Time, name, result, details string) Event {
	e := Event{ServerID: s.ID, RequestID: s.CreateRequestID, Action: ActionCreate, Name: name, Node: s.NodeID,
		Result: result, Details: details, Start: now}
	if s.Desired == DesiredDeleted {
		e.RequestID, e.Action = s.DeleteRequestID, ActionDelete
	}
	if result != "" {
		e.Finish = now
	}
	return e
}

func phaseStep(p Phase) Step {
	switch p {
	case PhasePending:
		return StepSchedule
	case PhaseReserving:
		return StepReserve
	case PhaseNetworking:
		return StepNetwork
	case PhaseVolumes:
		return StepVolumes
	case PhaseDeploying:
		return StepDeploy
	case PhaseActive:
		return StepActive
	}
	return StepRelease
}

// tornDown reports whether a provision state means the deploy was undone.
func tornDown(state string) bool {
	switch state {
	case "deleting", "cleaning", "clean wait", "clean failed", "available", "manageable":
		return true
	}
	return false
}
