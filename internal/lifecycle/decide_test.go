package lifecycle

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func cfg() Config { return DefaultConfig() }

func srv(phase Phase, mut ...func(*Server)) *Server {
	s := &Server{
		ID: "11111111-1111-1111-1111-111111111111", Name: "s1", Desired: DesiredActive, Phase: phase,
		Spec:      Spec{ResourceClass: "baremetal", ImageSource: "http://img/x.qcow2", RootGB: 10, Networks: []string{"net1"}},
		CreatedAt: t0, PhaseSince: t0, Deadline: t0.Add(time.Hour), CreateRequestID: "req-c",
	}
	switch phase {
	case PhaseReserving:
		s.NodeID = "node-a"
	case PhaseNetworking, PhaseDeploying, PhaseActive, PhaseReleasing:
		s.NodeID = "node-a"
	}
	if phase == PhaseDeploying || phase == PhaseActive {
		s.DeployRequested, s.PortsAllocated = true, true
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

// ironicStates is the tests' own reading of Ironic's provision states (the
// real classifier is the reconciler's view builder).
var ironicStates = map[string]NodeState{
	"available": NodeAvailable, "deploying": NodeDeploying, "wait call-back": NodeDeployWaiting, "deploy hold": NodeDeployWaiting,
	"active": NodeActive, "deploy failed": NodeDeployFailed, "error": NodeFailed, "rescue failed": NodeFailed,
	"deleting": NodeTearingDown, "cleaning": NodeTearingDown, "clean wait": NodeTearingDown, "clean failed": NodeCleanFailed,
	"manageable": NodeIdle, "enroll": NodeIdle, "verifying": NodeBusy, "inspecting": NodeBusy,
	"rescue": NodeRescue, "rescuing": NodeRescue,
}

func classify(state string) NodeState {
	if st, ok := ironicStates[state]; ok {
		return st
	}
	return NodeUnexpected
}

func node(state string, mut ...func(*NodeView)) NodeView {
	v := NodeView{State: classify(state), Holder: HeldByUs, Shown: state}
	for _, m := range mut {
		m(&v)
	}
	return v
}

var (
	gone       = NodeView{State: NodeGone}
	unobserved = NodeView{}
	noInstance = func(v *NodeView) { v.Holder = HeldByNobody }
	otherInst  = func(v *NodeView) { v.Holder, v.Other = HeldByOther, "22222222-2222-2222-2222-222222222222" }
	inMaint    = func(v *NodeView) { v.Maintenance = true }
	locked     = func(v *NodeView) { v.Locked = true }
	targetAct  = func(v *NodeView) { v.Settling = true }
	deleted    = func(s *Server) { s.Desired, s.DeleteRequestedAt, s.DeleteRequestID = DesiredDeleted, t0, "req-d" }
	pastDue    = func(s *Server) { s.Deadline = t0.Add(-time.Second) }
	noNode     = func(s *Server) { s.NodeID, s.DeployRequested = "", false }
	noPorts    = func(s *Server) { s.PortsAllocated = false }
	withFault  = func(r Reason) func(*Server) { return func(s *Server) { s.Fault = &Fault{Reason: r, Message: "m"} } }
	attempts   = func(n int) func(*Server) { return func(s *Server) { s.Attempts = make([]Attempt, n) } }
	maintSince = func(d time.Duration) func(*Server) { return func(s *Server) { s.MaintenanceSince = t0.Add(-d) } }
	onA        = func(s *Server) { s.NodeID = "node-a" }
	stranded   = func(s *Server) { s.VolumesStrandedOn = "node-x" }
	// makes: a boot volume made from an image and a blank data volume
	// made for the server, ready (made and available) or not.
	makes = func(ready bool) func(*Server) {
		return func(s *Server) {
			s.Spec.Volumes = []VolumeRef{{BootIndex: 0, Source: SourceImage, ImageID: "img-1", SizeGB: 10, Ready: ready, DeleteOnTermination: true},
				{BootIndex: -1, Source: SourceBlank, SizeGB: 1, Ready: ready}}
			if ready {
				s.Made = []MadeVolume{{Index: 0, ID: "v-made-0", Ready: true}, {Index: 1, ID: "v-made-1", Ready: true}}
			}
		}
	}
	vols = func(s *Server) {
		s.Spec.Volumes = []VolumeRef{{ID: "v-boot", BootIndex: 0}, {ID: "v-data", BootIndex: -1, DeleteOnTermination: true}}
	}
)

func TestDecide(t *testing.T) {
	type want struct {
		kind   Kind
		phase  Phase  // for KindSave
		reason Reason // for KindSave to error/releasing
		remove bool   // KindUnreserve.RemoveInstance
	}
	tests := []struct {
		name string
		s    *Server
		v    NodeView
		down bool
		want want
	}{
		// build path
		{"pending schedules", srv(PhasePending), unobserved, false, want{kind: KindSchedule}},
		{"pending past deadline errors", srv(PhasePending, pastDue), unobserved, false, want{KindSave, PhaseError, ReasonBuildTimeout, false}},
		{"pending past deadline, Ironic down", srv(PhasePending, pastDue), unobserved, true, want{KindSave, PhaseError, ReasonIronicUnavailable, false}},
		{"reserving reserves", srv(PhaseReserving), unobserved, false, want{kind: KindReserve}},
		{"networking attaches", srv(PhaseNetworking, func(s *Server) { s.PortsAllocated = true }), node("available"), false, want{kind: KindNetwork}},
		{"networking waits for a view of the node", srv(PhaseNetworking, func(s *Server) { s.PortsAllocated = true }), unobserved, false, want{kind: KindWait}},
		{"networking on a node taken behind our back (I7)", srv(PhaseNetworking, func(s *Server) { s.PortsAllocated = true }), node("available", otherInst), false, want{KindSave, PhaseReleasing, ReasonNodeDisassociated, false}},
		{"networking on a node gone", srv(PhaseNetworking, func(s *Server) { s.PortsAllocated = true }), gone, false, want{KindSave, PhaseReleasing, ReasonNodeDeleted, false}},
		{"deploy not started is sent", srv(PhaseDeploying), node("available"), false, want{kind: KindDeploy}},
		{"deploying waits", srv(PhaseDeploying), node("deploying", targetAct, locked), false, want{kind: KindWait}},
		{"wait call-back waits", srv(PhaseDeploying), node("wait call-back", targetAct), false, want{kind: KindWait}},
		{"deploy unobserved waits", srv(PhaseDeploying), unobserved, false, want{kind: KindWait}},
		{"active node -> ACTIVE", srv(PhaseDeploying), node("active"), false, want{kind: KindSave, phase: PhaseActive}},
		// failures while deploying
		{"node 404 while deploying is a deploy failure, not a delete", srv(PhaseDeploying), gone, false, want{KindSave, PhaseReleasing, ReasonNodeDeleted, false}},
		{"deploy failed", srv(PhaseDeploying), node("deploy failed", targetAct), false, want{KindSave, PhaseReleasing, ReasonDeployFailed, false}},
		{"torn down: deleting", srv(PhaseDeploying), node("deleting"), false, want{KindSave, PhaseReleasing, ReasonNodeTornDown, false}},
		{"torn down: available, uuid cleared", srv(PhaseDeploying), node("available", noInstance), false, want{KindSave, PhaseReleasing, ReasonNodeTornDown, false}},
		{"uuid replaced", srv(PhaseDeploying), node("wait call-back", otherInst), false, want{KindSave, PhaseReleasing, ReasonNodeDisassociated, false}},
		{"maintenance first seen", srv(PhaseDeploying), node("wait call-back", inMaint), false, want{kind: KindSave, phase: PhaseDeploying}},
		{"maintenance within grace waits", srv(PhaseDeploying, maintSince(time.Minute)), node("wait call-back", inMaint), false, want{kind: KindWait}},
		{"maintenance past grace fails", srv(PhaseDeploying, maintSince(10*time.Minute)), node("wait call-back", inMaint), false, want{KindSave, PhaseReleasing, ReasonNodeMaintenance, false}},
		{"deploying past deadline", srv(PhaseDeploying, pastDue), node("wait call-back"), false, want{KindSave, PhaseError, ReasonBuildTimeout, false}},
		{"node error while deploying is a deploy failure", srv(PhaseDeploying), node("error"), false, want{KindSave, PhaseReleasing, ReasonDeployFailed, false}},
		{"manageable with our uuid while deploying: torn down", srv(PhaseDeploying), node("manageable"), false, want{KindSave, PhaseReleasing, ReasonNodeTornDown, false}},
		{"clean failed while deploying: torn down", srv(PhaseDeploying), node("clean failed"), false, want{KindSave, PhaseReleasing, ReasonNodeTornDown, false}},
		{"an unknown state while deploying waits", srv(PhaseDeploying), node("levitating"), false, want{kind: KindWait}},
		{"an unknown state is bounded by the build deadline", srv(PhaseDeploying, pastDue), node("levitating"), false, want{KindSave, PhaseError, ReasonBuildTimeout, false}},
		{"verifying while deploying waits", srv(PhaseDeploying), node("verifying"), false, want{kind: KindWait}},
		{"available but settling waits", srv(PhaseDeploying), node("available", targetAct), false, want{kind: KindWait}},
		{"available but locked waits", srv(PhaseDeploying), node("available", locked), false, want{kind: KindWait}},
		// active drift
		{"active stays", srv(PhaseActive), node("active"), false, want{kind: KindWait}},
		{"active in maintenance stays", srv(PhaseActive), node("active", inMaint), false, want{kind: KindWait}},
		{"active node deleted", srv(PhaseActive), gone, false, want{KindSave, PhaseError, ReasonNodeDeleted, false}},
		{"active node torn down", srv(PhaseActive), node("deleting"), false, want{KindSave, PhaseError, ReasonNodeTornDown, false}},
		{"active uuid removed", srv(PhaseActive), node("active", noInstance), false, want{KindSave, PhaseError, ReasonNodeDisassociated, false}},
		{"active unobserved waits", srv(PhaseActive), unobserved, false, want{kind: KindWait}},
		{"active node taken by another", srv(PhaseActive), node("active", otherInst), false, want{KindSave, PhaseError, ReasonNodeDisassociated, false}},
		{"active node in an unknown state", srv(PhaseActive), node("levitating"), false, want{KindSave, PhaseError, ReasonNodeTornDown, false}},
		// release
		{"release undeploys deploy failed", srv(PhaseReleasing, withFault(ReasonDeployFailed)), node("deploy failed"), false, want{kind: KindUndeploy}},
		{"release waits for locked", srv(PhaseReleasing, withFault(ReasonDeployFailed)), node("deploy failed", locked), false, want{kind: KindWait}},
		{"release waits for deleting", srv(PhaseReleasing, withFault(ReasonNodeTornDown)), node("deleting"), false, want{kind: KindWait}},
		{"release waits for a running deploy", srv(PhaseReleasing, withFault(ReasonBuildTimeout)), node("deploying"), false, want{kind: KindWait}},
		{"release undeploys wait call-back", srv(PhaseReleasing, withFault(ReasonNodeMaintenance)), node("wait call-back"), false, want{kind: KindUndeploy}},
		{"release undeploys a node in error", srv(PhaseReleasing, withFault(ReasonDeployFailed)), node("error"), false, want{kind: KindUndeploy}},
		{"release undeploys a node in rescue", srv(PhaseError, withFault(ReasonDeployFailed), onA), node("rescue"), false, want{kind: KindUndeploy}},
		{"release waits while verifying", srv(PhaseError, withFault(ReasonDeployFailed), onA), node("verifying"), false, want{kind: KindWait}},
		{"release of a manageable node unreserves", srv(PhaseError, withFault(ReasonDeployFailed), onA), node("manageable"), false, want{kind: KindUnreserve, remove: true}},
		{"release of an unknown state unreserves", srv(PhaseError, withFault(ReasonDeployFailed), onA), node("levitating"), false, want{kind: KindUnreserve, remove: true}},
		{"release unreserves available ours", srv(PhaseReleasing, withFault(ReasonVIFAttachFailed)), node("available"), false, want{kind: KindUnreserve, remove: true}},
		{"release detaches when uuid cleared", srv(PhaseReleasing, withFault(ReasonNodeTornDown)), node("available", noInstance), false, want{kind: KindUnreserve, remove: false}},
		{"release never touches another's node", srv(PhaseReleasing, withFault(ReasonNodeDisassociated)), node("active", otherInst), false, want{kind: KindSave, phase: PhaseReleasing}},
		{"release of a gone node drops it", srv(PhaseReleasing, withFault(ReasonNodeDeleted)), gone, false, want{kind: KindSave, phase: PhaseReleasing}},
		{"release frees ports", srv(PhaseReleasing, withFault(ReasonNodeDeleted), noNode, func(s *Server) { s.PortsAllocated = true }), unobserved, false, want{kind: KindFreePorts}},
		{"released -> reschedule", srv(PhaseReleasing, withFault(ReasonNodeDeleted), noNode, attempts(1)), unobserved, false, want{kind: KindSave, phase: PhasePending}},
		{"released, attempts exhausted -> ERROR", srv(PhaseReleasing, withFault(ReasonNodeDeleted), noNode, attempts(3)), unobserved, false, want{KindSave, PhaseError, ReasonNodeDeleted, false}},
		{"released, not reschedulable -> ERROR", srv(PhaseReleasing, withFault(ReasonNetworkAllocationFailed), noNode, attempts(1)), unobserved, false, want{KindSave, PhaseError, ReasonNetworkAllocationFailed, false}},
		{"releasing past deadline -> ERROR at once", srv(PhaseReleasing, withFault(ReasonDeployFailed), pastDue), node("deploy failed", locked), false, want{KindSave, PhaseError, ReasonDeployFailed, false}},
		{"error holding a node keeps releasing", srv(PhaseError, withFault(ReasonBuildTimeout), func(s *Server) { s.NodeID = "node-a" }), node("wait call-back"), false, want{kind: KindUndeploy}},
		{"error holding nothing waits", srv(PhaseError, withFault(ReasonNoValidHost)), unobserved, false, want{kind: KindWait}},
		// volumes
		{"volumes attach", srv(PhaseVolumes, vols, func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), node("available"), false, want{kind: KindAttachVolumes}},
		{"volumes on a node whose instance_uuid was removed (I7)", srv(PhaseVolumes, vols, func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), node("available", noInstance), false, want{KindSave, PhaseReleasing, ReasonNodeTornDown, false}},
		{"volumes past deadline", srv(PhaseVolumes, vols, pastDue, func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), node("available"), false, want{KindSave, PhaseError, ReasonBuildTimeout, false}},
		{"volumes: a block device to make comes before the attach", srv(PhaseVolumes, makes(false), func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), node("available"), false, want{kind: KindCreateVolume}},
		{"volumes: one recorded, not yet available: read it again", srv(PhaseVolumes, makes(false), func(s *Server) {
			s.NodeID, s.VolumesOnNode, s.Made = "node-a", true, []MadeVolume{{Index: 0, ID: "v-made"}}
		}), node("available"), false, want{kind: KindCreateVolume}},
		{"volumes: made and available: attached like any other", srv(PhaseVolumes, makes(true), func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), node("available"), false, want{kind: KindAttachVolumes}},
		{"volumes: no make without a view of the node", srv(PhaseVolumes, makes(false), func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), unobserved, false, want{kind: KindWait}},
		{"volumes: delete while making", srv(PhaseVolumes, makes(false), deleted, func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), node("available"), false, want{KindSave, PhaseDeleting, "", false}},
		{"volumes: deadline while making", srv(PhaseVolumes, makes(false), pastDue, func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), node("available"), false, want{KindSave, PhaseError, ReasonBuildTimeout, false}},
		{"volumes: node deleted while making", srv(PhaseVolumes, makes(false), func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }), gone, false, want{KindSave, PhaseReleasing, ReasonNodeDeleted, false}},
		{"release removes targets before the reservation", srv(PhaseReleasing, vols, withFault(ReasonDeployFailed), func(s *Server) { s.VolumesOnNode = true }), node("available"), false, want{kind: KindDetachVolumes}},
		{"release of a deployed node no longer ours removes our targets", srv(PhaseReleasing, vols, withFault(ReasonNodeDisassociated), func(s *Server) { s.VolumesOnNode = true }), node("active", noInstance), false, want{kind: KindDetachVolumes}},
		{"release undeploys before removing targets", srv(PhaseReleasing, vols, withFault(ReasonDeployFailed), func(s *Server) { s.VolumesOnNode = true }), node("deploy failed"), false, want{kind: KindUndeploy}},
		{"reschedule keeps the volumes", srv(PhaseReleasing, vols, withFault(ReasonDeployFailed), noNode, attempts(1)), unobserved, false, want{kind: KindSave, phase: PhasePending}},
		{"targets on another's node are stranded, node untouched", srv(PhaseReleasing, vols, withFault(ReasonNodeDisassociated), func(s *Server) { s.VolumesOnNode = true }), node("active", otherInst), false, want{kind: KindSave, phase: PhaseReleasing}},
		{"stranded volumes end the build in ERROR, not a reschedule (I8)", srv(PhaseReleasing, vols, withFault(ReasonDeployFailed), noNode, attempts(1), stranded), unobserved, false, want{KindSave, PhaseError, ReasonVolumeStranded, false}},
		{"stranded volumes are never attached", srv(PhaseVolumes, vols, stranded, func(s *Server) { s.NodeID, s.VolumesOnNode = "node-b", true }), node("available"), false, want{KindSave, PhaseError, ReasonVolumeStranded, false}},
		{"ERROR gives stranded volumes up too", srv(PhaseError, vols, withFault(ReasonVolumeStranded), noNode, stranded), unobserved, false, want{kind: KindReleaseVolumes}},
		{"ERROR gives the volumes up last", srv(PhaseError, vols, withFault(ReasonDeployFailed), noNode), unobserved, false, want{kind: KindReleaseVolumes}},
		{"delete gives the volumes up", srv(PhaseActive, vols, deleted, noNode, noPorts, func(s *Server) { s.Phase = PhaseDeleting }), unobserved, false, want{kind: KindReleaseVolumes}},
		// delete wins
		{"delete while pending", srv(PhasePending, deleted), unobserved, false, want{kind: KindSave, phase: PhaseDeleting}},
		{"delete while deploying", srv(PhaseDeploying, deleted), node("wait call-back"), false, want{kind: KindSave, phase: PhaseDeleting}},
		{"delete beats deadline", srv(PhaseDeploying, deleted, pastDue), node("wait call-back"), false, want{kind: KindSave, phase: PhaseDeleting}},
		{"delete beats active node", srv(PhaseDeploying, deleted, func(s *Server) { s.Phase = PhaseDeleting }), node("active"), false, want{kind: KindUndeploy}},
		{"deleting waits for a locked deploy", srv(PhaseDeploying, deleted, func(s *Server) { s.Phase = PhaseDeleting }), node("deploying", locked), false, want{kind: KindWait}},
		{"deleting a gone node", srv(PhaseActive, deleted, func(s *Server) { s.Phase = PhaseDeleting }), gone, false, want{kind: KindSave, phase: PhaseDeleting}},
		{"deleting done", srv(PhaseDeleting, deleted, noNode, noPorts), unobserved, false, want{kind: KindSave, phase: PhaseDeleted}},
		{"deleting past its deadline", srv(PhaseActive, deleted, func(s *Server) { s.Phase = PhaseDeleting; s.DeleteRequestedAt = t0.Add(-time.Hour) }), unobserved, false, want{kind: KindSave, phase: PhaseDeleted}},
		{"deleted holding a node keeps releasing", srv(PhaseActive, deleted, func(s *Server) { s.Phase = PhaseDeleted }), node("active"), false, want{kind: KindUndeploy}},
		{"delete of an ERROR server", srv(PhaseError, deleted, withFault(ReasonNoValidHost)), unobserved, false, want{kind: KindSave, phase: PhaseDeleting}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.s.Clone()
			a := Decide(Input{Server: tt.s, Node: tt.v, Now: t0, IronicDown: tt.down}, cfg())
			if a.Kind != tt.want.kind {
				t.Fatalf("kind = %v (%s), want %v", a.Kind, a.Why, tt.want.kind)
			}
			if a.Kind == KindUnreserve && a.RemoveInstance != tt.want.remove {
				t.Errorf("RemoveInstance = %v, want %v", a.RemoveInstance, tt.want.remove)
			}
			if a.Kind == KindSave {
				if a.Next.Phase != tt.want.phase {
					t.Errorf("phase = %s, want %s (%s)", a.Next.Phase, tt.want.phase, a.Why)
				}
				if tt.want.reason != "" && (a.Next.Fault == nil || a.Next.Fault.Reason != tt.want.reason) {
					t.Errorf("fault = %+v, want reason %s", a.Next.Fault, tt.want.reason)
				}
				if a.Next.Phase == PhaseError && (a.Next.Fault == nil || a.Next.Fault.Message == "") {
					t.Errorf("ERROR without an explaining fault (I5)")
				}
				if a.Next.Desired != tt.s.Desired {
					t.Errorf("Decide changed Desired")
				}
			}
			if tt.s.Phase != before.Phase || tt.s.NodeID != before.NodeID || len(tt.s.Attempts) != len(before.Attempts) {
				t.Errorf("Decide mutated its input")
			}
		})
	}
}

func TestDecideNeverResurrects(t *testing.T) {
	// I2: from any phase, with any node view, a server desired deleted is
	// never moved to a phase that shows BUILD, ACTIVE or ERROR.
	views := []NodeView{unobserved, gone, node("active"), node("deploy failed"), node("available", noInstance),
		node("wait call-back", inMaint), node("deploying", locked), node("active", otherInst)}
	phases := []Phase{PhasePending, PhaseReserving, PhaseNetworking, PhaseDeploying, PhaseActive, PhaseReleasing,
		PhaseError, PhaseDeleting, PhaseDeleted}
	for _, p := range phases {
		for _, v := range views {
			for _, due := range []bool{false, true} {
				s := srv(p, deleted, withFault(ReasonDeployFailed))
				if due {
					s.Deadline = t0.Add(-time.Hour)
					s.DeleteRequestedAt = t0.Add(-time.Hour)
				}
				a := Decide(Input{Server: s, Node: v, Now: t0}, cfg())
				if a.Kind == KindSave {
					if st := Nova(a.Next); !st.ShowsDelete() {
						t.Errorf("phase %s view %+v: saved status %s", p, v, st.Status)
					}
				}
				if a.Kind == KindSchedule || a.Kind == KindReserve || a.Kind == KindNetwork || a.Kind == KindDeploy {
					t.Errorf("phase %s view %+v: build action %v after delete", p, v, a.Kind)
				}
			}
		}
	}
}

func TestNeedsNode(t *testing.T) {
	tests := []struct {
		s    *Server
		want bool
	}{
		{srv(PhasePending), false},
		{srv(PhaseReserving), false},
		{srv(PhaseNetworking), true},
		{srv(PhaseVolumes, func(s *Server) { s.NodeID = "node-a" }), true},
		{srv(PhaseDeploying), true},
		{srv(PhaseActive), true},
		{srv(PhaseReleasing), true},
		{srv(PhaseError, func(s *Server) { s.NodeID = "node-a" }), true},
		{srv(PhaseError), false}, // no node
		{srv(PhaseReserving, deleted), true},
		{srv(PhaseDeleted, deleted, func(s *Server) { s.NodeID = "node-a" }), true},
	}
	for _, tt := range tests {
		if got := NeedsNode(tt.s); got != tt.want {
			t.Errorf("NeedsNode(%s, desired %s, node %q) = %v, want %v", tt.s.Phase, tt.s.Desired, tt.s.NodeID, got, tt.want)
		}
	}
}

func TestDeadline(t *testing.T) {
	c := cfg()
	b := srv(PhaseDeploying)
	if got := Deadline(b, c); !got.Equal(b.Deadline) {
		t.Errorf("build deadline = %v, want %v", got, b.Deadline)
	}
	d := srv(PhaseDeploying, deleted)
	if got, want := Deadline(d, c), t0.Add(c.DeleteTimeout); !got.Equal(want) {
		t.Errorf("delete deadline = %v, want %v", got, want)
	}
	if got, want := c.BuildDeadline(t0), t0.Add(c.BuildTimeout); !got.Equal(want) {
		t.Errorf("BuildDeadline = %v, want %v", got, want)
	}
	if PastDue(b, c, b.Deadline.Add(time.Second), 2*time.Second) || !PastDue(b, c, b.Deadline.Add(3*time.Second), 2*time.Second) {
		t.Errorf("PastDue does not allow exactly the grace")
	}
	if PastDue(srv(PhaseActive, pastDue), c, t0.Add(time.Hour), 0) {
		t.Errorf("a stable server is never past due")
	}
}

func TestMarks(t *testing.T) {
	onNode := func(s *Server) { s.NodeID, s.VolumesOnNode = "node-a", true }
	tests := []struct {
		name string
		s    *Server
		want VolumeMark
	}{
		{"held, not on a node", srv(PhasePending, vols), VolumeMark{Status: VolumeReserved}},
		{"attaching: the node is recorded before the target", srv(PhaseVolumes, vols, onNode), VolumeMark{Status: VolumeReserved, Node: "node-a", Reason: "attaching to node node-a"}},
		{"deploying", srv(PhaseDeploying, vols, onNode), VolumeMark{Status: VolumeInUse, Node: "node-a"}},
		{"active", srv(PhaseActive, vols, onNode), VolumeMark{Status: VolumeInUse, Node: "node-a"}},
		{"releasing", srv(PhaseReleasing, vols, onNode), VolumeMark{Status: VolumeInUse, Node: "node-a", Reason: "waiting for Ironic to remove its volume target from node node-a"}},
		{"deleting", srv(PhaseDeleting, vols, deleted, onNode), VolumeMark{Status: VolumeDeleting, Node: "node-a", Reason: "waiting for Ironic to remove its volume target from node node-a"}},
		{"targets removed", srv(PhaseReleasing, vols, noNode), VolumeMark{Status: VolumeReserved}},
		{"stranded", srv(PhaseError, vols, noNode, stranded), VolumeMark{Status: VolumeError, Node: "node-x",
			Reason: "its Ironic volume target was left on node node-x, which another instance now holds; remove the target there, then delete this volume"}},
	}
	for _, tt := range tests {
		got, ok := Marks(tt.s)
		if !ok || got != tt.want {
			t.Errorf("%s: Marks = %+v, %v; want %+v", tt.name, got, ok, tt.want)
		}
	}
	if _, ok := Marks(srv(PhaseActive)); ok {
		t.Errorf("a server without volumes has marks")
	}
	if _, ok := Marks(srv(PhaseError, vols, func(s *Server) { s.VolumesReleased = true })); ok {
		t.Errorf("released volumes have marks")
	}
}
