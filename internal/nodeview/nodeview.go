// Package nodeview reads Ironic's nodes into the lifecycle's closed
// vocabulary, for the reconciler and the scheduler. Next to the adapter
// (internal/ironic) that defines them, it is the one place that knows how
// Ironic spells its provision and power states.
package nodeview

import (
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Classify reads Ironic's provision state into the lifecycle's closed
// vocabulary; a state it does not know is NodeUnexpected, which every
// decision bounds by a deadline.
func Classify(state string) lifecycle.NodeState {
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

// Of is what the lifecycle sees of node n, from server's side.
func Of(n ironic.Node, server string) lifecycle.NodeView {
	v := lifecycle.NodeView{
		State: Classify(n.ProvisionState), Settling: n.TargetProvisionState != "", Maintenance: n.Maintenance,
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

// Returning reports whether node n is on its way back to available by
// itself (being undeployed or cleaned, not in maintenance), so a build may
// wait for it rather than fail.
func Returning(n ironic.Node) bool {
	return Classify(n.ProvisionState) == lifecycle.NodeTearingDown && !n.Maintenance
}

// waitStates are the provision states a node waits in while Ironic works,
// worth a filtered list when several watched nodes show them; a node in
// any other state (active with a power change under way, available just
// before a deploy) is fetched alone, since its state's list is the fleet.
var waitStates = map[string]bool{
	ironic.StateDeploying: true, ironic.StateWaitCallback: true, ironic.StateDeleting: true,
	ironic.StateCleaning: true, ironic.StateCleanWait: true, ironic.StateRescuing: true,
	ironic.StateRescueWait: true, ironic.StateUnrescuing: true,
}

// transitStates are the states Ironic shows first while it carries out a
// transition a server waits on (lifecycle.Awaits).
var transitStates = map[lifecycle.Transit]string{
	lifecycle.TransitDeploy: ironic.StateDeploying, lifecycle.TransitTeardown: ironic.StateDeleting,
	lifecycle.TransitRescue: ironic.StateRescuing, lifecycle.TransitUnrescue: ironic.StateUnrescuing,
}

// ListState is the provision state to list the node of s in while s waits
// on Ironic: the one v shows when the node waits in it, or, when v does not
// show one (it predates the call just made), the one the call leads to.
// "" means the node is fetched alone.
func ListState(s *lifecycle.Server, v lifecycle.NodeView) string {
	switch {
	case v.PowerSettling:
		return "" // stays active
	case v.Observed() && waitStates[v.Shown]:
		return v.Shown
	}
	return transitStates[lifecycle.Awaits(s)]
}
