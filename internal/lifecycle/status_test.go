package lifecycle

import (
	"slices"
	"testing"
)

func TestNovaBuildTaskStates(t *testing.T) {
	for _, tc := range []struct {
		phase Phase
		task  string
	}{
		{PhasePending, "scheduling"},
		{PhaseReserving, "scheduling"},
		{PhaseNetworking, "networking"},
		{PhaseVolumes, "block_device_mapping"},
		{PhaseDeploying, "spawning"},
		{PhaseReleasing, "spawning"},
	} {
		got := Nova(&Server{Desired: DesiredActive, Phase: tc.phase})
		want := NovaState{Status: "BUILD", VMState: "building", TaskState: tc.task, Visible: true}
		if got != want {
			t.Errorf("Nova(%s) = %+v, want %+v", tc.phase, got, want)
		}
	}
	// A delete wins over the volumes phase too (I2).
	got := Nova(&Server{Desired: DesiredDeleted, Phase: PhaseVolumes})
	if got != (NovaState{Status: "BUILD", VMState: "building", TaskState: "deleting", Visible: true}) {
		t.Errorf("Nova(volumes, delete requested) = %+v", got)
	}
}

// TestNovaDeleting: while a delete is carried out the server keeps the
// status and vm_state it had, with task_state deleting, as Nova's compute
// API leaves them; once gone it is DELETED (404).
func TestNovaDeleting(t *testing.T) {
	reboot := Op{Kind: OpReboot, Hard: true}
	for _, tc := range []struct {
		from     Phase
		op       Op
		held     bool
		status   string
		vmState  string
		launched bool
	}{
		{from: PhasePending, status: "BUILD", vmState: "building"},
		{from: PhaseDeploying, status: "BUILD", vmState: "building"},
		{from: PhaseReleasing, status: "BUILD", vmState: "building"},
		{from: PhaseActive, status: "ACTIVE", vmState: "active", launched: true},
		{from: PhaseActive, op: reboot, status: "ACTIVE", vmState: "active", launched: true},
		{from: PhaseRebooting, op: reboot, status: "ACTIVE", vmState: "active", launched: true},
		{from: PhaseStopped, status: "SHUTOFF", vmState: "stopped", launched: true},
		{from: PhasePoweringOn, op: Op{Kind: OpStart}, status: "SHUTOFF", vmState: "stopped", launched: true},
		{from: PhaseRescued, status: "RESCUE", vmState: "rescued", launched: true},
		{from: PhaseError, status: "ERROR", vmState: "error"},
		{from: PhaseError, held: true, op: Op{Kind: OpRebuild}, status: "ERROR", vmState: "error", launched: true},
	} {
		s := &Server{Desired: DesiredDeleted, Phase: tc.from, NodeID: "node", Op: tc.op, Held: tc.held}
		if tc.op.Kind != "" {
			s.OpGen = 1
		}
		if tc.from == PhaseError {
			s.Fault = &Fault{Reason: ReasonDeployFailed}
		}
		if tc.launched {
			s.LaunchedAt = t0
		}
		if tc.vmState == "stopped" {
			s.PowerSeen = PowerOff
		}
		want := NovaState{Status: tc.status, VMState: tc.vmState, TaskState: "deleting", Visible: true}
		// Accepted by the API, then carried out by the reconciler.
		if got := Nova(s); got != want {
			t.Errorf("delete asked in %s (op %s): %+v, want %+v", tc.from, tc.op.Kind, got, want)
		}
		n := toDeleting(s, t0)
		if got := Nova(n); got != want {
			t.Errorf("deleting from %s (op %s): %+v, want %+v", tc.from, tc.op.Kind, got, want)
		}
		if !slices.Contains(StatusPhases(tc.status), PhaseDeleting) || StatusExact(tc.status) {
			t.Errorf("StatusPhases(%s) = %v (exact %v): a deleting server showing it is not listed",
				tc.status, StatusPhases(tc.status), StatusExact(tc.status))
		}
		// A record written before DeleteFrom was kept: told by its fields.
		n.DeleteFrom = ""
		if got := Nova(n); got.TaskState != "deleting" || (tc.from != PhaseRescued && tc.from != PhaseReleasing && got != want) {
			t.Errorf("deleting from %s, phase not recorded: %+v, want %+v", tc.from, got, want)
		}
		if got := Nova(toDeleted(n, t0)); got != (NovaState{Status: "DELETED", VMState: "deleted"}) {
			t.Errorf("deleted from %s: %+v", tc.from, got)
		}
	}
	if got := StatusPhases("DELETED"); !slices.Equal(got, []Phase{PhaseDeleted}) || !StatusExact("DELETED") {
		t.Errorf("StatusPhases(DELETED) = %v (exact %v), want [deleted], exact", got, StatusExact("DELETED"))
	}
}

// listed fails t unless a status filter finds s where it shows: a store
// filtering on StatusPhases(Nova(s).Status) must return it.
func listed(t *testing.T, s *Server, where string) {
	t.Helper()
	st := Nova(s)
	if !st.Visible {
		return
	}
	if !slices.Contains(StatusPhases(st.Status), s.Phase) {
		t.Fatalf("%s: a %s server (op %+v pending %v, sent %v, fault %v) shows %s, but StatusPhases(%s) = %v",
			where, s.Phase, s.Op, s.OpPending(), s.OpSent, s.Fault, st.Status, st.Status, StatusPhases(st.Status))
	}
	for _, other := range novaStatuses {
		if other != st.Status && StatusExact(other) && slices.Contains(StatusPhases(other), s.Phase) {
			t.Fatalf("%s: a %s server shows %s, but %s lists phase %s unrefined", where, s.Phase, st.Status, other, s.Phase)
		}
	}
}

// novaStatuses are the statuses a visible server shows.
var novaStatuses = []string{"BUILD", "ACTIVE", "SHUTOFF", "REBOOT", "HARD_REBOOT", "REBUILD", "RESCUE", "ERROR"}

// TestEveryShownStatusIsListed asks for every operation the API allows on a
// server at rest (or held in error) and checks the server lists under the
// status it shows, while pending and along its way to the end.
func TestEveryShownStatusIsListed(t *testing.T) {
	c := DefaultConfig()
	kinds := []OpKind{OpReboot, OpStop, OpStart, OpRebuild, OpRescue, OpUnrescue, OpReset}
	for _, from := range []*Server{up(PhaseActive, ""), up(PhaseStopped, ""), up(PhaseRescued, ""), heldInError("")} {
		for _, k := range kinds {
			for _, hard := range []bool{false, true} {
				for _, to := range []string{ResetError, ResetActive} {
					ok := Allowed(from, k, hard) == nil
					if k == OpReset {
						ok = AllowedReset(from, to) == nil
					}
					if !ok || (k != OpReset && to == ResetActive) {
						continue
					}
					s := from.Clone()
					s.Op, s.OpGen = Op{Kind: k, Hard: hard, ResetTo: to, RequestID: "req-op"}, s.OpDone+1
					where := string(from.Phase) + "+" + string(k)
					listed(t, s, where)
					for _, v := range []NodeView{
						{State: NodeActive, Holder: HeldByUs, Power: PowerOn},
						{State: NodeActive, Holder: HeldByUs, Power: PowerOff},
						{State: NodeRescue, Holder: HeldByUs, Power: PowerOn},
					} {
						n := s
						for range 4 {
							a := Decide(Input{Server: n, Node: v, Now: t0}, c)
							if a.Kind != KindSave {
								ap := Apply(n, a, Result{Outcome: OK}, t0, c)
								if ap.Next == nil {
									break
								}
								a.Next = ap.Next
							}
							n = a.Next
							listed(t, n, where)
						}
					}
				}
			}
		}
	}
	// The statuses a store filter is asked for are exactly those servers show.
	for _, st := range novaStatuses {
		if StatusPhases(st) == nil {
			t.Errorf("StatusPhases(%s) is empty", st)
		}
	}
	if StatusPhases("PAUSED") != nil {
		t.Errorf("StatusPhases(PAUSED) = %v, want nil", StatusPhases("PAUSED"))
	}
}
