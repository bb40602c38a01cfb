package lifecycle

import (
	"fmt"
	"time"
)

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
	// volume on Server.NodeID.
	KindAttachVolumes
	// KindDetachVolumes: power Server.NodeID off, remove our volume targets and
	// connector from it.
	KindDetachVolumes
	// KindReleaseVolumes: end the server's hold on its volumes (available, or
	// deleted with the server when delete_on_termination; a stranded volume
	// keeps its error).
	KindReleaseVolumes
	// KindReboot: ask Ironic to reboot Server.NodeID (soft unless Action.Hard).
	KindReboot
	// KindPowerOff: ask Ironic to power Server.NodeID off.
	KindPowerOff
	// KindPowerOn: ask Ironic to power Server.NodeID on.
	KindPowerOn
	// KindRebuild: set instance_info from the server's Spec and ask Ironic to
	// redeploy Server.NodeID (provision "rebuild") with a new config drive.
	KindRebuild
	// KindRescue: ask Ironic to boot Server.NodeID into rescue (Op.RescuePassword).
	KindRescue
	// KindUnrescue: ask Ironic to take Server.NodeID out of rescue.
	KindUnrescue
	// KindAttachInterface: allocate the port of Op.Network (recorded before
	// any outside create), bind it to a free Ironic port of Server.NodeID
	// and attach its VIF there.
	KindAttachInterface
	// KindDetachInterface: detach the VIF of the port on Op.Network from
	// Server.NodeID, then free the port.
	KindDetachInterface
	// KindAttachVolume: attach Op.VolumeID to Server.NodeID after the build:
	// the node's connector, the Cinder attachment (Cinder backend), the
	// volume target, the attachment completed. Idempotent.
	KindAttachVolume
	// KindDetachVolume: remove Op.VolumeID's target from the powered-off
	// Server.NodeID, delete its Cinder attachments, end the server's hold
	// on it. Idempotent; also the undo of a failed attach.
	KindDetachVolume
	// KindCreateVolume: make the volume of Spec.Volumes[Action.Volume]
	// (found by its VolumeName first), or read the one recorded; report
	// its id, and whether it is available and held, in the Result.
	KindCreateVolume
)

var kindNames = [...]string{"wait", "save", "schedule", "reserve", "network", "deploy", "undeploy", "unreserve", "free_ports",
	"attach_volumes", "detach_volumes", "release_volumes", "reboot", "power_off", "power_on", "rebuild", "rescue", "unrescue",
	"attach_interface", "detach_interface", "attach_volume", "detach_volume", "create_volume"}

func (k Kind) String() string { return enumName(kindNames[:], int(k), "kind") }

// enumName is the name of value i of an enum whose names are names (what(i)
// for a value past them).
func enumName(names []string, i int, what string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", what, i)
}

// Action is Decide's answer.
type Action struct {
	Kind   Kind
	Next   *Server // KindSave: the new record
	Events []Event // KindSave: what to record with it
	// RemoveInstance (KindUnreserve): the node still carries our instance_uuid.
	RemoveInstance bool
	// Hard (KindReboot): a hard reboot.
	Hard bool
	// Volume (KindCreateVolume): the index in Spec.Volumes of the volume to make.
	Volume int
	Why    string // for logs
}

func wait(why string) Action { return Action{Kind: KindWait, Why: why} }

func save(n *Server, now time.Time, why string, events ...Event) Action {
	n.UpdatedAt = now
	return Action{Kind: KindSave, Next: n, Events: events, Why: why}
}

// newEvent is an event of s's request id (an action of that name) at now;
// one with a result has finished.
func newEvent(s *Server, now time.Time, action, id, name, result, details string) Event {
	e := Event{ServerID: s.ID, RequestID: id, Action: action, Name: name, Node: s.NodeID, Result: result, Details: details, Start: now}
	if result != "" {
		e.Finish = now
	}
	return e
}

// event builds an event of the action the server is in (create or delete).
func event(s *Server, now time.Time, name, result, details string) Event {
	if s.Desired == DesiredDeleted {
		return newEvent(s, now, ActionDelete, s.DeleteRequestID, name, result, details)
	}
	return newEvent(s, now, ActionCreate, s.CreateRequestID, name, result, details)
}

// deleteEvent is an event of the user's delete itself.
func deleteEvent(s *Server, now time.Time, result, details string) Event {
	return newEvent(s, now, ActionDelete, s.DeleteRequestID, "compute_terminate_instance", result, details)
}

// opEvent is an event of the operation in progress.
func opEvent(s *Server, now time.Time, result, details string) Event {
	return newEvent(s, now, string(s.Op.Kind), s.Op.RequestID, opOf(s.Op.Kind).event, result, details)
}

// errorEvent tells the fault n went to ERROR with, on the node it names.
func errorEvent(n *Server, now time.Time) Event {
	e := newEvent(n, now, ActionCreate, n.CreateRequestID, "compute__do_build_and_run_instance", ResultError,
		string(n.Fault.Reason)+": "+n.Fault.Message)
	e.Node = n.Fault.Node
	return e
}
