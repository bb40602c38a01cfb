package lifecycle

import (
	"strings"
	"testing"
	"time"
)

// TestApply is the Kind × Outcome table: for every effect and every outcome,
// what Apply records (phase, fault reason, flags) and whether the tick stops.
func TestApply(t *testing.T) {
	type want struct {
		next   bool   // a record is written
		phase  Phase  // when next
		reason Reason // when next: the fault's reason ("" none)
		stop   bool
		down   bool
		check  func(*Server) string // further checks on the record
	}
	keep := want{stop: true}
	withVols := func(s *Server) { vols(s) }
	onNode := func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }
	holdsVols := func(s *Server) { vols(s) }
	tests := []struct {
		kind    Kind
		s       *Server
		outcome Outcome
		want    want
	}{
		{KindSchedule, srv(PhasePending), OK, want{next: true, phase: PhaseReserving, check: func(n *Server) string {
			if n.NodeID != "node-b" {
				return "node not recorded"
			}
			return ""
		}}},
		{KindSchedule, srv(PhasePending), NoCandidate, want{next: true, phase: PhaseError, reason: ReasonNoValidHost}},
		{KindSchedule, srv(PhasePending, func(s *Server) {
			s.Attempts = []Attempt{{Node: "node-a", Reason: ReasonNodeDeleted, Message: "node node-a was deleted"}}
		}), NoCandidate, want{next: true, phase: PhaseError, reason: ReasonNodeDeleted}},
		{KindSchedule, srv(PhasePending), Transient, keep},
		{KindSchedule, srv(PhasePending), Unreachable, want{stop: true, down: true}},

		{KindReserve, srv(PhaseReserving), OK, want{next: true, phase: PhaseNetworking, check: func(n *Server) string {
			if !n.PortsAllocated {
				return "ports not recorded before their allocation"
			}
			return ""
		}}},
		{KindReserve, srv(PhaseReserving), Taken, want{next: true, phase: PhasePending, check: noAttemptNoNode}},
		{KindReserve, srv(PhaseReserving), Rejected, want{next: true, phase: PhasePending, check: noAttemptNoNode}},
		{KindReserve, srv(PhaseReserving), Gone, want{next: true, phase: PhasePending, check: func(n *Server) string {
			if s := noAttemptNoNode(n); s != "" {
				return s
			}
			if len(n.Excluded) != 1 {
				return "a gone node is not excluded"
			}
			return ""
		}}},
		{KindReserve, srv(PhaseReserving), Transient, keep},
		{KindReserve, srv(PhaseReserving), InvalidState, keep},
		{KindReserve, srv(PhaseReserving), Unreachable, want{stop: true, down: true}},

		{KindNetwork, srv(PhaseNetworking), OK, want{next: true, phase: PhaseDeploying, check: func(n *Server) string {
			if !n.DeployRequested {
				return "deploy not recorded before it is requested"
			}
			return ""
		}}},
		{KindNetwork, srv(PhaseNetworking, withVols), OK, want{next: true, phase: PhaseVolumes, check: func(n *Server) string {
			if !n.VolumesOnNode {
				return "volume targets not recorded before they are created"
			}
			return ""
		}}},
		{KindNetwork, srv(PhaseNetworking), Exhausted, want{next: true, phase: PhaseReleasing, reason: ReasonNetworkAllocationFailed}},
		{KindNetwork, srv(PhaseNetworking), Gone, want{next: true, phase: PhaseReleasing, reason: ReasonNodeDeleted}},
		{KindNetwork, srv(PhaseNetworking), Rejected, want{next: true, phase: PhaseReleasing, reason: ReasonVIFAttachFailed}},
		{KindNetwork, srv(PhaseNetworking), Taken, want{next: true, phase: PhaseReleasing, reason: ReasonVIFAttachFailed}},
		{KindNetwork, srv(PhaseNetworking), Transient, keep},

		{KindAttachVolumes, srv(PhaseVolumes, withVols, onNode), OK, want{next: true, phase: PhaseDeploying, check: func(n *Server) string {
			if !n.DeployRequested || !n.VolumesOnNode {
				return "deploy not recorded, or targets forgotten"
			}
			return ""
		}}},
		{KindAttachVolumes, srv(PhaseVolumes, withVols, onNode), Gone, want{next: true, phase: PhaseReleasing, reason: ReasonNodeDeleted}},
		{KindAttachVolumes, srv(PhaseVolumes, withVols, onNode), Rejected, want{next: true, phase: PhaseReleasing, reason: ReasonVolumeAttachFailed}},
		{KindAttachVolumes, srv(PhaseVolumes, withVols, onNode), InvalidState, keep},

		{KindDeploy, srv(PhaseDeploying), OK, keep},
		{KindDeploy, srv(PhaseDeploying), Gone, want{next: true, phase: PhaseReleasing, reason: ReasonNodeDeleted}},
		{KindDeploy, srv(PhaseDeploying), Rejected, want{next: true, phase: PhaseReleasing, reason: ReasonInvalidRequest}},
		{KindDeploy, srv(PhaseDeploying), Unreachable, want{stop: true, down: true}},

		{KindUndeploy, srv(PhaseReleasing, withFault(ReasonDeployFailed)), OK, keep},
		{KindUndeploy, srv(PhaseReleasing, withFault(ReasonDeployFailed)), Gone, want{next: true, phase: PhaseReleasing, reason: ReasonDeployFailed, stop: true, check: noNodeHeld}},
		{KindUndeploy, srv(PhaseReleasing, withFault(ReasonDeployFailed)), Rejected, keep},

		{KindUnreserve, srv(PhaseReleasing, withFault(ReasonDeployFailed)), OK, want{next: true, phase: PhaseReleasing, reason: ReasonDeployFailed, check: noNodeHeld}},
		{KindUnreserve, srv(PhaseError, withFault(ReasonDeployFailed)), Gone, want{next: true, phase: PhaseError, reason: ReasonDeployFailed, check: noNodeHeld}},
		{KindUnreserve, srv(PhaseReleasing, withFault(ReasonDeployFailed)), Transient, keep},

		{KindDetachVolumes, srv(PhaseReleasing, holdsVols, onNode, withFault(ReasonDeployFailed)), OK, want{next: true, phase: PhaseReleasing, reason: ReasonDeployFailed, check: func(n *Server) string {
			if n.VolumesOnNode || n.NodeID == "" {
				return "targets not forgotten, or the node dropped too early"
			}
			return ""
		}}},
		{KindDetachVolumes, srv(PhaseReleasing, holdsVols, onNode, withFault(ReasonDeployFailed)), Gone, want{next: true, phase: PhaseReleasing, reason: ReasonDeployFailed}},
		{KindDetachVolumes, srv(PhaseReleasing, holdsVols, onNode, withFault(ReasonDeployFailed)), Transient, keep},

		{KindReleaseVolumes, srv(PhaseError, holdsVols, noNode, withFault(ReasonDeployFailed)), OK, want{next: true, phase: PhaseError, reason: ReasonDeployFailed, check: func(n *Server) string {
			if !n.VolumesReleased || n.HoldsVolumes() {
				return "volumes still held"
			}
			return ""
		}}},
		{KindReleaseVolumes, srv(PhaseError, holdsVols, noNode, withFault(ReasonDeployFailed)), Transient, keep},

		{KindFreePorts, srv(PhaseError, noNode, withFault(ReasonDeployFailed), func(s *Server) { s.PortsAllocated = true }), OK, want{next: true, phase: PhaseError, reason: ReasonDeployFailed, check: func(n *Server) string {
			if n.PortsAllocated {
				return "ports still recorded"
			}
			return ""
		}}},
		{KindFreePorts, srv(PhaseError, noNode, withFault(ReasonDeployFailed)), Transient, keep},
	}
	for _, tt := range tests {
		name := tt.kind.String() + "/" + tt.outcome.String() + "/" + string(tt.s.Phase)
		t.Run(name, func(t *testing.T) {
			before := tt.s.Clone()
			r := Result{Outcome: tt.outcome, Message: "m"}
			if tt.kind == KindSchedule && tt.outcome == OK {
				r.Node = "node-b"
			}
			ap := Apply(tt.s, Action{Kind: tt.kind}, r, t0, cfg())
			if (ap.Next != nil) != tt.want.next {
				t.Fatalf("record written = %v, want %v (%+v)", ap.Next != nil, tt.want.next, ap.Next)
			}
			if ap.Stop != tt.want.stop || ap.IronicDown != tt.want.down {
				t.Errorf("stop, down = %v, %v; want %v, %v", ap.Stop, ap.IronicDown, tt.want.stop, tt.want.down)
			}
			if tt.s.Phase != before.Phase || tt.s.NodeID != before.NodeID || len(tt.s.Attempts) != len(before.Attempts) {
				t.Errorf("Apply mutated its input")
			}
			if ap.Next == nil {
				return
			}
			n := ap.Next
			if n.Phase != tt.want.phase {
				t.Errorf("phase = %s, want %s", n.Phase, tt.want.phase)
			}
			got := Reason("")
			if n.Fault != nil {
				got = n.Fault.Reason
			}
			if got != tt.want.reason {
				t.Errorf("fault reason = %q, want %q", got, tt.want.reason)
			}
			if n.Phase == PhaseError && (n.Fault == nil || n.Fault.Message == "") {
				t.Errorf("ERROR without an explaining fault (I5)")
			}
			if len(ap.Events) == 0 {
				t.Errorf("a recorded transition without an event")
			}
			if !n.UpdatedAt.Equal(t0) {
				t.Errorf("UpdatedAt not stamped")
			}
			if tt.want.check != nil {
				if msg := tt.want.check(n); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

func noAttemptNoNode(n *Server) string {
	if n.NodeID != "" || len(n.Attempts) != 0 {
		return "a lost reservation spent an attempt or kept the node"
	}
	return ""
}

func noNodeHeld(n *Server) string {
	if n.NodeID != "" {
		return "node still held"
	}
	return ""
}

// TestApplyStaleViews: the reservation's answer and the scheduler's "nodes
// on their way back" decide what a stale inventory costs (S21 and the
// delete-then-create case): never an attempt, at most capacity_wait.
func TestApplyStaleViews(t *testing.T) {
	answered := func(v NodeView) Result { return Result{View: &v} }
	returning := Result{Outcome: NoCandidate, Returning: 1}
	waiting := func(d time.Duration) func(*Server) { return func(s *Server) { s.CapacityWaitSince = t0.Add(-d) } }
	tests := []struct {
		name    string
		kind    Kind
		s       *Server
		outcome Outcome
		res     Result
		next    bool
		phase   Phase
		reason  Reason
	}{
		{"reserved in maintenance: given back", KindReserve, srv(PhaseReserving), OK, answered(node("available", inMaint)), true, PhaseReleasing, ReasonNodeUnsuitable},
		{"reserved while cleaning: given back", KindReserve, srv(PhaseReserving), OK, answered(node("cleaning")), true, PhaseReleasing, ReasonNodeUnsuitable},
		{"reserved and fit", KindReserve, srv(PhaseReserving), OK, answered(node("available")), true, PhaseNetworking, ""},
		{"locked by its cleaning: choose another", KindReserve, srv(PhaseReserving), Transient, answered(node("cleaning", noInstance)), true, PhasePending, ""},
		{"locked, but our earlier PATCH went through", KindReserve, srv(PhaseReserving), Transient, answered(node("available")), true, PhaseNetworking, ""},
		{"locked for a moment: try again", KindReserve, srv(PhaseReserving), Transient, answered(node("available", noInstance)), false, "", ""},
		{"nothing free, nodes coming back: wait", KindSchedule, srv(PhasePending), NoCandidate, returning, true, PhasePending, ""},
		{"still within capacity_wait", KindSchedule, srv(PhasePending, waiting(time.Minute)), NoCandidate, returning, false, "", ""},
		{"capacity_wait over", KindSchedule, srv(PhasePending, waiting(3*time.Minute)), NoCandidate, returning, true, PhaseError, ReasonNoValidHost},
		{"nothing coming back: at once", KindSchedule, srv(PhasePending), NoCandidate, Result{}, true, PhaseError, ReasonNoValidHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.res
			r.Outcome = tt.outcome
			ap := Apply(tt.s, Action{Kind: tt.kind}, r, t0, cfg())
			if (ap.Next != nil) != tt.next {
				t.Fatalf("record written = %v, want %v", ap.Next != nil, tt.next)
			}
			if ap.Next == nil {
				return
			}
			if ap.Next.Phase != tt.phase {
				t.Errorf("phase = %s, want %s", ap.Next.Phase, tt.phase)
			}
			if len(ap.Next.Attempts) != len(tt.s.Attempts) {
				t.Errorf("an attempt was spent")
			}
			if tt.reason != "" && (ap.Next.Fault == nil || ap.Next.Fault.Reason != tt.reason) {
				t.Errorf("fault = %+v, want %s", ap.Next.Fault, tt.reason)
			}
			if tt.reason == ReasonNoValidHost && !tt.s.CapacityWaitSince.IsZero() && !strings.Contains(ap.Next.Fault.Message, "waited") {
				t.Errorf("the fault does not say it waited: %q", ap.Next.Fault.Message)
			}
			if tt.phase == PhasePending && tt.kind == KindSchedule && !ap.Next.CapacityWaitSince.Equal(t0) {
				t.Errorf("capacity wait not recorded")
			}
		})
	}
	// After the give-back's release, the server chooses again, attempts untouched.
	s := srv(PhaseReleasing, noNode, func(s *Server) { s.Fault = &Fault{Reason: ReasonNodeUnsuitable, Message: "m", Node: "node-a"} })
	if a := Decide(Input{Server: s, Now: t0}, cfg()); a.Kind != KindSave || a.Next.Phase != PhasePending || len(a.Next.Attempts) != 0 {
		t.Errorf("after a give-back: %v %+v", a.Kind, a.Next)
	}
}

// TestApplyReserveRecordsInstanceInfo: a reservation answered 200 records
// that its PATCH wrote instance_info on the node (the deploy then sends
// none); one whose answer was lost does not know it, and letting the node
// go forgets it.
func TestApplyReserveRecordsInstanceInfo(t *testing.T) {
	v := node("available")
	ok := Apply(srv(PhaseReserving), Action{Kind: KindReserve}, Result{Outcome: OK, View: &v}, t0, cfg())
	if ok.Next == nil || ok.Next.NodeID == "" || ok.Next.InstanceInfoOn != ok.Next.NodeID {
		t.Fatalf("reserved: %+v", ok.Next)
	}
	lost := Apply(srv(PhaseReserving, func(s *Server) { s.InstanceInfoOn = s.NodeID }), Action{Kind: KindReserve},
		Result{Outcome: Transient, View: &v}, t0, cfg())
	if lost.Next == nil || lost.Next.Phase != PhaseNetworking || lost.Next.InstanceInfoOn != "" {
		t.Fatalf("reserved, answer lost: %+v", lost.Next)
	}
	deployed := srv(PhaseDeploying, func(s *Server) { s.InstanceInfoOn, s.DeployRequested = s.NodeID, true })
	if a := Decide(Input{Server: deployed, Node: node("active", powerOn), Now: t0}, cfg()); a.Next == nil ||
		a.Next.Phase != PhaseActive || a.Next.InstanceInfoOn != "" {
		t.Fatalf("deployed: %v %+v", a.Kind, a.Next)
	}
	held := srv(PhaseReleasing, func(s *Server) { s.InstanceInfoOn = s.NodeID })
	rel := Apply(held, Action{Kind: KindUnreserve}, Result{Outcome: OK}, t0, cfg())
	if rel.Next == nil || rel.Next.NodeID != "" || rel.Next.InstanceInfoOn != "" {
		t.Fatalf("released: %+v", rel.Next)
	}
}
