package lifecycle

// NovaState is how a server shows in the Nova-shaped API.
type NovaState struct {
	Status    string // BUILD, ACTIVE, ERROR, DELETED
	VMState   string // building, active, error, deleted
	TaskState string // "" (null), scheduling, networking, block_device_mapping, spawning, deleting
	Visible   bool   // false: the API answers 404
}

// Nova maps a server to Nova's status, vm_state and task_state. Desired
// deleted is consulted first: once a delete is accepted the server never
// shows BUILD, ACTIVE or ERROR again (I2).
func Nova(s *Server) NovaState {
	if s.Phase == PhaseDeleted {
		return NovaState{Status: "DELETED", VMState: "deleted"}
	}
	if s.Desired == DesiredDeleted || s.Phase == PhaseDeleting {
		return NovaState{Status: "DELETED", VMState: "deleted", TaskState: "deleting", Visible: true}
	}
	switch s.Phase {
	case PhaseActive:
		return NovaState{Status: "ACTIVE", VMState: "active", Visible: true}
	case PhaseError:
		return NovaState{Status: "ERROR", VMState: "error", Visible: true}
	case PhasePending, PhaseReserving:
		return NovaState{Status: "BUILD", VMState: "building", TaskState: "scheduling", Visible: true}
	case PhaseNetworking:
		return NovaState{Status: "BUILD", VMState: "building", TaskState: "networking", Visible: true}
	case PhaseVolumes: // Nova's task_state while it attaches volumes
		return NovaState{Status: "BUILD", VMState: "building", TaskState: "block_device_mapping", Visible: true}
	default: // deploying, releasing
		return NovaState{Status: "BUILD", VMState: "building", TaskState: "spawning", Visible: true}
	}
}

// PowerState is Nova's numeric power_state for the server.
func PowerState(s *Server) int {
	if s.Phase == PhaseActive && s.Desired != DesiredDeleted {
		return 1 // RUNNING
	}
	return 0 // NOSTATE
}
