package scenario

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestIronicCallsPerBuild pins docs/DESIGN.md §5's load target: Ironic calls do not
// grow with the number of builds waiting on a deploy. One bulk list per tick
// serves every server; per-server calls are only the actions due (reserve,
// VIF attach, deploy), never a GET per building server per tick.
func TestIronicCallsPerBuild(t *testing.T) {
	const n = 20
	e := newEnv(t, envOpts{nodes: n, deployTime: 2 * time.Second})
	e.sim.ResetCounts()
	var ids []string
	for i := range n {
		ids = append(ids, e.create(fmt.Sprintf("load-%d", i)))
	}
	for _, id := range ids {
		e.WaitStatus(id, "ACTIVE", 20*time.Second)
	}
	counts := e.sim.Counts()
	var keys []string
	total := 0
	for k, v := range counts {
		keys = append(keys, fmt.Sprintf("%s=%d", k, v))
		total += v
	}
	sort.Strings(keys)
	t.Logf("Ironic calls for %d builds: %d (%.1f per build): %s", n, total, float64(total)/n, strings.Join(keys, " "))
	perServer := total - counts["GET /v1/nodes"]
	if got := counts["GET /v1/ports"]; got > n+2 {
		t.Errorf("%d port listings for %d builds: want one per build and the scheduler's shared one", got, n)
	}
	// Per build: reserve PATCH, the node's ports, VIF attach, deploy
	// PATCH+PUT = 5 (the scheduler's bulk port listing is shared; the
	// deploy reads no instance_info when it removes no key); the fake
	// deploy leaves the node off, which adds the power-on PUT and the one
	// look at the node right after it (reconciler: it saves the build a
	// tick) = 7, plus a few retries; a per-server poll during the 2 s deploy
	// at the fast interval would add ~4 per build.
	if per := float64(perServer) / n; per > 8 {
		t.Errorf("%.1f per-server Ironic calls per build, want <= 8", per)
	}
	// A retry after a conflict with the simulator's node lock (a loaded
	// machine) adds one; a per-server poll would add ~4 per build.
	if got := counts["GET /v1/nodes/{node}"]; got > n+n/5 {
		t.Errorf("%d single-node GETs for %d builds (the look after the power-on is one, plus a few retries): the bulk view is not used, or the deploy reads instance_info", got, n)
	}
}
