package lifecycle

import (
	"strings"
	"testing"
)

// TestApplyCreateVolume is the KindCreateVolume × result table: what the
// volume service showed of the volume made for an entry is recorded
// (its id as soon as it is known, Ready once available), and a volume
// that failed ends the build with Nova's words.
func TestApplyCreateVolume(t *testing.T) {
	making := func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }
	recorded := func(s *Server) { s.Made = []MadeVolume{{Index: 0, ID: "v-new"}} }
	tests := []struct {
		name   string
		s      *Server
		res    Result
		next   bool
		stop   bool
		phase  Phase
		reason Reason
		id     string // Spec.Volumes[0].ID recorded
		ready  bool
		msg    string // in the fault
	}{
		{"create answered: the id recorded, look again next tick", srv(PhaseVolumes, makes(false), making),
			Result{Outcome: OK, VolumeID: "v-new"}, true, true, PhaseVolumes, "", "v-new", false, ""},
		{"found by name after a lost answer: the same", srv(PhaseVolumes, makes(false), making),
			Result{Outcome: OK, VolumeID: "v-new"}, true, true, PhaseVolumes, "", "v-new", false, ""},
		{"still creating: nothing to record", srv(PhaseVolumes, makes(false), making, recorded),
			Result{Outcome: OK, VolumeID: "v-new"}, false, true, "", "", "", false, ""},
		{"available and held: ready, on to the next step", srv(PhaseVolumes, makes(false), making, recorded),
			Result{Outcome: OK, VolumeID: "v-new", VolumeReady: true}, true, false, PhaseVolumes, "", "v-new", true, ""},
		{"made and available at once (embedded)", srv(PhaseVolumes, makes(false), making),
			Result{Outcome: OK, VolumeID: "v-new", VolumeReady: true}, true, false, PhaseVolumes, "", "v-new", true, ""},
		{"error: the build ends, the id kept for the release", srv(PhaseVolumes, makes(false), making),
			Result{Outcome: Rejected, VolumeID: "v-new", VolumeStatus: "error", Message: "status error"}, true, false, PhaseReleasing, ReasonVolumeCreateFailed, "v-new", false,
			"aborted: Volume v-new did not finish being created even after we waited 0 seconds. And its status is error."},
		{"refused by the volume service", srv(PhaseVolumes, makes(false), making),
			Result{Outcome: Rejected, Message: "VolumeSizeExceedsAvailableQuota"}, true, false, PhaseReleasing, ReasonVolumeCreateFailed, "", false,
			"aborted: Failure prepping block device: VolumeSizeExceedsAvailableQuota"},
		{"deleted under us while being made", srv(PhaseVolumes, makes(false), making, recorded),
			Result{Outcome: Gone, Message: "volume v-new no longer exists"}, true, false, PhaseReleasing, ReasonVolumeCreateFailed, "v-new", false, "v-new no longer exists"},
		{"volume service away: look again", srv(PhaseVolumes, makes(false), making),
			Result{Outcome: Transient}, false, true, "", "", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := Apply(tt.s, Action{Kind: KindCreateVolume, Volume: 0}, tt.res, t0, cfg())
			if (ap.Next != nil) != tt.next || ap.Stop != tt.stop {
				t.Fatalf("record written %v, stop %v; want %v, %v", ap.Next != nil, ap.Stop, tt.next, tt.stop)
			}
			if ap.Next == nil {
				return
			}
			n := ap.Next
			if n.Phase != tt.phase {
				t.Errorf("phase %s, want %s", n.Phase, tt.phase)
			}
			if got := n.Volumes()[0]; got.ID != tt.id || got.Ready != tt.ready {
				t.Errorf("entry recorded as %+v, want id %q ready %v", got, tt.id, tt.ready)
			}
			if tt.reason != "" {
				if n.Fault == nil || n.Fault.Reason != tt.reason || !strings.Contains(n.Fault.Message, tt.msg) ||
					!strings.HasPrefix(n.Fault.Message, "Build of instance "+n.ID) {
					t.Errorf("fault %+v, want %s with %q", n.Fault, tt.reason, tt.msg)
				}
				if tt.reason.Reschedulable() {
					t.Errorf("a failed volume is rescheduled")
				}
			}
		})
	}
}

// TestMakeThenAttach walks a build's volumes phase: every entry made, then
// the attach; the caller's token gone once nothing is left to make, and
// the made volumes follow a reschedule (never made again).
func TestMakeThenAttach(t *testing.T) {
	s := srv(PhaseVolumes, makes(false), func(s *Server) { s.NodeID, s.VolumesOnNode, s.VolumeToken = "node-a", true, "tok" })
	for i := range 2 {
		a := Decide(Input{Server: s, Node: node("available"), Now: t0}, cfg())
		if a.Kind != KindCreateVolume || a.Volume != i {
			t.Fatalf("step %d: %v volume %d, want create_volume %d", i, a.Kind, a.Volume, i)
		}
		s = Apply(s, a, Result{Outcome: OK, VolumeID: "v-" + string(rune('a'+i)), VolumeReady: true}, t0, cfg()).Next
	}
	if s.VolumeToken != "" {
		t.Errorf("the caller's token is kept after the last create")
	}
	if a := Decide(Input{Server: s, Node: node("available"), Now: t0}, cfg()); a.Kind != KindAttachVolumes {
		t.Fatalf("after the makes: %v", a.Kind)
	}
	// A failed attempt releases and reschedules; its made volumes stay ready.
	f := fail(Input{Server: s, Now: t0}, ReasonNodeDeleted, StepVolumes, "gone").Next
	if ToMake(f) >= 0 || f.Volumes()[0].ID != "v-a" {
		t.Errorf("a reschedule would make the volumes again: %+v", f.Volumes())
	}
}

// TestDeadlineWhileMaking: the fault names the volume not yet available,
// in Nova's words.
func TestDeadlineWhileMaking(t *testing.T) {
	s := srv(PhaseVolumes, makes(false), pastDue, func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true })
	a := Decide(Input{Server: s, Node: node("available"), Now: t0}, cfg())
	want := "Build of instance " + s.ID + " aborted: Volume " + VolumeName(s.ID, 0) + " did not finish being created"
	if a.Kind != KindSave || a.Next.Fault == nil || !strings.HasPrefix(a.Next.Fault.Message, want) {
		t.Fatalf("%v %+v, want a fault starting %q", a.Kind, a.Next, want)
	}
}

// TestDestroys: a made volume with delete_on_termination goes with the
// server and with a failed build; an existing one only with a delete;
// none without the flag.
func TestDestroys(t *testing.T) {
	made := VolumeRef{ID: "m", Source: SourceBlank, SizeGB: 1, Ready: true, DeleteOnTermination: true}
	existing := VolumeRef{ID: "e", DeleteOnTermination: true}
	keep := VolumeRef{ID: "k", Source: SourceImage, ImageID: "i", SizeGB: 1, Ready: true}
	for _, tt := range []struct {
		s    *Server
		ref  VolumeRef
		want bool
	}{
		{srv(PhaseDeleted, deleted), made, true},
		{srv(PhaseError), made, true},
		{srv(PhaseDeleted, deleted), existing, true},
		{srv(PhaseError), existing, false},
		{srv(PhaseDeleted, deleted), keep, false},
		{srv(PhaseError), keep, false},
	} {
		if got := Destroys(tt.s, tt.ref); got != tt.want {
			t.Errorf("Destroys(%s, %+v) = %v, want %v", tt.s.Phase, tt.ref, got, tt.want)
		}
	}
}
