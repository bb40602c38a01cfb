package lifecycle

import "time"

// OpKind names a day-2 operation, as os-instance-actions spells it.
type OpKind string

const (
	OpReboot   OpKind = "reboot"
	OpStop     OpKind = "stop"
	OpStart    OpKind = "start"
	OpRebuild  OpKind = "rebuild"
	OpRescue   OpKind = "rescue"
	OpUnrescue OpKind = "unrescue"
	// OpReset is an admin's os-resetState: the recorded state set to ResetTo
	// (error or active) with no Ironic action (reset.go).
	OpReset OpKind = "resetState"
)

// Op is a day-2 operation the user asked for. At most one is pending at a
// time: the API refuses another while one is (Nova's task_state rule).
type Op struct {
	Kind      OpKind    `json:"kind"`
	Hard      bool      `json:"hard,omitempty"` // reboot: HARD rather than SOFT
	RequestID string    `json:"request_id"`
	At        time.Time `json:"at"`
	// RescuePassword is given to Ironic's rescue ramdisk; never shown.
	RescuePassword string `json:"rescue_password,omitempty"`
	// ResetTo is the state an OpReset sets: ResetError or ResetActive.
	ResetTo string `json:"reset_to,omitempty"`
}

// Lock is a server's lock, as Nova keeps it.
type Lock struct {
	Locked bool   `json:"locked,omitempty"`
	By     string `json:"by,omitempty"` // "owner" or "admin"
	Reason string `json:"reason,omitempty"`
}

// Power is a node's power as the lifecycle tells it apart.
type Power string

const (
	PowerUnknown Power = ""
	PowerOn      Power = "on"
	PowerOff     Power = "off"
)

// OpPending reports whether an operation was asked for and not yet carried out.
func (s *Server) OpPending() bool { return s.OpGen > s.OpDone }

// opNames are an operation's step (its faults name it) and Nova's event name.
var opNames = map[OpKind]struct {
	step  Step
	event string
}{
	OpReboot: {StepReboot, "compute_reboot_instance"}, OpStop: {StepStop, "compute_stop_instance"},
	OpStart: {StepStart, "compute_start_instance"}, OpRebuild: {StepRebuild, "compute_rebuild_instance"},
	OpRescue: {StepRescue, "compute_rescue_instance"}, OpUnrescue: {StepUnrescue, "compute_unrescue_instance"},
	OpReset: {StepReset, "api_reset_state"},
}

// opStep is the step an operation's faults name.
func opStep(k OpKind) Step {
	if n, ok := opNames[k]; ok {
		return n.step
	}
	return StepActive
}

// opEventName is Nova's event name for an operation.
func opEventName(k OpKind) string {
	if n, ok := opNames[k]; ok {
		return n.event
	}
	return "compute_" + string(k)
}

// opEvent is an event of the operation in progress.
func opEvent(s *Server, now time.Time, result, details string) Event {
	e := Event{ServerID: s.ID, RequestID: s.Op.RequestID, Action: string(s.Op.Kind), Name: opEventName(s.Op.Kind),
		Node: s.NodeID, Result: result, Details: details, Start: now}
	if result != "" {
		e.Finish = now
	}
	return e
}

// Allowed says whether the user may ask for op k on s now, as Nova's
// check_instance_state would: nil, or an error naming the state that
// refuses it (the API answers 409 with it).
func Allowed(s *Server, k OpKind, hard bool) *StateConflict {
	st := Nova(s)
	ok := false
	vm := st.VMState
	switch k {
	case OpReboot:
		ok = vm == "active" || (hard && vm == "stopped")
	case OpStop:
		ok = vm == "active"
	case OpStart:
		ok = vm == "stopped"
	case OpRebuild:
		// Nova rebuilds in ERROR too; here only a server that still holds its
		// deployed node (reset to error by an admin) can be.
		ok = vm == "active" || vm == "stopped" || (vm == "error" && (s.HeldInError() || resetPending(s)))
	case OpRescue:
		ok = vm == "active" || vm == "stopped"
	case OpUnrescue:
		ok = vm == "rescued"
	}
	if !ok {
		return &StateConflict{Op: k, Attr: "vm_state", State: st.VMState}
	}
	// Nova's reset is synchronous, so a rebuild may follow it at once: here
	// the rebuild replaces a reset not yet carried out (its end is the same).
	if st.TaskState != "" || (s.OpPending() && !(k == OpRebuild && resetPending(s))) {
		return &StateConflict{Op: k, Attr: "task_state", State: st.TaskState}
	}
	return nil
}

// StateConflict is why an operation is refused in the server's state.
type StateConflict struct {
	Op    OpKind
	Attr  string // "vm_state" or "task_state"
	State string
}

func (c *StateConflict) Error() string { return c.Message("") }

// Message is Nova's conflict text for server id.
func (c *StateConflict) Message(id string) string {
	state := c.State
	if state == "" {
		state = "None"
	}
	inst := "instance"
	if id != "" {
		inst += " " + id
	}
	return "Cannot '" + string(c.Op) + "' " + inst + " while it is in " + c.Attr + " " + state
}
