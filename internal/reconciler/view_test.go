package reconciler

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
		if got := classify(state); got != w {
			t.Errorf("classify(%q) = %v, want %v", state, got, w)
		}
	}
}

func TestToView(t *testing.T) {
	const us, other = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	n := ironic.Node{UUID: "n", InstanceUUID: us, ProvisionState: "wait call-back", TargetProvisionState: "active", Reservation: "c1", Maintenance: true, LastError: "e"}
	v := toView(n, us)
	if v.State != lifecycle.NodeDeployWaiting || v.Holder != lifecycle.HeldByUs || !v.Settling || !v.Locked || !v.Maintenance || v.LastError != "e" || v.Shown != "wait call-back" {
		t.Errorf("view = %+v", v)
	}
	n.InstanceUUID = other
	if v := toView(n, us); v.Holder != lifecycle.HeldByOther || v.Other != other {
		t.Errorf("foreign view = %+v", v)
	}
	n.InstanceUUID, n.TargetProvisionState, n.Reservation = "", "", ""
	if v := toView(n, us); v.Holder != lifecycle.HeldByNobody || v.Settling || v.Locked {
		t.Errorf("free view = %+v", v)
	}
}
