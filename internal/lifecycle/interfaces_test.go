package lifecycle

import (
	"slices"
	"testing"
	"time"
)

// ifaceOp is a server at rest in p with an interface operation k on
// network "net-2" pending.
func ifaceOp(p Phase, k OpKind, mut ...func(*Server)) *Server {
	return up(p, k, append([]func(*Server){func(s *Server) { s.Op.Network = "net-2" }}, mut...)...)
}

// inIface is a server in interface phase p (op k), its deadline ahead.
func inIface(p Phase, k OpKind, mut ...func(*Server)) *Server {
	s := inOp(p, k, false, func(s *Server) { s.Op.Network, s.Op.Port = "net-2", "port-2" })
	for _, m := range mut {
		m(s)
	}
	return s
}

var rollingBack = func(s *Server) {
	s.OpFault = &Fault{Reason: ReasonVIFAttachFailed, Message: "no free port", Step: StepAttachInterface, At: t0}
}

func TestDecideInterfaces(t *testing.T) {
	stopped := func(s *Server) { s.PowerSeen = PowerOff }
	tests := []struct {
		name   string
		s      *Server
		v      NodeView
		kind   Kind
		phase  Phase  // KindSave
		reason Reason // KindSave to error, or the OpFault of a roll-back
		done   bool
	}{
		{"attach starts from active", ifaceOp(PhaseActive, OpAttachInterface), node("active", powerOn), KindSave, PhaseAttachingInterface, "", false},
		{"attach starts from stopped", ifaceOp(PhaseStopped, OpAttachInterface, stopped), node("active", powerOff), KindSave, PhaseAttachingInterface, "", false},
		{"attach refused in rescue", ifaceOp(PhaseRescued, OpAttachInterface), node("rescue"), KindSave, PhaseRescued, "", true},
		{"detach starts", ifaceOp(PhaseActive, OpDetachInterface), node("active", powerOn), KindSave, PhaseDetachingInterface, "", false},
		{"attach sends", inIface(PhaseAttachingInterface, OpAttachInterface), node("active", powerOn), KindAttachInterface, "", "", false},
		{"detach sends", inIface(PhaseDetachingInterface, OpDetachInterface), node("active", powerOn), KindDetachInterface, "", "", false},
		{"roll-back detaches", inIface(PhaseDetachingInterface, OpAttachInterface, rollingBack), node("active", powerOn), KindDetachInterface, "", "", false},
		{"attach waits unobserved", inIface(PhaseAttachingInterface, OpAttachInterface), unobserved, KindWait, "", "", false},
		{"attach past its deadline rolls back", inIface(PhaseAttachingInterface, OpAttachInterface, overdue), node("active", powerOn), KindSave, PhaseDetachingInterface, ReasonVIFAttachFailed, false},
		{"detach past its deadline gives up", inIface(PhaseDetachingInterface, OpDetachInterface, overdue), node("active", powerOn), KindSave, PhaseActive, "", true},
		{"roll-back past its deadline gives up stopped", inIface(PhaseDetachingInterface, OpAttachInterface, rollingBack, overdue, stopped), node("active", powerOff), KindSave, PhaseStopped, "", true},
		{"node gone during attach", inIface(PhaseAttachingInterface, OpAttachInterface), gone, KindSave, PhaseError, ReasonNodeDeleted, true},
		{"node torn down during detach", inIface(PhaseDetachingInterface, OpDetachInterface), node("cleaning", func(v *NodeView) { v.Holder = HeldByNobody }), KindSave, PhaseError, ReasonNodeTornDown, true},
		{"a port left by a detach is freed at rest", up(PhaseActive, "", func(s *Server) { s.Detaching = []string{"net-2"} }), node("active", powerOn), KindDetachInterface, "", "", false},
		{"an operation goes before the background detach", up(PhaseActive, OpReboot, func(s *Server) { s.Detaching = []string{"net-2"} }), node("active", powerOn), KindSave, PhaseRebooting, "", false},
		{"delete wins over an attach", inIface(PhaseAttachingInterface, OpAttachInterface, func(s *Server) {
			s.Desired, s.DeleteRequestedAt = DesiredDeleted, t0
		}), node("active", powerOn), KindSave, PhaseDeleting, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Decide(Input{Server: tt.s, Node: tt.v, Now: t0}, cfg())
			if a.Kind != tt.kind {
				t.Fatalf("kind = %v (%s), want %v", a.Kind, a.Why, tt.kind)
			}
			if a.Kind != KindSave {
				return
			}
			n := a.Next
			if n.Phase != tt.phase {
				t.Errorf("phase = %s, want %s (%s)", n.Phase, tt.phase, a.Why)
			}
			switch {
			case n.Phase == PhaseError && (n.Fault == nil || n.Fault.Reason != tt.reason):
				t.Errorf("fault = %+v, want %s", n.Fault, tt.reason)
			case n.Phase == PhaseDetachingInterface && tt.reason != "" && (n.OpFault == nil || n.OpFault.Reason != tt.reason):
				t.Errorf("op fault = %+v, want %s", n.OpFault, tt.reason)
			}
			if got := !n.OpPending(); got != tt.done && n.Phase != PhaseDeleting && tt.s.OpGen > 0 {
				t.Errorf("operation finished = %v, want %v", got, tt.done)
			}
			if !n.Phase.Stable() && !n.Deadline.After(t0) && n.Phase != PhaseDeleting {
				t.Errorf("non-stable phase %s without a deadline ahead (%v)", n.Phase, n.Deadline)
			}
			if n.Phase == PhaseAttachingInterface && !n.PortsAllocated {
				t.Errorf("attach entered without PortsAllocated (record before act)")
			}
			if st := Nova(n); (n.Phase == PhaseAttachingInterface || n.Phase == PhaseDetachingInterface) && st.TaskState != "" {
				t.Errorf("task_state %q during an interface operation; Nova leaves it alone", st.TaskState)
			}
		})
	}
}

func TestApplyInterfaces(t *testing.T) {
	attaching := inIface(PhaseAttachingInterface, OpAttachInterface)
	if ap := Apply(attaching, Action{Kind: KindAttachInterface}, Result{Outcome: OK}, t0, cfg()); ap.Next == nil ||
		ap.Next.Phase != PhaseActive || ap.Next.OpPending() || ap.Next.OpFault != nil || !ap.Stop {
		t.Errorf("attach done: %+v", ap.Next)
	} else if got := ap.Next.Networks(); !slices.Equal(got, append(slices.Clone(attaching.Spec.Networks), "net-2")) {
		t.Errorf("networks after the attach: %v", got)
	}
	for _, o := range []Outcome{Rejected, Taken, Exhausted} {
		ap := Apply(attaching, Action{Kind: KindAttachInterface}, Result{Outcome: o, Message: "no"}, t0, cfg())
		if ap.Next == nil || ap.Next.Phase != PhaseDetachingInterface || ap.Next.OpFault == nil || !ap.Next.OpPending() || !ap.Next.Deadline.After(t0) {
			t.Errorf("attach %v: want the roll-back, got %+v", o, ap.Next)
		}
		if o == Exhausted && ap.Next.OpFault.Reason != ReasonNetworkAllocationFailed {
			t.Errorf("exhausted: op fault %+v", ap.Next.OpFault)
		}
	}
	if ap := Apply(attaching, Action{Kind: KindAttachInterface}, Result{Outcome: Transient}, t0, cfg()); ap.Next != nil || !ap.Stop {
		t.Errorf("transient: %+v", ap)
	}
	if ap := Apply(attaching, Action{Kind: KindAttachInterface}, Result{Outcome: Gone}, t0, cfg()); ap.Next == nil || ap.Next.Phase != PhaseError {
		t.Errorf("gone: %+v", ap.Next)
	}
	back := inIface(PhaseDetachingInterface, OpAttachInterface, rollingBack)
	ap := Apply(back, Action{Kind: KindDetachInterface}, Result{Outcome: OK}, t0, cfg())
	if ap.Next == nil || ap.Next.Phase != PhaseActive || ap.Next.OpPending() || ap.Next.OpFault == nil || ap.Events[0].Result != ResultError {
		t.Errorf("roll-back done: %+v %+v", ap.Next, ap.Events)
	} else if got := ap.Next.Networks(); !slices.Equal(got, back.Spec.Networks) {
		t.Errorf("networks after the roll-back: %v, want %v", got, back.Spec.Networks)
	}
	detach := inIface(PhaseDetachingInterface, OpDetachInterface, func(s *Server) { s.Spec.Networks = []string{"net-1", "net-2"} })
	ap = Apply(detach, Action{Kind: KindDetachInterface}, Result{Outcome: OK}, t0.Add(time.Second), cfg())
	if ap.Next == nil || ap.Next.OpPending() || ap.Next.OpFault != nil || ap.Events[0].Result != ResultSuccess {
		t.Errorf("detach done: %+v %+v", ap.Next, ap.Events)
	} else if got := ap.Next.Networks(); !slices.Equal(got, []string{"net-1"}) || !ap.Next.NetsSet {
		t.Errorf("networks after the detach: %v", got)
	}
	left := up(PhaseActive, "", func(s *Server) { s.Detaching = []string{"net-2", "net-3"} })
	if !left.NeedsWork() || left.DetachPort() != "net-2" {
		t.Errorf("a server with ports left to free: needs work %v, network %s", left.NeedsWork(), left.DetachPort())
	}
	if ap := Apply(left, Action{Kind: KindDetachInterface}, Result{Outcome: Unreachable}, t0, cfg()); ap.Next != nil {
		t.Errorf("background detach unreachable: %+v", ap.Next)
	}
	if ap := Apply(left, Action{Kind: KindDetachInterface}, Result{Outcome: OK}, t0, cfg()); ap.Next == nil || !slices.Equal(ap.Next.Detaching, []string{"net-3"}) {
		t.Errorf("background detach done: %+v", ap.Next)
	}
	over := Decide(Input{Server: inIface(PhaseDetachingInterface, OpDetachInterface, overdue), Node: node("active", powerOn), Now: t0}, cfg())
	if over.Next == nil || !slices.Equal(over.Next.Detaching, []string{"port-2"}) || slices.Contains(over.Next.Networks(), "net-2") {
		t.Errorf("detach past its deadline: %+v", over.Next)
	}
	a := inIface(PhaseAttachingInterface, OpAttachInterface, func(s *Server) { s.Op.FixedIP, s.Op.UserPort = "192.0.2.9", "port-1" })
	if a.PortSlot("net-2") != "port-2" || a.PortSlot("net-1") != "" || up(PhaseActive, "").PortSlot("net-2") != "" {
		t.Errorf("slots: %q %q", a.PortSlot("net-2"), a.PortSlot("net-1"))
	}
	if n := a.Attaching(); n.Spec.FixedIPs["net-2"] != "192.0.2.9" || n.Spec.UserPorts["net-2"] != "port-1" || a.Spec.FixedIPs != nil {
		t.Errorf("Attaching: %+v (original %+v)", n.Spec, a.Spec)
	}
	built := inIface(PhaseAttachingInterface, OpAttachInterface, func(s *Server) {
		s.Spec.UserPorts, s.Spec.FixedIPs = map[string]string{"net-2": "builds-port"}, map[string]string{"net-2": "192.0.2.1"}
	})
	if n := built.Attaching(); n.Spec.UserPorts != nil || n.Spec.FixedIPs != nil {
		t.Errorf("an attach took the build's port or address on its network: %+v", n.Spec)
	}
}
