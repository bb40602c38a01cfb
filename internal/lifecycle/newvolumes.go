package lifecycle

import (
	"fmt"
	"slices"
	"time"
)

// Volumes a build makes (block_device_mapping_v2 image→volume and
// blank→volume, docs/DESIGN.md §2.7). The API's create records each as a
// VolumeRef with a Source, no id yet: that is the intent, written before
// the 202. In phase volumes, before the attach, the reconciler makes them
// one at a time (KindCreateVolume) under a name derived from the server
// and the entry (VolumeName), looking that name up first, so a crash or a
// lost answer between the volume service's create and ingot's record
// never makes a second volume. The id is recorded as soon as it is known;
// the entry is Ready once the volume is available and held for the
// server. From then on it is an ordinary volume of the server: a
// reschedule keeps it, the attach attaches it.

// Sources of a volume the build makes.
const (
	SourceImage = "image" // made from VolumeRef.ImageID
	SourceBlank = "blank" // empty
)

// Made reports whether ingot makes the volume for the server (rather than
// taking an existing one).
func (r VolumeRef) Made() bool { return r.Source != "" }

// VolumeName is the name of the volume made for entry i of a server's
// Spec.Volumes: how a retry finds the one a lost answer made.
func VolumeName(serverID string, i int) string { return fmt.Sprintf("ingot-%s-bdm-%d", serverID, i) }

// MadeVolume is what the build learned of the volume it makes for entry
// Index of Spec.Volumes.
type MadeVolume struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Ready bool   `json:"ready,omitempty"`
}

// Volumes are s's block devices (Spec.Volumes) with the ids of the
// volumes the build made, and whether each is ready, filled in from Made.
func (s *Server) Volumes() []VolumeRef {
	if len(s.Made) == 0 {
		return s.Spec.Volumes
	}
	out := slices.Clone(s.Spec.Volumes)
	for _, m := range s.Made {
		if m.Index >= 0 && m.Index < len(out) && out[m.Index].Made() {
			out[m.Index].ID, out[m.Index].Ready = m.ID, m.Ready
		}
	}
	return out
}

// ToMake is the index of the first volume of s still to be made or waited
// for, or -1 when none is.
func ToMake(s *Server) int {
	for i, r := range s.Volumes() {
		if r.Made() && !r.Ready {
			return i
		}
	}
	return -1
}

// Destroys reports whether the end of s's hold on ref deletes the volume:
// delete_on_termination on a delete, and for a volume the build made also
// when the server gives its volumes up in ERROR (Nova deletes those of a
// failed build; such a server can only be deleted). An existing volume
// given up in ERROR is freed whatever its flag, as before.
func Destroys(s *Server, ref VolumeRef) bool {
	return ref.DeleteOnTermination && (s.Desired == DesiredDeleted || s.Phase == PhaseDeleting || s.Phase == PhaseDeleted || ref.Made())
}

// volumeMade records what the volume service showed of the volume made for
// entry i: its id, and whether it is available and held for the server.
// The caller's token kept for the creates goes once none is left to make.
func volumeMade(s *Server, i int, id string, ready bool) *Server {
	n := s.Clone()
	n.Made = slices.DeleteFunc(n.Made, func(m MadeVolume) bool { return m.Index == i })
	n.Made = append(n.Made, MadeVolume{Index: i, ID: id, Ready: ready})
	if ToMake(n) < 0 {
		n.VolumeToken = ""
	}
	return n
}

// madeWhat says what entry i is made of, for events and faults.
func madeWhat(s *Server, i int) string {
	r := s.Volumes()[i]
	name := VolumeName(s.ID, i)
	if r.ID != "" {
		name = r.ID
	}
	if r.Source == SourceImage {
		return fmt.Sprintf("volume %s (%d GB from image %s)", name, r.SizeGB, r.ImageID)
	}
	return fmt.Sprintf("volume %s (%d GB, blank)", name, r.SizeGB)
}

// notMadeInTime is the fault message of a build whose deadline passed while
// a volume it makes was not available yet, in Nova's words.
func notMadeInTime(s *Server, i int, now time.Time) string {
	r := s.Volumes()[i]
	id := r.ID
	if id == "" {
		id = VolumeName(s.ID, i)
	}
	return fmt.Sprintf("Build of instance %s aborted: Volume %s did not finish being created even after we waited %d seconds.",
		s.ID, id, int(now.Sub(s.PhaseSince).Seconds()))
}

// applyCreateVolume is Apply for KindCreateVolume: r.VolumeID is the
// volume found or made for entry a.Volume, r.VolumeReady whether it is
// available and held; a volume gone to error (r.VolumeStatus), vanished,
// or refused by the volume service ends the build (not rescheduled: the
// volume, not the node, failed), its id recorded so the release finds it.
func applyCreateVolume(s *Server, a Action, r Result, now time.Time) Applied {
	i := a.Volume
	if i < 0 || i >= len(s.Spec.Volumes) || !s.Spec.Volumes[i].Made() {
		return Applied{Stop: true}
	}
	ref := s.Volumes()[i]
	id := r.VolumeID
	if id == "" {
		id = ref.ID
	}
	switch r.Outcome {
	case OK:
		if r.VolumeReady {
			n := volumeMade(s, i, id, true)
			return applied(n, now, event(s, now, "compute_create_volume", ResultSuccess,
				fmt.Sprintf("%s is available", madeWhat(n, i))))
		}
		if id == ref.ID {
			return Applied{Stop: true} // still being made: look again next tick
		}
		n := volumeMade(s, i, id, false)
		return stop(applied(n, now, event(s, now, "compute_create_volume", "", fmt.Sprintf("%s requested", madeWhat(n, i)))))
	case Rejected, Gone:
		n := s
		if id != ref.ID {
			n = volumeMade(s, i, id, false)
		}
		msg := fmt.Sprintf("Build of instance %s aborted: Failure prepping block device: %s", s.ID, r.Message)
		if r.VolumeStatus != "" {
			msg = fmt.Sprintf("Build of instance %s aborted: Volume %s did not finish being created even after we waited %d seconds. And its status is %s.",
				s.ID, id, int(now.Sub(s.PhaseSince).Seconds()), r.VolumeStatus)
		}
		return failed(n, now, ReasonVolumeCreateFailed, StepVolumes, msg)
	}
	return Applied{Stop: true}
}
