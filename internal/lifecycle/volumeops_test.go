package lifecycle

import (
	"slices"
	"testing"
)

func volOp(id string) func(*Server) { return func(s *Server) { s.Op.VolumeID = id } }

var (
	stoppedOff = func(s *Server) { s.PowerSeen = PowerOff }
	undoing    = func(s *Server) { s.OpFallback = true }
)

// TestDecideVolumeOps is Decide's table for an attach and a detach after
// the build (os-volume_attachments POST and DELETE).
func TestDecideVolumeOps(t *testing.T) {
	type want struct {
		kind  Kind
		phase Phase
		done  bool
		undo  bool // KindSave: undoing an attach (OpFallback)
	}
	tests := []struct {
		name string
		s    *Server
		v    NodeView
		want want
	}{
		{"attach starts from active", up(PhaseActive, OpAttachVolume, volOp("v1")), node("active", powerOn), want{kind: KindSave, phase: PhaseAttachingVolume}},
		{"attach starts from stopped", up(PhaseStopped, OpAttachVolume, volOp("v1"), stoppedOff), node("active", powerOff), want{kind: KindSave, phase: PhaseAttachingVolume}},
		{"attach of a rescued server is given up", up(PhaseRescued, OpAttachVolume, volOp("v1")), node("rescue"), want{kind: KindSave, phase: PhaseRescued, done: true}},
		{"attaching", inOp(PhaseAttachingVolume, OpAttachVolume, false, volOp("v1")), node("active", powerOn), want{kind: KindAttachVolume}},
		{"attaching, node not seen: wait", inOp(PhaseAttachingVolume, OpAttachVolume, false, volOp("v1")), unobserved, want{kind: KindWait}},
		{"attach past its deadline: undone", inOp(PhaseAttachingVolume, OpAttachVolume, false, volOp("v1"), overdue), node("active", powerOn),
			want{kind: KindSave, phase: PhaseDetachingVolume, undo: true}},
		{"node deleted during an attach", inOp(PhaseAttachingVolume, OpAttachVolume, false, volOp("v1")), gone, want{kind: KindSave, phase: PhaseError, done: true}},
		{"detach starts from stopped", up(PhaseStopped, OpDetachVolume, volOp("v1"), stoppedOff), node("active", powerOff), want{kind: KindSave, phase: PhaseDetachingVolume}},
		{"detach starts from active", up(PhaseActive, OpDetachVolume, volOp("v1")), node("active", powerOn), want{kind: KindSave, phase: PhaseDetachingVolume}},
		{"detaching", inOp(PhaseDetachingVolume, OpDetachVolume, false, volOp("v1"), stoppedOff), node("active", powerOff), want{kind: KindDetachVolume}},
		{"undoing an attach", inOp(PhaseDetachingVolume, OpAttachVolume, false, volOp("v1"), undoing), node("active", powerOn), want{kind: KindDetachVolume}},
		{"detach past its deadline: back to stopped", inOp(PhaseDetachingVolume, OpDetachVolume, false, volOp("v1"), stoppedOff, overdue), node("active", powerOff),
			want{kind: KindSave, phase: PhaseStopped, done: true}},
		{"undo past its deadline: back to active", inOp(PhaseDetachingVolume, OpAttachVolume, false, volOp("v1"), undoing, overdue), node("active", powerOn),
			want{kind: KindSave, phase: PhaseActive, done: true}},
		{"delete wins over an attach", inOp(PhaseAttachingVolume, OpAttachVolume, false, volOp("v1"), deleted), node("active"), want{kind: KindSave, phase: PhaseDeleting}},
		{"delete wins over a detach", inOp(PhaseDetachingVolume, OpDetachVolume, false, volOp("v1"), deleted), node("active"), want{kind: KindSave, phase: PhaseDeleting}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := decideKind(t, tt.s, tt.v, tt.want.kind)
			if !ok {
				return
			}
			n := a.Next
			if n.Phase != tt.want.phase || n.OpFallback != tt.want.undo {
				t.Errorf("phase = %s undo %v, want %s undo %v (%s)", n.Phase, n.OpFallback, tt.want.phase, tt.want.undo, a.Why)
			}
			if got := !n.OpPending(); got != tt.want.done {
				t.Errorf("operation finished = %v, want %v", got, tt.want.done)
			}
			if !n.Phase.Stable() && n.Phase != PhaseDeleting && !n.Deadline.After(t0) {
				t.Errorf("non-stable phase %s without a deadline ahead (%v)", n.Phase, n.Deadline)
			}
			if n.Phase == PhaseAttachingVolume && !n.VolumesOnNode {
				t.Error("attach started without VolumesOnNode (record before act)")
			}
			if len(a.Events) == 0 && n.Phase != tt.s.Phase {
				t.Error("a phase change without an event")
			}
		})
	}
}

// TestApplyVolumeOps: an attach that succeeds ends the operation where it
// started; one refused is undone by the detach of its volume; the undo
// ends the operation with an error.
func TestApplyVolumeOps(t *testing.T) {
	att := inOp(PhaseAttachingVolume, OpAttachVolume, false, volOp("v1"), stoppedOff)
	if ap := Apply(att, Action{Kind: KindAttachVolume}, Result{Outcome: OK}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseStopped || ap.Next.OpPending() {
		t.Errorf("attach done: %+v", ap.Next)
	}
	ap := Apply(att, Action{Kind: KindAttachVolume}, Result{Outcome: Rejected, Message: "volume in-use"}, t0, cfg())
	if ap.Next == nil || ap.Next.Phase != PhaseDetachingVolume || !ap.Next.OpFallback || !ap.Next.OpPending() || !ap.Next.Deadline.After(t0) {
		t.Fatalf("attach refused: want the undo, got %+v", ap.Next)
	}
	undo := ap.Next
	ap = Apply(undo, Action{Kind: KindDetachVolume}, Result{Outcome: OK}, t0, cfg())
	if ap.Next == nil || ap.Next.Phase != PhaseStopped || ap.Next.OpPending() || len(ap.Events) == 0 || ap.Events[0].Result != ResultError {
		t.Errorf("undo done: want the operation ended in error, got %+v %+v", ap.Next, ap.Events)
	}
	if ap := Apply(att, Action{Kind: KindAttachVolume}, Result{Outcome: Transient}, t0, cfg()); ap.Next != nil {
		t.Errorf("transient: retry, got %+v", ap.Next)
	}
	if ap := Apply(att, Action{Kind: KindAttachVolume}, Result{Outcome: Gone}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseError {
		t.Errorf("node gone: %+v", ap.Next)
	}
	det := inOp(PhaseDetachingVolume, OpDetachVolume, false, volOp("v1"), stoppedOff)
	if ap := Apply(det, Action{Kind: KindDetachVolume}, Result{Outcome: OK}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseStopped || ap.Next.OpPending() ||
		ap.Events[0].Result != ResultSuccess {
		t.Errorf("detach done: %+v", ap.Next)
	}
	if ap := Apply(det, Action{Kind: KindDetachVolume}, Result{Outcome: Rejected}, t0, cfg()); ap.Next == nil || ap.Next.OpPending() || ap.Events[0].Result != ResultError {
		t.Errorf("detach refused: %+v", ap.Next)
	}
}

// TestVolumeOpsShow: a volume operation shows the vm_state it rests in
// with no task_state (Nova sets none), and the registry marks of its volume.
func TestVolumeOpsShow(t *testing.T) {
	withVols := func(s *Server) {
		s.Spec.Volumes = []VolumeRef{{ID: "v0", BootIndex: -1}, {ID: "v1", BootIndex: -1}}
		s.VolumesOnNode = true
	}
	for _, tt := range []struct {
		s                 *Server
		status, vm        string
		mark0, mark1      VolumeStatus
		mark1Node, reason string
	}{
		{up(PhaseActive, OpAttachVolume, volOp("v1"), withVols), "ACTIVE", "active", VolumeInUse, VolumeReserved, "", ""},
		{inOp(PhaseAttachingVolume, OpAttachVolume, false, volOp("v1"), withVols), "ACTIVE", "active", VolumeInUse, VolumeReserved, "node-a", "attaching to node node-a"},
		{inOp(PhaseDetachingVolume, OpDetachVolume, false, volOp("v1"), withVols, stoppedOff), "SHUTOFF", "stopped", VolumeInUse, VolumeDetaching, "node-a", "detaching from node node-a"},
	} {
		st := Nova(tt.s)
		if st.Status != tt.status || st.VMState != tt.vm || st.TaskState != "" {
			t.Errorf("%s: Nova = %+v, want %s/%s/None", tt.s.Phase, st, tt.status, tt.vm)
		}
		m0, _ := MarkOf(tt.s, "v0")
		m1, _ := MarkOf(tt.s, "v1")
		if m0.Status != tt.mark0 || m1.Status != tt.mark1 || m1.Node != tt.mark1Node || m1.Reason != tt.reason {
			t.Errorf("%s: marks %+v %+v", tt.s.Phase, m0, m1)
		}
	}
	for _, st := range []string{"ACTIVE", "SHUTOFF"} {
		for _, p := range []Phase{PhaseAttachingVolume, PhaseDetachingVolume} {
			if !slices.Contains(StatusPhases(st), p) {
				t.Errorf("StatusPhases(%s) lacks %s", st, p)
			}
		}
	}
}

// decideKind decides for s seeing v and checks the action's kind; ok when
// it is a save to look into.
func decideKind(t *testing.T, s *Server, v NodeView, kind Kind) (Action, bool) {
	t.Helper()
	a := Decide(Input{Server: s, Node: v, Now: t0}, cfg())
	if a.Kind != kind {
		t.Fatalf("kind = %v (%s), want %v", a.Kind, a.Why, kind)
	}
	return a, a.Kind == KindSave
}
