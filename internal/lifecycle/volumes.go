package lifecycle

import "fmt"

// VolumeStatus is what the volume registry shows of a volume a server holds,
// as Cinder spells it.
type VolumeStatus string

const (
	VolumeReserved VolumeStatus = "reserved" // held, no target on a node
	VolumeInUse    VolumeStatus = "in-use"   // a target on the server's node carries it
	VolumeDeleting VolumeStatus = "deleting" // its server is being deleted; Ironic still has to let go
	// VolumeError: stranded — a target of it was left on a node ingot may no
	// longer touch (I7); it is never attached elsewhere (I8) nor handed out again.
	VolumeError VolumeStatus = "error"
)

// VolumeMark is what the registry must show for every volume a server holds.
type VolumeMark struct {
	Status VolumeStatus
	// Node is the node whose Ironic volume target may carry the volumes: it is
	// recorded before a target is created and cleared only once the targets
	// are removed or gone with the node (record before act).
	Node   string
	Reason string // why it is still held, or what an operator must do
}

// Marks says, from the server's record alone, what the volume registry must
// show for the volumes s holds; ok is false when s holds none. The
// reconciler writes the marks after every recorded transition (and before a
// volume effect), so the registry follows the record.
func Marks(s *Server) (m VolumeMark, ok bool) {
	if !s.HoldsVolumes() {
		return VolumeMark{}, false
	}
	if s.VolumesStrandedOn != "" {
		return VolumeMark{Status: VolumeError, Node: s.VolumesStrandedOn, Reason: fmt.Sprintf(
			"its Ironic volume target was left on node %s, which another instance now holds; remove the target there, then delete this volume",
			s.VolumesStrandedOn)}, true
	}
	if !s.VolumesOnNode || s.NodeID == "" {
		return VolumeMark{Status: VolumeReserved}, true
	}
	waiting := fmt.Sprintf("waiting for Ironic to remove its volume target from node %s", s.NodeID)
	switch {
	case s.Desired == DesiredDeleted || s.Phase == PhaseDeleting || s.Phase == PhaseDeleted:
		return VolumeMark{Status: VolumeDeleting, Node: s.NodeID, Reason: waiting}, true
	case s.Phase == PhaseVolumes:
		return VolumeMark{Status: VolumeReserved, Node: s.NodeID, Reason: "attaching to node " + s.NodeID}, true
	case s.Phase == PhaseReleasing || s.Phase == PhaseError:
		return VolumeMark{Status: VolumeInUse, Node: s.NodeID, Reason: waiting}, true
	}
	return VolumeMark{Status: VolumeInUse, Node: s.NodeID}, true
}

// VolumeDetaching: a detach of the volume is under way.
const VolumeDetaching VolumeStatus = "detaching"

// MarkOf is Marks for the volume id: the volume a pending attach is of
// shows reserved (attaching once the operation started), the one a detach
// is of detaching, until the operation ends.
func MarkOf(s *Server, id string) (VolumeMark, bool) {
	m, ok := Marks(s)
	if !ok || !s.OpPending() || id != s.Op.VolumeID || m.Status == VolumeError || m.Status == VolumeDeleting {
		return m, ok
	}
	switch {
	case s.Phase == PhaseAttachingVolume:
		return VolumeMark{Status: VolumeReserved, Node: s.NodeID, Reason: "attaching to node " + s.NodeID}, true
	case s.Op.Kind == OpAttachVolume:
		return VolumeMark{Status: VolumeReserved}, true
	case s.Phase == PhaseDetachingVolume:
		return VolumeMark{Status: VolumeDetaching, Node: s.NodeID, Reason: "detaching from node " + s.NodeID}, true
	}
	return m, ok
}
