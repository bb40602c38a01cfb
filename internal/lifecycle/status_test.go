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
	if got.Status != "DELETED" || got.TaskState != "deleting" || !got.Visible {
		t.Errorf("Nova(volumes, delete requested) = %+v", got)
	}
}

// listed fails t unless a status filter finds s where it shows: a store
// filtering on StatusPhases(Nova(s).Status) must return it.
func listed(t *testing.T, s *Server, where string) {
	t.Helper()
	st := Nova(s)
	if !st.Visible || s.Desired == DesiredDeleted || st.Status == "DELETED" {
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

// novaStatuses are the statuses a server no delete was asked for shows.
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
