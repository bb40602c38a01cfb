package reconciler

import (
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// classify reads Ironic's provision state into the lifecycle's closed
// vocabulary. It is the one place that knows Ironic's spelling; a state it
// does not know is NodeUnexpected, which every decision bounds by a deadline.
func classify(state string) lifecycle.NodeState {
	switch state {
	case ironic.StateAvailable:
		return lifecycle.NodeAvailable
	case ironic.StateDeploying:
		return lifecycle.NodeDeploying
	case ironic.StateWaitCallback, ironic.StateDeployHold:
		return lifecycle.NodeDeployWaiting
	case ironic.StateActive:
		return lifecycle.NodeActive
	case ironic.StateDeployFailed:
		return lifecycle.NodeDeployFailed
	case ironic.StateError, ironic.StateRescueFailed, ironic.StateUnrescueFail, ironic.StateServiceFailed:
		return lifecycle.NodeFailed
	case ironic.StateDeleting, ironic.StateCleaning, ironic.StateCleanWait, ironic.StateCleanHold:
		return lifecycle.NodeTearingDown
	case ironic.StateCleanFailed:
		return lifecycle.NodeCleanFailed
	case ironic.StateEnroll, ironic.StateManageable, ironic.StateInspectFailed, ironic.StateAdoptFailed:
		return lifecycle.NodeIdle
	case ironic.StateVerifying, ironic.StateInspecting, ironic.StateInspectWait, ironic.StateAdopting,
		ironic.StateServicing, ironic.StateServiceWait:
		return lifecycle.NodeBusy
	case ironic.StateRescue, ironic.StateRescuing, ironic.StateRescueWait, ironic.StateUnrescuing:
		return lifecycle.NodeRescue
	}
	return lifecycle.NodeUnexpected
}

// toView is what the lifecycle sees of node n, from server's side.
func toView(n ironic.Node, server string) lifecycle.NodeView {
	v := lifecycle.NodeView{
		State: classify(n.ProvisionState), Settling: n.TargetProvisionState != "", Maintenance: n.Maintenance,
		Locked: n.Reservation != "", LastError: n.LastError, Shown: n.ProvisionState,
		PowerSettling: n.TargetPowerState != "",
	}
	switch n.PowerState {
	case ironic.PowerOn:
		v.Power = lifecycle.PowerOn
	case ironic.PowerOff:
		v.Power = lifecycle.PowerOff
	}
	switch n.InstanceUUID {
	case "":
		v.Holder = lifecycle.HeldByNobody
	case server:
		v.Holder = lifecycle.HeldByUs
	default:
		v.Holder, v.Other = lifecycle.HeldByOther, n.InstanceUUID
	}
	return v
}
