package lifecycle

import (
	"slices"
	"sync"
)

// NovaState is how a server shows in the Nova-shaped API.
type NovaState struct {
	Status    string // BUILD, ACTIVE, SHUTOFF, ERROR, …, DELETED
	VMState   string // building, active, stopped, error, …, deleted
	TaskState string // "" (null), scheduling, networking, block_device_mapping, spawning, deleting
	Visible   bool   // false: the API answers 404
}

// ShowsDelete reports whether the state is one of a server a delete was
// accepted for: task_state deleting, or DELETED (I2).
func (st NovaState) ShowsDelete() bool { return st.TaskState == "deleting" || st.Status == "DELETED" }

// Nova maps a server to Nova's status, vm_state and task_state. Desired
// deleted is consulted first: once a delete is accepted the server shows
// task_state deleting until it is gone, then DELETED (I2).
func Nova(s *Server) NovaState {
	if s.Phase == PhaseDeleted {
		return NovaState{Status: "DELETED", VMState: "deleted"}
	}
	if s.Desired == DesiredDeleted || s.Phase == PhaseDeleting {
		return novaDeleting(s)
	}
	if st, ok := novaDay2(s); ok {
		return st
	}
	if s.Phase == PhaseError {
		return NovaState{Status: "ERROR", VMState: "error", Visible: true}
	}
	task, ok := buildTasks[s.Phase]
	if !ok {
		task = "spawning" // deploying, releasing
	}
	return NovaState{Status: "BUILD", VMState: "building", TaskState: task, Visible: true}
}

// buildTasks are Nova's task_states of the build phases before the deploy
// (block_device_mapping: while it attaches volumes).
var buildTasks = map[Phase]string{PhasePending: "scheduling", PhaseReserving: "scheduling", PhaseNetworking: "networking",
	PhaseVolumes: "block_device_mapping"}

// novaDeleting is Nova's view of a delete under way: the compute API sets
// task_state deleting and leaves vm_state alone, and a vm_state shows its
// default status whatever else was pending (REBOOT shows ACTIVE again).
func novaDeleting(s *Server) NovaState {
	from := *s
	from.Desired = DesiredActive
	if s.Phase == PhaseDeleting {
		from.Phase = deletedFrom(s)
	}
	vm := Nova(&from).VMState
	return NovaState{Status: vmStatus[vm], VMState: vm, TaskState: "deleting", Visible: true}
}

// vmStatus is the status Nova shows for a vm_state when its task_state has
// no status of its own.
var vmStatus = map[string]string{"building": "BUILD", "active": "ACTIVE", "stopped": "SHUTOFF", "rescued": "RESCUE", "error": "ERROR"}

// deletedFrom is the phase the delete was accepted in; for a record written
// before DeleteFrom was kept, the closest phase its fields tell.
func deletedFrom(s *Server) Phase {
	switch {
	case s.DeleteFrom != "" && s.DeleteFrom != PhaseDeleting && s.DeleteFrom != PhaseDeleted:
		return s.DeleteFrom
	case s.Fault != nil:
		return PhaseError
	case s.LaunchedAt.IsZero():
		return PhasePending
	case s.PowerSeen == PowerOff:
		return PhaseStopped
	}
	return PhaseActive
}

// novaDay2 maps the phases of a built server and its pending operation. An
// operation shows from the moment the API recorded it, as Nova's API sets
// task_state before it answers.
func novaDay2(s *Server) (NovaState, bool) {
	st := NovaState{Visible: true}
	hard := s.Op.Hard || s.OpFallback
	reboot := func(started bool) {
		st.Status, st.TaskState = "REBOOT", "reboot_pending"
		if started {
			st.TaskState = "reboot_started"
		}
		if hard {
			st.Status, st.TaskState = "HARD_REBOOT", st.TaskState+"_hard"
		}
	}
	switch s.Phase {
	case PhaseActive, PhaseStopped, PhaseRescued:
		st.VMState = string(s.Phase) // a resting phase is spelled as its vm_state
		st.Status = vmStatus[st.VMState]
		if !s.OpPending() {
			return st, true
		}
		switch s.Op.Kind {
		case OpReboot:
			if s.Phase == PhaseActive {
				reboot(false)
			} else {
				st.TaskState = "reboot_pending_hard"
			}
		case OpRebuild:
			st.Status, st.TaskState = "REBUILD", "rebuilding"
		case OpReset:
			// Nova's reset is synchronous: show the state it sets at once.
			st.Status, st.VMState = resetStatus(s.Op.ResetTo)
		default:
			st.TaskState = ops[s.Op.Kind].task
		}
		return st, true
	case PhaseRebooting:
		st.VMState = "active"
		reboot(s.OpSent)
	case PhasePoweringOff, PhasePoweringOn, PhaseRescuing, PhaseUnrescuing:
		// Shown as the phase it starts from (a rescue: active, whatever it started from).
		op, _ := opIn(s.Phase)
		st.VMState, st.TaskState = string(op.from[0]), op.task
		st.Status = vmStatus[st.VMState]
	case PhaseAttachingInterface, PhaseDetachingInterface:
		// Nova's interface attach and detach leave task_state alone.
		st.VMState = string(volumeOpFrom(s))
		st.Status = vmStatus[st.VMState]
	case PhaseAttachingVolume, PhaseDetachingVolume:
		// Nova sets no task_state for a volume attach or detach.
		st.VMState = string(volumeOpFrom(s))
		st.Status = vmStatus[st.VMState]
	case PhaseRebuilding:
		st.Status, st.VMState, st.TaskState = "REBUILD", "active", "rebuilding"
		if s.StopAfterRebuild {
			st.VMState = "stopped"
		}
		if s.OpSent {
			st.TaskState = "rebuild_spawning"
		}
	case PhaseError:
		if !s.HeldInError() || !s.OpPending() {
			return NovaState{}, false
		}
		st.Status, st.VMState = "ERROR", "error"
		switch s.Op.Kind {
		case OpRebuild:
			st.Status, st.TaskState = "REBUILD", "rebuilding"
		case OpReset:
			st.Status, st.VMState = resetStatus(s.Op.ResetTo)
		}
	default:
		return NovaState{}, false
	}
	return st, true
}

// Nova's numeric power states.
const (
	PowerNoState  = 0
	PowerRunning  = 1
	PowerShutdown = 4
)

// PowerState is Nova's numeric power_state for the server: what Ironic last
// showed of its node, or what its phase implies when Ironic showed nothing
// (fake hardware has no power state).
func PowerState(s *Server) int {
	if s.Desired == DesiredDeleted || s.Phase == PhaseDeleting || s.Phase == PhaseDeleted || s.NodeID == "" {
		return PowerNoState
	}
	switch s.PowerSeen {
	case PowerOn:
		return PowerRunning
	case PowerOff:
		return PowerShutdown
	}
	_, op := opIn(s.Phase)
	switch {
	case s.Phase == PhaseStopped || s.Phase == PhasePoweringOn:
		return PowerShutdown
	case s.Phase.Up() || op:
		return PowerRunning
	}
	return PowerNoState
}

// statusIndex is the inverse of Nova: status -> the phases a server
// showing it may be in, and whether every server in those phases shows it.
// It is derived by running Nova over every phase, desired state, phase a
// delete came from and field Nova reads, so it cannot drift from Nova.
type statusIndex struct {
	phases map[string][]Phase
	exact  map[string]bool
}

var statuses = sync.OnceValue(buildStatusIndex)

func buildStatusIndex() statusIndex {
	pending := []Op{{}, {Kind: OpReset, ResetTo: ResetError}, {Kind: OpReset, ResetTo: ResetActive}}
	for k := range ops {
		if k != OpReset {
			pending = append(pending, Op{Kind: k}, Op{Kind: k, Hard: true})
		}
	}
	shows := map[Phase]map[string]bool{}
	for _, p := range phases {
		shows[p] = map[string]bool{}
		froms := []Phase{""}
		if p == PhaseDeleting {
			froms = phases[:]
		}
		for _, from := range froms {
			for _, op := range pending {
				for flags := range 1 << 6 {
					s := &Server{Desired: DesiredActive, Phase: p, Op: op, NodeID: "node", DeleteFrom: from,
						OpSent: flags&1 != 0, OpFallback: flags&2 != 0, StopAfterRebuild: flags&4 != 0, Held: flags&8 != 0}
					if flags&16 != 0 {
						s.Desired = DesiredDeleted
					}
					if flags&32 != 0 {
						s.PowerSeen = PowerOff // an interface or volume operation shows the phase it rests in
					}
					if op.Kind != "" {
						s.OpGen = 1
					}
					shows[p][Nova(s).Status] = true
				}
			}
		}
	}
	ix := statusIndex{phases: map[string][]Phase{}, exact: map[string]bool{}}
	for _, p := range phases {
		for st := range shows[p] {
			ix.phases[st] = append(ix.phases[st], p)
		}
	}
	for st, ps := range ix.phases {
		ix.exact[st] = !slices.ContainsFunc(ps, func(p Phase) bool { return len(shows[p]) > 1 })
	}
	return ix
}

// StatusPhases are the phases a server may be in while it shows Nova
// status st (DELETED: phase deleted only; a delete under way shows the
// status the server had); nil for a status no server shows.
func StatusPhases(st string) []Phase { return slices.Clone(statuses().phases[st]) }

// StatusExact reports whether every server in a phase of
// StatusPhases(st) shows st, so a filter on the phase needs no
// check against Nova.
func StatusExact(st string) bool { return statuses().exact[st] }
