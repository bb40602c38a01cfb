package lifecycle

import (
	"testing"
	"time"
)

// up is a built server at rest in phase p, holding node-a, with op k pending.
func up(p Phase, k OpKind, mut ...func(*Server)) *Server {
	s := srv(PhaseActive)
	s.Phase, s.PortsAllocated, s.DeployRequested = p, true, true
	s.NodeID = "node-a"
	if k != "" {
		s.Op = Op{Kind: k, RequestID: "req-op", At: t0}
		s.OpGen = s.OpDone + 1
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

// inOp is a server in the operation phase p of op k, its deadline ahead.
func inOp(p Phase, k OpKind, sent bool, mut ...func(*Server)) *Server {
	s := up(p, k)
	s.OpSent, s.Deadline = sent, t0.Add(time.Minute)
	for _, m := range mut {
		m(s)
	}
	return s
}

// heldInError is a server an admin reset to error, still on node-a, with op
// k pending.
func heldInError(k OpKind, mut ...func(*Server)) *Server {
	s := up(PhaseError, k)
	s.Fault = &Fault{Reason: ReasonResetState, Message: "reset", Node: "node-a", Step: StepReset, At: t0}
	s.Held = true
	for _, m := range mut {
		m(s)
	}
	return s
}

// failedOp is an ERROR server whose build failed and released everything,
// with op k recorded just before it failed.
func failedOp(k OpKind, mut ...func(*Server)) *Server {
	s := up(PhaseError, k)
	s.NodeID, s.PortsAllocated, s.DeployRequested = "", false, false
	s.Fault = &Fault{Reason: ReasonDeployFailed, Message: "deploy failed", Step: StepDeploy, At: t0}
	for _, m := range mut {
		m(s)
	}
	return s
}

func resetTo(to string) func(*Server) { return func(s *Server) { s.Op.ResetTo = to } }

var (
	powerOn  = func(v *NodeView) { v.Power = PowerOn }
	powerOff = func(v *NodeView) { v.Power = PowerOff }
	powering = func(v *NodeView) { v.PowerSettling = true }
	hardOp   = func(s *Server) { s.Op.Hard = true }
	overdue  = func(s *Server) { s.Deadline = t0.Add(-time.Second) }
)

func TestDecideOps(t *testing.T) {
	type want struct {
		kind   Kind
		phase  Phase  // KindSave
		reason Reason // KindSave to error
		done   bool   // KindSave: the operation is finished (OpDone = OpGen)
		hard   bool   // KindReboot
	}
	tests := []struct {
		name string
		s    *Server
		v    NodeView
		want want
	}{
		// starting
		{"reboot starts", up(PhaseActive, OpReboot), node("active", powerOn), want{kind: KindSave, phase: PhaseRebooting}},
		{"stop starts", up(PhaseActive, OpStop), node("active", powerOn), want{kind: KindSave, phase: PhasePoweringOff}},
		{"start starts", up(PhaseStopped, OpStart), node("active", powerOff), want{kind: KindSave, phase: PhasePoweringOn}},
		{"rebuild starts", up(PhaseActive, OpRebuild), node("active"), want{kind: KindSave, phase: PhaseRebuilding}},
		{"rebuild from stopped", up(PhaseStopped, OpRebuild), node("active", powerOff), want{kind: KindSave, phase: PhaseRebuilding}},
		{"rescue starts", up(PhaseActive, OpRescue), node("active"), want{kind: KindSave, phase: PhaseRescuing}},
		{"unrescue starts", up(PhaseRescued, OpUnrescue), node("rescue"), want{kind: KindSave, phase: PhaseUnrescuing}},
		{"hard reboot of a stopped server", up(PhaseStopped, OpReboot, hardOp), node("active", powerOff), want{kind: KindSave, phase: PhaseRebooting}},
		{"soft reboot of a stopped server is given up", up(PhaseStopped, OpReboot), node("active", powerOff), want{kind: KindSave, phase: PhaseStopped, done: true}},
		{"stop of a stopped server is done", up(PhaseStopped, OpStop), node("active", powerOff), want{kind: KindSave, phase: PhaseStopped, done: true}},
		{"an operation starts without a view", up(PhaseActive, OpReboot), unobserved, want{kind: KindSave, phase: PhaseRebooting}},
		{"a lost node beats the operation", up(PhaseActive, OpReboot), gone, want{KindSave, PhaseError, ReasonNodeDeleted, true, false}},
		// rebooting
		{"reboot sent soft", inOp(PhaseRebooting, OpReboot, false), node("active", powerOn), want{kind: KindReboot}},
		{"reboot sent hard", inOp(PhaseRebooting, OpReboot, false, hardOp), node("active", powerOn), want{kind: KindReboot, hard: true}},
		{"soft refused: hard", inOp(PhaseRebooting, OpReboot, false, func(s *Server) { s.OpFallback = true }), node("active", powerOn), want{kind: KindReboot, hard: true}},
		{"reboot under way", inOp(PhaseRebooting, OpReboot, true), node("active", powerOn, powering), want{kind: KindWait}},
		{"reboot done", inOp(PhaseRebooting, OpReboot, true), node("active", powerOn), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"reboot unobserved waits", inOp(PhaseRebooting, OpReboot, true), unobserved, want{kind: KindWait}},
		{"reboot past its deadline: back to rest", inOp(PhaseRebooting, OpReboot, true, overdue), unobserved, want{kind: KindSave, phase: PhaseActive, done: true}},
		{"reboot past its deadline on a torn-down node", inOp(PhaseRebooting, OpReboot, true, overdue), node("available", noInstance), want{KindSave, PhaseError, ReasonNodeTornDown, true, false}},
		{"stop past its deadline on a deleted node", inOp(PhasePoweringOff, OpStop, true, overdue), gone, want{KindSave, PhaseError, ReasonNodeDeleted, true, false}},
		{"node deleted during a reboot", inOp(PhaseRebooting, OpReboot, true), gone, want{KindSave, PhaseError, ReasonNodeDeleted, true, false}},
		{"node torn down during a reboot", inOp(PhaseRebooting, OpReboot, true), node("deleting"), want{KindSave, PhaseError, ReasonNodeTornDown, true, false}},
		{"node taken during a reboot", inOp(PhaseRebooting, OpReboot, true), node("active", otherInst), want{KindSave, PhaseError, ReasonNodeDisassociated, true, false}},
		// stop and start
		{"power off sent", inOp(PhasePoweringOff, OpStop, false), node("active", powerOn), want{kind: KindPowerOff}},
		{"already off", inOp(PhasePoweringOff, OpStop, false), node("active", powerOff), want{kind: KindSave, phase: PhaseStopped, done: true}},
		{"off: stopped", inOp(PhasePoweringOff, OpStop, true), node("active", powerOff), want{kind: KindSave, phase: PhaseStopped, done: true}},
		{"still on", inOp(PhasePoweringOff, OpStop, true), node("active", powerOn), want{kind: KindWait}},
		{"stop past its deadline, still on", inOp(PhasePoweringOff, OpStop, true, overdue), node("active", powerOn), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"power on sent", inOp(PhasePoweringOn, OpStart, false), node("active", powerOff), want{kind: KindPowerOn}},
		{"on: active", inOp(PhasePoweringOn, OpStart, true), node("active", powerOn), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"start past its deadline, still off", inOp(PhasePoweringOn, OpStart, true, overdue), node("active", powerOff), want{kind: KindSave, phase: PhaseStopped, done: true}},
		// rebuild
		{"rebuild sent", inOp(PhaseRebuilding, OpRebuild, false), node("active"), want{kind: KindRebuild}},
		{"rebuild found under way after a crash", inOp(PhaseRebuilding, OpRebuild, false), node("deploying", targetAct, locked), want{kind: KindSave, phase: PhaseRebuilding}},
		{"rebuilding", inOp(PhaseRebuilding, OpRebuild, true), node("wait call-back", targetAct), want{kind: KindWait}},
		{"rebuilt", inOp(PhaseRebuilding, OpRebuild, true), node("active", powerOn), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"rebuilt, was stopped: power off again", inOp(PhaseRebuilding, OpRebuild, true, func(s *Server) { s.StopAfterRebuild = true }), node("active", powerOn), want{kind: KindSave, phase: PhasePoweringOff}},
		{"rebuild failed", inOp(PhaseRebuilding, OpRebuild, true), node("deploy failed"), want{KindSave, PhaseError, ReasonDeployFailed, true, false}},
		{"node deleted during a rebuild", inOp(PhaseRebuilding, OpRebuild, true), gone, want{KindSave, PhaseError, ReasonNodeDeleted, true, false}},
		{"node torn down during a rebuild", inOp(PhaseRebuilding, OpRebuild, true), node("available", noInstance), want{KindSave, PhaseError, ReasonNodeTornDown, true, false}},
		{"rebuild past its deadline", inOp(PhaseRebuilding, OpRebuild, true, overdue), node("wait call-back"), want{KindSave, PhaseError, ReasonRebuildTimeout, true, false}},
		// rescue
		{"rescue sent", inOp(PhaseRescuing, OpRescue, false), node("active"), want{kind: KindRescue}},
		{"rescuing", inOp(PhaseRescuing, OpRescue, true), node("rescue wait", targetAct), want{kind: KindWait}},
		{"rescued", inOp(PhaseRescuing, OpRescue, true), node("rescue"), want{kind: KindSave, phase: PhaseRescued, done: true}},
		{"rescue failed", inOp(PhaseRescuing, OpRescue, true), node("rescue failed"), want{KindSave, PhaseError, ReasonRescueFailed, true, false}},
		{"unrescue sent", inOp(PhaseUnrescuing, OpUnrescue, false), node("rescue"), want{kind: KindUnrescue}},
		{"unrescued", inOp(PhaseUnrescuing, OpUnrescue, true), node("active"), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"unrescue past its deadline, still in rescue", inOp(PhaseUnrescuing, OpUnrescue, true, overdue), node("rescue"), want{kind: KindSave, phase: PhaseRescued, done: true}},
		// resting: drift and power sync
		{"powered off out-of-band: SHUTOFF (S20)", up(PhaseActive, "", func(s *Server) { s.PowerSeen = PowerOn }), node("active", powerOff), want{kind: KindSave, phase: PhaseStopped}},
		{"powered on out-of-band: ACTIVE", up(PhaseStopped, "", func(s *Server) { s.PowerSeen = PowerOff }), node("active", powerOn), want{kind: KindSave, phase: PhaseActive}},
		{"power seen for the first time", up(PhaseActive, ""), node("active", powerOn), want{kind: KindSave, phase: PhaseActive}},
		{"power as seen: nothing to do", up(PhaseActive, "", func(s *Server) { s.PowerSeen = PowerOn }), node("active", powerOn), want{kind: KindWait}},
		{"power settling: wait", up(PhaseActive, "", func(s *Server) { s.PowerSeen = PowerOn }), node("active", powerOff, powering), want{kind: KindWait}},
		{"stopped node deleted", up(PhaseStopped, ""), gone, want{KindSave, PhaseError, ReasonNodeDeleted, false, false}},
		{"rescued node left rescue: ACTIVE", up(PhaseRescued, ""), node("active"), want{kind: KindSave, phase: PhaseActive}},
		{"rescued node torn down", up(PhaseRescued, ""), node("deleting"), want{KindSave, PhaseError, ReasonNodeTornDown, false, false}},
		// delete wins
		{"delete during a reboot", inOp(PhaseRebooting, OpReboot, true, deleted), node("active"), want{kind: KindSave, phase: PhaseDeleting}},
		{"delete during a rebuild", inOp(PhaseRebuilding, OpRebuild, true, deleted), node("deploying"), want{kind: KindSave, phase: PhaseDeleting}},
		{"delete with a stop pending", up(PhaseActive, OpStop, deleted), node("active"), want{kind: KindSave, phase: PhaseDeleting}},
		{"deleting a stopped server undeploys", up(PhaseStopped, "", deleted, func(s *Server) { s.Phase = PhaseDeleting }), node("active", powerOff), want{kind: KindUndeploy}},
		// os-resetState
		{"reset to error keeps the node", up(PhaseActive, OpReset, resetTo(ResetError)), node("active", powerOn), want{KindSave, PhaseError, ReasonResetState, true, false}},
		{"reset to error of a stopped server", up(PhaseStopped, OpReset, resetTo(ResetError)), node("active", powerOff), want{KindSave, PhaseError, ReasonResetState, true, false}},
		{"held in error: nothing to release", heldInError(""), node("active", powerOn), want{kind: KindWait}},
		{"held in error: reset to active", heldInError(OpReset, resetTo(ResetActive)), node("active", powerOn), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"held in error: reset to active, node not seen", heldInError(OpReset, resetTo(ResetActive)), NodeView{}, want{kind: KindWait}},
		{"held in error: reset to active, node in rescue", heldInError(OpReset, resetTo(ResetActive)), node("rescue", powerOn), want{kind: KindSave, phase: PhaseRescued, done: true}},
		{"held in error: reset to active, node off", heldInError(OpReset, resetTo(ResetActive)), node("active", powerOff), want{kind: KindSave, phase: PhaseStopped, done: true}},
		{"held in error: reset to error again", heldInError(OpReset, resetTo(ResetError)), node("active"), want{kind: KindSave, phase: PhaseError, reason: ReasonResetState, done: true}},
		{"held in error: rebuild starts", heldInError(OpRebuild), node("active", powerOn), want{kind: KindSave, phase: PhaseRebuilding}},
		{"held in error: rebuild of a node in rescue refused", heldInError(OpRebuild), node("rescue"), want{kind: KindSave, phase: PhaseError, reason: ReasonResetState, done: true}},
		{"held in error: rebuild waits for the node", heldInError(OpRebuild), NodeView{}, want{kind: KindWait}},
		{"held in error: node deleted", heldInError(OpReset, resetTo(ResetActive)), gone, want{KindSave, PhaseError, ReasonNodeDeleted, true, false}},
		{"held in error: delete releases", heldInError("", deleted), node("active", powerOn), want{kind: KindSave, phase: PhaseDeleting}},
		{"reset to active of a stopped server", up(PhaseStopped, OpReset, resetTo(ResetActive)), node("active", powerOff), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"reset to active of an active server", up(PhaseActive, OpReset, resetTo(ResetActive)), node("active", powerOn), want{kind: KindSave, phase: PhaseActive, done: true}},
		{"reset on a released ERROR server finishes", failedOp(OpReset, resetTo(ResetActive)), NodeView{}, want{kind: KindSave, phase: PhaseError, reason: ReasonDeployFailed, done: true}},
		{"rebuild on a released ERROR server finishes", failedOp(OpRebuild), NodeView{}, want{kind: KindSave, phase: PhaseError, reason: ReasonDeployFailed, done: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Decide(Input{Server: tt.s, Node: tt.v, Now: t0}, cfg())
			if a.Kind != tt.want.kind {
				t.Fatalf("kind = %v (%s), want %v", a.Kind, a.Why, tt.want.kind)
			}
			if a.Kind == KindReboot && a.Hard != tt.want.hard {
				t.Errorf("hard = %v, want %v", a.Hard, tt.want.hard)
			}
			if a.Kind != KindSave {
				return
			}
			n := a.Next
			if n.Phase != tt.want.phase {
				t.Errorf("phase = %s, want %s (%s)", n.Phase, tt.want.phase, a.Why)
			}
			if tt.want.reason != "" && (n.Fault == nil || n.Fault.Reason != tt.want.reason) {
				t.Errorf("fault = %+v, want %s", n.Fault, tt.want.reason)
			}
			if got := n.OpGen > 0 && !n.OpPending(); got != tt.want.done && tt.s.OpGen > 0 {
				t.Errorf("operation finished = %v, want %v", got, tt.want.done)
			}
			if !n.Phase.Stable() && !n.Deadline.After(t0) && n.Phase != PhaseDeleting {
				t.Errorf("non-stable phase %s without a deadline ahead (%v)", n.Phase, n.Deadline)
			}
			if n.Phase == PhaseError && (n.Fault == nil || n.Fault.Step == "" || n.Fault.Message == "") {
				t.Errorf("ERROR fault does not name its step (I5): %+v", n.Fault)
			}
			if len(a.Events) == 0 && n.Phase != tt.s.Phase {
				t.Errorf("a phase change without an event")
			}
		})
	}
}

func TestApplyOps(t *testing.T) {
	s := inOp(PhaseRebooting, OpReboot, false)
	if ap := Apply(s, Action{Kind: KindReboot}, Result{Outcome: OK}, t0, cfg()); ap.Next == nil || !ap.Next.OpSent || !ap.Stop {
		t.Errorf("reboot accepted: %+v", ap)
	}
	if ap := Apply(s, Action{Kind: KindReboot}, Result{Outcome: Rejected, Message: "soft rebooting not supported"}, t0, cfg()); ap.Next == nil || !ap.Next.OpFallback || ap.Next.Phase != PhaseRebooting {
		t.Errorf("soft reboot refused: want a hard one, got %+v", ap.Next)
	}
	if ap := Apply(s, Action{Kind: KindReboot, Hard: true}, Result{Outcome: Rejected}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseActive || ap.Next.OpPending() {
		t.Errorf("hard reboot refused: want the operation given up, got %+v", ap.Next)
	}
	if ap := Apply(s, Action{Kind: KindReboot}, Result{Outcome: Gone}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseError || ap.Next.Fault.Reason != ReasonNodeDeleted {
		t.Errorf("node gone: %+v", ap.Next)
	}
	if ap := Apply(s, Action{Kind: KindReboot}, Result{Outcome: Unreachable}, t0, cfg()); ap.Next != nil || !ap.IronicDown {
		t.Errorf("unreachable: retry, got %+v", ap)
	}
	r := inOp(PhaseRebuilding, OpRebuild, false)
	if ap := Apply(r, Action{Kind: KindRebuild}, Result{Outcome: Rejected}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseError || ap.Next.Fault.Reason != ReasonInvalidRequest {
		t.Errorf("rebuild refused: %+v", ap.Next)
	}
	q := inOp(PhaseRescuing, OpRescue, false)
	if ap := Apply(q, Action{Kind: KindRescue}, Result{Outcome: Rejected, Message: "no-rescue"}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseActive || ap.Next.OpPending() {
		t.Errorf("rescue refused: want back to active, got %+v", ap.Next)
	}
	d := srv(PhaseDeploying)
	if ap := Apply(d, Action{Kind: KindPowerOn}, Result{Outcome: OK}, t0, cfg()); ap.Next != nil || !ap.Stop {
		t.Errorf("power on after a deploy: look again, got %+v", ap)
	}
}

func TestDeployedNodePoweredOn(t *testing.T) {
	if a := Decide(Input{Server: srv(PhaseDeploying), Node: node("active", powerOff), Now: t0}, cfg()); a.Kind != KindPowerOn {
		t.Errorf("deployed and off: %v, want power on", a.Kind)
	}
	a := Decide(Input{Server: srv(PhaseDeploying), Node: node("active", powerOn), Now: t0}, cfg())
	if a.Kind != KindSave || a.Next.Phase != PhaseActive || a.Next.PowerSeen != PowerOn {
		t.Errorf("deployed and on: %v %+v", a.Kind, a.Next)
	}
	if a := Decide(Input{Server: srv(PhaseDeploying), Node: node("active"), Now: t0}, cfg()); a.Kind != KindSave || a.Next.Phase != PhaseActive {
		t.Errorf("deployed, power unknown: %v", a.Kind)
	}
}

func TestNovaDay2(t *testing.T) {
	tests := []struct {
		s                *Server
		status, vm, task string
		power            int
	}{
		{up(PhaseActive, OpReboot), "REBOOT", "active", "reboot_pending", PowerRunning},
		{up(PhaseActive, OpReboot, hardOp), "HARD_REBOOT", "active", "reboot_pending_hard", PowerRunning},
		{inOp(PhaseRebooting, OpReboot, true), "REBOOT", "active", "reboot_started", PowerRunning},
		{inOp(PhaseRebooting, OpReboot, true, hardOp), "HARD_REBOOT", "active", "reboot_started_hard", PowerRunning},
		{up(PhaseActive, OpStop), "ACTIVE", "active", "powering-off", PowerRunning},
		{inOp(PhasePoweringOff, OpStop, true), "ACTIVE", "active", "powering-off", PowerRunning},
		{up(PhaseStopped, ""), "SHUTOFF", "stopped", "", PowerShutdown},
		{up(PhaseStopped, OpStart), "SHUTOFF", "stopped", "powering-on", PowerShutdown},
		{inOp(PhasePoweringOn, OpStart, true), "SHUTOFF", "stopped", "powering-on", PowerShutdown},
		{up(PhaseActive, OpRebuild), "REBUILD", "active", "rebuilding", PowerRunning},
		{inOp(PhaseRebuilding, OpRebuild, true), "REBUILD", "active", "rebuild_spawning", PowerRunning},
		{inOp(PhaseRescuing, OpRescue, true), "ACTIVE", "active", "rescuing", PowerRunning},
		{up(PhaseRescued, ""), "RESCUE", "rescued", "", PowerRunning},
		{inOp(PhaseUnrescuing, OpUnrescue, true), "RESCUE", "rescued", "unrescuing", PowerRunning},
		{up(PhaseActive, "", func(s *Server) { s.PowerSeen = PowerOff }), "ACTIVE", "active", "", PowerShutdown},
	}
	for _, tt := range tests {
		got := Nova(tt.s)
		if got.Status != tt.status || got.VMState != tt.vm || got.TaskState != tt.task || !got.Visible {
			t.Errorf("%s (op %s pending %v): %+v, want %s/%s/%s", tt.s.Phase, tt.s.Op.Kind, tt.s.OpPending(), got, tt.status, tt.vm, tt.task)
		}
		if p := PowerState(tt.s); p != tt.power {
			t.Errorf("%s: power_state %d, want %d", tt.s.Phase, p, tt.power)
		}
	}
}

func TestAllowed(t *testing.T) {
	tests := []struct {
		s    *Server
		k    OpKind
		hard bool
		ok   bool
	}{
		{up(PhaseActive, ""), OpReboot, false, true},
		{up(PhaseStopped, ""), OpReboot, false, false},
		{up(PhaseStopped, ""), OpReboot, true, true},
		{up(PhaseActive, ""), OpStop, false, true},
		{up(PhaseStopped, ""), OpStop, false, false},
		{up(PhaseStopped, ""), OpStart, false, true},
		{up(PhaseActive, ""), OpStart, false, false},
		{up(PhaseActive, ""), OpRebuild, false, true},
		{up(PhaseStopped, ""), OpRebuild, false, true},
		{up(PhaseActive, ""), OpRescue, false, true},
		{up(PhaseRescued, ""), OpUnrescue, false, true},
		{up(PhaseActive, ""), OpUnrescue, false, false},
		{up(PhaseActive, OpStop), OpReboot, false, false},                         // one operation at a time
		{inOp(PhaseRebooting, OpReboot, true), OpReboot, true, false},             // task_state reboot_started
		{srv(PhaseDeploying), OpReboot, false, false},                             // vm_state building
		{srv(PhaseError, withFault(ReasonDeployFailed)), OpStop, false, false},    // vm_state error
		{srv(PhaseError, withFault(ReasonDeployFailed)), OpRebuild, false, false}, // no node to rebuild
		{heldInError(""), OpRebuild, false, true},                                 // reset to error: Nova rebuilds in ERROR
		{up(PhaseActive, OpReset, resetTo(ResetError)), OpRebuild, false, true},   // a rebuild right after a reset replaces it
		{up(PhaseActive, OpReset, resetTo(ResetError)), OpReboot, false, false},   // anything else waits for it
		{up(PhaseRescued, OpReset, resetTo(ResetError)), OpRebuild, false, false}, // not from rescue
	}
	for _, tt := range tests {
		err := Allowed(tt.s, tt.k, tt.hard)
		if (err == nil) != tt.ok {
			t.Errorf("Allowed(%s, op pending %v, %s hard=%v) = %v, want ok %v", tt.s.Phase, tt.s.OpPending(), tt.k, tt.hard, err, tt.ok)
		}
	}
	err := Allowed(srv(PhaseDeploying), OpReboot, false)
	if got, want := err.Message("abc"), "Cannot 'reboot' instance abc while it is in vm_state building"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}
