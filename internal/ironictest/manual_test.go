package ironictest

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
)

// TestSimManualClock: with a manual clock nothing moves until the test
// advances it; the enrolment helpers still work.
func TestSimManualClock(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	env := StartSim(t, SimOptions{Clock: clk, DeployTime: time.Minute})
	id := env.EnrollNode(t, NodeSpec{Name: "m"})
	deploy(t, env, id)
	if n := env.GetNode(t, id); n["provision_state"] != "deploying" {
		t.Fatalf("before the clock moves: %v", n["provision_state"])
	}
	clk.Advance(time.Minute)
	env.WaitProvisionState(t, id, "active", time.Second)
}
