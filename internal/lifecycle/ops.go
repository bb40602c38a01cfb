package lifecycle

import (
	"slices"
	"time"
)

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
	// OpAttachVolume and OpDetachVolume are os-volume_attachments' POST and
	// DELETE of Op.VolumeID (volumeops.go).
	OpAttachVolume OpKind = "attach_volume"
	OpDetachVolume OpKind = "detach_volume"
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
	// Network is the network of the port an interface attach or detach
	// is about; FixedIP the address and UserPort the user's own port an
	// attach asks for there (interfaces.go).
	Network  string `json:"network,omitempty"`
	FixedIP  string `json:"fixed_ip,omitempty"`
	UserPort string `json:"user_port,omitempty"`
	// Port is the id of the port row an interface operation is about (an
	// attach makes its row with it, so that a retry finds it).
	Port string `json:"port,omitempty"`
	// VolumeID is the volume an attach or detach is of.
	VolumeID string `json:"volume_id,omitempty"`
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

// opSpec is what a day-2 operation is.
type opSpec struct {
	step    Step    // the step its faults name
	event   string  // Nova's event name
	phase   Phase   // the phase it runs in ("" for a reset: a write, no Ironic action)
	from    []Phase // the resting phases it starts from
	done    Phase   // with noop: the phase in which there is nothing to do
	noop    string  // the details of finishing at once in done
	task    string  // Nova's task_state while it is pending or under way (reboot and rebuild: their own)
	transit Transit // what Ironic carries out for it once it is sent
}

// ops are the day-2 operations: step, event, phase, from, done, noop, task, transit.
var ops = map[OpKind]opSpec{
	OpReboot:   {StepReboot, "compute_reboot_instance", PhaseRebooting, []Phase{PhaseActive}, "", "", "", TransitPower},
	OpStop:     {StepStop, "compute_stop_instance", PhasePoweringOff, []Phase{PhaseActive}, PhaseStopped, "already stopped", "powering-off", TransitPower},
	OpStart:    {StepStart, "compute_start_instance", PhasePoweringOn, []Phase{PhaseStopped}, PhaseActive, "already running", "powering-on", TransitPower},
	OpRebuild:  {StepRebuild, "compute_rebuild_instance", PhaseRebuilding, []Phase{PhaseActive, PhaseStopped}, "", "", "", TransitDeploy},
	OpRescue:   {StepRescue, "compute_rescue_instance", PhaseRescuing, []Phase{PhaseActive, PhaseStopped}, "", "", "rescuing", TransitRescue},
	OpUnrescue: {StepUnrescue, "compute_unrescue_instance", PhaseUnrescuing, []Phase{PhaseRescued}, PhaseActive, "not in rescue", "unrescuing", TransitUnrescue},
	OpReset:    {step: StepReset, event: "api_reset_state"},
	// Ironic removes a volume target only from a powered-off node: a
	// detach from ACTIVE powers the node off and on again (detachcycle.go).
	OpAttachVolume: {StepAttach, "compute_attach_volume", PhaseAttachingVolume, []Phase{PhaseActive, PhaseStopped}, "", "", "", NoTransit},
	OpDetachVolume: {StepDetach, "compute_detach_volume", PhaseDetachingVolume, []Phase{PhaseActive, PhaseStopped}, "", "", "", NoTransit},
}

// opIn is the operation phase p runs (false: p is no operation's phase).
func opIn(p Phase) (opSpec, bool) {
	for _, op := range ops {
		if op.phase == p && p != "" {
			return op, true
		}
	}
	return opSpec{}, false
}

// startsFrom reports whether operation k starts from resting phase p: the
// table's phases, a hard reboot from stopped too, and a rebuild of a server
// held in error.
func startsFrom(k OpKind, p Phase, hard, held bool) bool {
	return slices.Contains(ops[k].from, p) || (k == OpReboot && hard && p == PhaseStopped) || (k == OpRebuild && held)
}

// opOf is operation k's spec; for a kind it does not know, the step and
// event name its faults and events carry.
func opOf(k OpKind) opSpec {
	if op, ok := ops[k]; ok {
		return op
	}
	return opSpec{step: StepActive, event: "compute_" + string(k)}
}

// Allowed says whether the user may ask for op k on s now, as Nova's
// check_instance_state would: nil, or an error naming the state that
// refuses it (the API answers 409 with it).
func Allowed(s *Server, k OpKind, hard bool) *StateConflict {
	st := Nova(s)
	// Nova rebuilds in ERROR too; here only a server that still holds its
	// deployed node (reset to error by an admin) can be. A server at rest
	// shows its phase's name as vm_state.
	held := st.VMState == "error" && (s.HeldInError() || resetPending(s))
	if !startsFrom(k, Phase(st.VMState), hard, held) {
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
