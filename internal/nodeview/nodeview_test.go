package nodeview

import (
	"testing"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

func TestClassify(t *testing.T) {
	want := map[string]lifecycle.NodeState{
		"available": lifecycle.NodeAvailable, "deploying": lifecycle.NodeDeploying,
		"wait call-back": lifecycle.NodeDeployWaiting, "deploy hold": lifecycle.NodeDeployWaiting,
		"active": lifecycle.NodeActive, "deploy failed": lifecycle.NodeDeployFailed,
		"error": lifecycle.NodeFailed, "rescue failed": lifecycle.NodeFailed, "unrescue failed": lifecycle.NodeFailed,
		"service failed": lifecycle.NodeFailed,
		"deleting":       lifecycle.NodeTearingDown, "cleaning": lifecycle.NodeTearingDown, "clean wait": lifecycle.NodeTearingDown,
		"clean hold": lifecycle.NodeTearingDown, "clean failed": lifecycle.NodeCleanFailed,
		"enroll": lifecycle.NodeIdle, "manageable": lifecycle.NodeIdle, "inspect failed": lifecycle.NodeIdle, "adopt failed": lifecycle.NodeIdle,
		"verifying": lifecycle.NodeBusy, "inspecting": lifecycle.NodeBusy, "inspect wait": lifecycle.NodeBusy,
		"adopting": lifecycle.NodeBusy, "servicing": lifecycle.NodeBusy, "service wait": lifecycle.NodeBusy,
		"rescue": lifecycle.NodeRescue, "rescuing": lifecycle.NodeRescue, "rescue wait": lifecycle.NodeRescue, "unrescuing": lifecycle.NodeRescue,
		"": lifecycle.NodeUnexpected, "levitating": lifecycle.NodeUnexpected,
	}
	for state, w := range want {
		if got := Classify(state); got != w {
			t.Errorf("Classify(%q) = %v, want %v", state, got, w)
		}
	}
}

func TestToView(t *testing.T) {
	const us, other = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	n := ironic.Node{UUID: "n", InstanceUUID: us, ProvisionState: "wait call-back", TargetProvisionState: "active", Reservation: "c1", Maintenance: true, LastError: "e"}
	v := Of(n, us)
	if v.State != lifecycle.NodeDeployWaiting || v.Holder != lifecycle.HeldByUs || !v.Settling || !v.Locked || !v.Maintenance || v.LastError != "e" || v.Shown != "wait call-back" {
		t.Errorf("view = %+v", v)
	}
	n.InstanceUUID = other
	if v := Of(n, us); v.Holder != lifecycle.HeldByOther || v.Other != other {
		t.Errorf("foreign view = %+v", v)
	}
	n.InstanceUUID, n.TargetProvisionState, n.Reservation = "", "", ""
	if v := Of(n, us); v.Holder != lifecycle.HeldByNobody || v.Settling || v.Locked {
		t.Errorf("free view = %+v", v)
	}
}

func TestReturning(t *testing.T) {
	for state, want := range map[string]bool{"deleting": true, "cleaning": true, "clean wait": true, "clean hold": true,
		"available": false, "clean failed": false, "active": false, "manageable": false} {
		if got := Returning(ironic.Node{ProvisionState: state}); got != want {
			t.Errorf("Returning(%q) = %v, want %v", state, got, want)
		}
	}
	if Returning(ironic.Node{ProvisionState: "cleaning", Maintenance: true}) {
		t.Error("a node in maintenance is not on its way back")
	}
}

func TestListState(t *testing.T) {
	deploying := &lifecycle.Server{Phase: lifecycle.PhaseDeploying, NodeID: "n", DeployRequested: true}
	unrescuing := &lifecycle.Server{Phase: lifecycle.PhaseUnrescuing, NodeID: "n", OpSent: true}
	rebooting := &lifecycle.Server{Phase: lifecycle.PhaseRebooting, NodeID: "n", OpSent: true}
	for _, c := range []struct {
		name string
		s    *lifecycle.Server
		v    lifecycle.NodeView
		want string
	}{
		{"seen waiting", deploying, Of(ironic.Node{ProvisionState: "wait call-back"}, ""), "wait call-back"},
		{"seen before the call", deploying, Of(ironic.Node{ProvisionState: "available"}, ""), "deploying"},
		{"not seen", unrescuing, lifecycle.NodeView{}, "unrescuing"},
		{"power change", rebooting, Of(ironic.Node{ProvisionState: "active", TargetPowerState: "rebooting"}, ""), ""},
		{"deploying, power settling", deploying, Of(ironic.Node{ProvisionState: "deploying", TargetPowerState: "power on"}, ""), ""},
	} {
		if got := ListState(c.s, c.v); got != c.want {
			t.Errorf("%s: ListState = %q, want %q", c.name, got, c.want)
		}
	}
}
