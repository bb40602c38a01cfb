package lifecycle

import "testing"

// TestWaitsOnIronic: the servers whose outcome the fast ticks watch.
func TestWaitsOnIronic(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Server
		want Transit
	}{
		{"pending", Server{Phase: PhasePending}, NoTransit},
		{"reserving", Server{Phase: PhaseReserving, NodeID: "n"}, NoTransit},
		{"deploy not yet asked", Server{Phase: PhaseDeploying, NodeID: "n"}, NoTransit},
		{"deploying", Server{Phase: PhaseDeploying, NodeID: "n", DeployRequested: true}, TransitDeploy},
		{"active", Server{Phase: PhaseActive, NodeID: "n"}, NoTransit},
		{"deleting", Server{Phase: PhaseDeleting, NodeID: "n"}, TransitTeardown},
		{"deleting, node let go", Server{Phase: PhaseDeleting}, NoTransit},
		{"releasing for a reschedule", Server{Phase: PhaseReleasing, NodeID: "n"}, TransitTeardown},
		{"error cleaning up", Server{Phase: PhaseError, NodeID: "n"}, NoTransit},
		{"deleted cleaning up", Server{Phase: PhaseDeleted, NodeID: "n"}, NoTransit},
		{"reboot sent", Server{Phase: PhaseRebooting, NodeID: "n", OpSent: true}, TransitPower},
		{"reboot not sent", Server{Phase: PhaseRebooting, NodeID: "n"}, NoTransit},
		{"powering off", Server{Phase: PhasePoweringOff, NodeID: "n", OpSent: true}, TransitPower},
		{"rebuilding", Server{Phase: PhaseRebuilding, NodeID: "n", OpSent: true}, TransitDeploy},
		{"rescuing", Server{Phase: PhaseRescuing, NodeID: "n", OpSent: true}, TransitRescue},
		{"unrescuing", Server{Phase: PhaseUnrescuing, NodeID: "n", OpSent: true}, TransitUnrescue},
		{"rebuild not sent", Server{Phase: PhaseRebuilding, NodeID: "n"}, NoTransit},
	} {
		if got := Awaits(&c.s); got != c.want || WaitsOnIronic(&c.s) != (c.want != NoTransit) {
			t.Errorf("%s: Awaits = %v, want %v", c.name, got, c.want)
		}
	}
}
