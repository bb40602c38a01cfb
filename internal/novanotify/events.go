// Package novanotify publishes Nova's versioned instance.* notifications
// for ingot's servers (docs/DESIGN.md §2.13): Events says which a change of
// a server's record causes, Builder makes them into outbox notices in
// oslo.messaging's format, and Publisher drains the outbox to RabbitMQ
// with publisher confirms.
package novanotify

import "github.com/ingot-dev/ingot/internal/lifecycle"

// Event types, as Nova names them.
const (
	CreateStart   = "instance.create.start"
	CreateEnd     = "instance.create.end"
	CreateError   = "instance.create.error"
	DeleteStart   = "instance.delete.start"
	DeleteEnd     = "instance.delete.end"
	PowerOnStart  = "instance.power_on.start"
	PowerOnEnd    = "instance.power_on.end"
	PowerOffStart = "instance.power_off.start"
	PowerOffEnd   = "instance.power_off.end"
	RebootStart   = "instance.reboot.start"
	RebootEnd     = "instance.reboot.end"
	RebootError   = "instance.reboot.error"
	RebuildStart  = "instance.rebuild.start"
	RebuildEnd    = "instance.rebuild.end"
	RebuildError  = "instance.rebuild.error"
	RescueStart   = "instance.rescue.start"
	RescueEnd     = "instance.rescue.end"
	UnrescueStart = "instance.unrescue.start"
	UnrescueEnd   = "instance.unrescue.end"
	// A volume attached or detached after the build.
	VolumeAttachStart = "instance.volume_attach.start"
	VolumeAttachEnd   = "instance.volume_attach.end"
	VolumeAttachError = "instance.volume_attach.error"
	VolumeDetachStart = "instance.volume_detach.start"
	VolumeDetachEnd   = "instance.volume_detach.end"
	Update            = "instance.update"
)

// opPhases are the phases of a day-2 operation and its event type's stem;
// error is the stem's .error where Nova has one ("" where it has none).
var opPhases = map[lifecycle.Phase]struct{ start, end, error string }{
	lifecycle.PhasePoweringOn:  {PowerOnStart, PowerOnEnd, ""},
	lifecycle.PhasePoweringOff: {PowerOffStart, PowerOffEnd, ""},
	lifecycle.PhaseRebooting:   {RebootStart, RebootEnd, RebootError},
	lifecycle.PhaseRebuilding:  {RebuildStart, RebuildEnd, RebuildError},
	lifecycle.PhaseRescuing:    {RescueStart, RescueEnd, ""},
	lifecycle.PhaseUnrescuing:  {UnrescueStart, UnrescueEnd, ""},
	// A failed attach is undone in phase detaching_volume (OpFallback): it
	// ends with volume_attach.error and makes no detach notifications.
	lifecycle.PhaseAttachingVolume: {VolumeAttachStart, VolumeAttachEnd, VolumeAttachError},
	lifecycle.PhaseDetachingVolume: {VolumeDetachStart, VolumeDetachEnd, ""},
}

// Events are the notifications the change old -> new causes, in the order
// Nova sends them (old nil: the create). Pure: from the two records alone,
// so a change that is saved again after a conflict notifies once.
//
//   - create.start when the server is recorded; create.end when it first
//     becomes active (LaunchedAt set); create.error when a build that never
//     launched ends in error.
//   - delete.start when the delete is accepted; delete.end when the server
//     is gone (phase deleted).
//   - <op>.start when the phase of a day-2 operation is entered, .end when
//     it is left for a stable phase, .error (reboot, rebuild) when left for
//     error.
//   - instance.update, first, whenever Nova's vm_state or task_state or the
//     display name changes.
func Events(old, new *lifecycle.Server) []string {
	if old == nil {
		return []string{CreateStart}
	}
	var out []string
	was, is := lifecycle.Nova(old), lifecycle.Nova(new)
	if was.VMState != is.VMState || was.TaskState != is.TaskState || old.Name != new.Name {
		out = append(out, Update)
	}
	if old.Desired != lifecycle.DesiredDeleted && new.Desired == lifecycle.DesiredDeleted {
		out = append(out, DeleteStart)
	}
	undo := new.Phase == lifecycle.PhaseDetachingVolume && new.OpFallback
	if op, ok := opPhases[old.Phase]; ok && new.Phase != old.Phase && !(old.Phase == lifecycle.PhaseDetachingVolume && old.OpFallback) {
		switch {
		case new.Phase == lifecycle.PhaseError, undo:
			if op.error != "" {
				out = append(out, op.error)
			}
		case new.Phase.Stable():
			out = append(out, op.end)
		}
	}
	if op, ok := opPhases[new.Phase]; ok && new.Phase != old.Phase && !undo {
		out = append(out, op.start)
	}
	if old.LaunchedAt.IsZero() && !new.LaunchedAt.IsZero() {
		out = append(out, CreateEnd)
	}
	if new.Phase == lifecycle.PhaseError && old.Phase != lifecycle.PhaseError && new.LaunchedAt.IsZero() &&
		new.Desired == lifecycle.DesiredActive {
		out = append(out, CreateError)
	}
	if new.Phase == lifecycle.PhaseDeleted && old.Phase != lifecycle.PhaseDeleted {
		out = append(out, DeleteEnd)
	}
	return out
}
