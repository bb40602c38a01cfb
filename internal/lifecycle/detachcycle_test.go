package lifecycle

import (
	"strings"
	"testing"
)

func cyc(c Cycle) func(*Server) { return func(s *Server) { s.Cycle = c } }

var detachRefused = func(s *Server) {
	s.OpFault = &Fault{Reason: ReasonVolumeDetachFailed, Message: "detach refused", Node: s.NodeID, Step: StepDetach, At: t0}
}

// TestDecideDetachCycle is Decide's table for a detach from ACTIVE: power
// off, the target and attachments removed, power on, back to ACTIVE; a
// delete wins at every step and every failure ends with the node on.
func TestDecideDetachCycle(t *testing.T) {
	det := func(c Cycle, sent bool, mut ...func(*Server)) *Server {
		return inOp(PhaseDetachingVolume, OpDetachVolume, sent, append([]func(*Server){volOp("v1"), cyc(c)}, mut...)...)
	}
	type want struct {
		kind   Kind
		phase  Phase
		cycle  Cycle
		done   bool
		result string // the event's result when done
		power  Power  // PowerSeen recorded ("": unchanged)
	}
	tests := []struct {
		name string
		s    *Server
		v    NodeView
		want want
	}{
		{"detach from active starts the cycle", up(PhaseActive, OpDetachVolume, volOp("v1")), node("active", powerOn),
			want{kind: KindSave, phase: PhaseDetachingVolume, cycle: CyclePowerOff}},
		{"power off to send", det(CyclePowerOff, false), node("active", powerOn), want{kind: KindPowerOff}},
		{"powering off: wait", det(CyclePowerOff, true), node("active", powerOn, powering), want{kind: KindWait}},
		{"node off: record the detach step", det(CyclePowerOff, true), node("active", powerOff),
			want{kind: KindSave, phase: PhaseDetachingVolume, cycle: CycleDetach, power: PowerOff}},
		{"node found off after a crash: the detach step", det(CyclePowerOff, false), node("active", powerOff),
			want{kind: KindSave, phase: PhaseDetachingVolume, cycle: CycleDetach, power: PowerOff}},
		{"node off but locked: wait", det(CyclePowerOff, true), node("active", powerOff, locked), want{kind: KindWait}},
		{"target and attachments to delete", det(CycleDetach, false), node("active", powerOff), want{kind: KindDetachVolume}},
		{"power on to send", det(CyclePowerOn, false), node("active", powerOff), want{kind: KindPowerOn}},
		{"powering on: wait", det(CyclePowerOn, true), node("active", powerOff, powering), want{kind: KindWait}},
		{"node on: detached, ACTIVE", det(CyclePowerOn, true), node("active", powerOn),
			want{kind: KindSave, phase: PhaseActive, done: true, result: ResultSuccess, power: PowerOn}},
		{"node on after a refused detach: ACTIVE with the error", det(CyclePowerOn, true, detachRefused), node("active", powerOn),
			want{kind: KindSave, phase: PhaseActive, done: true, result: ResultError, power: PowerOn}},
		{"node not seen: wait", det(CycleDetach, false), unobserved, want{kind: KindWait}},
		{"node gone during the cycle: ERROR", det(CycleDetach, false), gone, want{kind: KindSave, phase: PhaseError, done: true, result: ResultError}},
		{"deadline while powering off: power on again", det(CyclePowerOff, true, overdue), node("active", powerOn),
			want{kind: KindSave, phase: PhaseDetachingVolume, cycle: CyclePowerOn}},
		{"deadline before the target went: power on again", det(CycleDetach, false, overdue), node("active", powerOff),
			want{kind: KindSave, phase: PhaseDetachingVolume, cycle: CyclePowerOn}},
		{"deadline of the power-on, node off: SHUTOFF with the error", det(CyclePowerOn, true, overdue), node("active", powerOff),
			want{kind: KindSave, phase: PhaseStopped, done: true, result: ResultError}},
		{"deadline of the power-on, node on: ACTIVE with the error", det(CyclePowerOn, true, overdue), node("active", powerOn),
			want{kind: KindSave, phase: PhaseActive, done: true, result: ResultError}},
		{"delete wins while powering off", det(CyclePowerOff, true, deleted), node("active", powerOn), want{kind: KindSave, phase: PhaseDeleting}},
		{"delete wins before the target goes", det(CycleDetach, false, deleted), node("active", powerOff), want{kind: KindSave, phase: PhaseDeleting}},
		{"delete wins while powering on", det(CyclePowerOn, true, deleted), node("active", powerOff), want{kind: KindSave, phase: PhaseDeleting}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := decideKind(t, tt.s, tt.v, tt.want.kind)
			if !ok {
				return
			}
			checkCycle(t, tt.s, a.Next, a.Events, tt.want.phase, tt.want.cycle, tt.want.done, tt.want.result, tt.want.power)
		})
	}
}

// checkCycle checks a recorded step of the cycle.
func checkCycle(t *testing.T, s, n *Server, evs []Event, phase Phase, c Cycle, done bool, result string, power Power) {
	t.Helper()
	if n.Phase != phase || (n.Cycle != c && phase != PhaseDeleting) {
		t.Errorf("phase %s cycle %q, want %s %q", n.Phase, n.Cycle, phase, c)
	}
	if got := !n.OpPending(); got != done {
		t.Errorf("operation finished = %v, want %v", got, done)
	}
	if power != PowerUnknown && n.PowerSeen != power {
		t.Errorf("PowerSeen = %q, want %q", n.PowerSeen, power)
	}
	if !n.Phase.Stable() && n.Phase != PhaseDeleting && !n.Deadline.After(t0) {
		t.Errorf("non-stable phase %s without a deadline ahead (%v)", n.Phase, n.Deadline)
	}
	if n.Cycle != s.Cycle && len(evs) == 0 {
		t.Error("a step of the cycle without an event")
	}
	if done && (len(evs) == 0 || evs[0].Result != result) {
		t.Errorf("events %+v, want the operation's %q", evs, result)
	}
	if n.Phase == PhaseDetachingVolume && (Nova(n).Status != "ACTIVE" || Nova(n).TaskState != "") {
		t.Errorf("shown %+v, want ACTIVE with no task_state", Nova(n))
	}
}

// TestApplyDetachCycle: each call's outcome, and every refusal going on to
// the power-on with the volume kept.
func TestApplyDetachCycle(t *testing.T) {
	det := func(c Cycle, mut ...func(*Server)) *Server {
		return inOp(PhaseDetachingVolume, OpDetachVolume, false, append([]func(*Server){volOp("v1"), cyc(c)}, mut...)...)
	}
	tests := []struct {
		name    string
		s       *Server
		kind    Kind
		outcome Outcome
		next    bool // a record is written
		phase   Phase
		cycle   Cycle
		sent    bool
		done    bool
		result  string
	}{
		{"power-off accepted", det(CyclePowerOff), KindPowerOff, OK, true, PhaseDetachingVolume, CyclePowerOff, true, false, ""},
		{"power-off refused: power on again", det(CyclePowerOff), KindPowerOff, Rejected, true, PhaseDetachingVolume, CyclePowerOn, false, false, ""},
		{"power-off transient: again", det(CyclePowerOff), KindPowerOff, Transient, false, "", "", false, false, ""},
		{"detached: power on", det(CycleDetach), KindDetachVolume, OK, true, PhaseDetachingVolume, CyclePowerOn, false, false, ""},
		{"detach refused: power on again, volume kept", det(CycleDetach), KindDetachVolume, Rejected, true, PhaseDetachingVolume, CyclePowerOn, false, false, ""},
		{"detach transient: again", det(CycleDetach), KindDetachVolume, Transient, false, "", "", false, false, ""},
		{"power-on accepted", det(CyclePowerOn), KindPowerOn, OK, true, PhaseDetachingVolume, CyclePowerOn, true, false, ""},
		{"power-on refused: SHUTOFF with the error", det(CyclePowerOn), KindPowerOn, Rejected, true, PhaseStopped, "", false, true, ResultError},
		{"node gone: ERROR", det(CycleDetach), KindDetachVolume, Gone, true, PhaseError, "", false, true, ResultError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := Apply(tt.s, Action{Kind: tt.kind}, Result{Outcome: tt.outcome, Message: "no"}, t0, cfg())
			if (ap.Next != nil) != tt.next {
				t.Fatalf("record written = %v, want %v", ap.Next != nil, tt.next)
			}
			if ap.Next == nil {
				return
			}
			n := ap.Next
			if n.Phase != tt.phase || n.Cycle != tt.cycle || n.OpSent != tt.sent || n.OpPending() == tt.done {
				t.Errorf("got phase %s cycle %q sent %v pending %v", n.Phase, n.Cycle, n.OpSent, n.OpPending())
			}
			if tt.outcome == Rejected && tt.kind != KindPowerOn && (n.OpFault == nil || !strings.Contains(n.OpFault.Message, "stays attached")) {
				t.Errorf("refusal not kept for the end: %+v", n.OpFault)
			}
			if !n.Phase.Stable() && !n.Deadline.After(t0) {
				t.Errorf("no deadline ahead: %v", n.Deadline)
			}
			if tt.done && (len(ap.Events) == 0 || ap.Events[0].Result != tt.result) {
				t.Errorf("events %+v", ap.Events)
			}
		})
	}
}
