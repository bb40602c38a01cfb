// Package crash is the kill -9 suite (docs/DESIGN.md S9): the real `ingot serve`
// binary, built with -tags crashpoints, is killed with SIGKILL at every step
// boundary of a build and of a delete, restarted on the same database, and
// every server must converge as if nothing happened: no leak, no duplicate
// reservation, no accepted request lost (I6). It runs against the simulated
// Ironic (always) and the real one (when installed, see ironictest).
package crash

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// simSide runs a simulated Ironic (VIFs stored, so a leaked VIF shows)
// with n nodes of resource class rc (which can be rescued).
func simSide(t testing.TB, n int, rc string) (*ironicSide, []string) {
	t.Helper()
	sim := ironicsim.New(ironicsim.Options{DeployTime: 300 * time.Millisecond, UndeployTime: 100 * time.Millisecond,
		VIFMode: ironicsim.VIFModeStore, Seed: 1})
	nodes := sim.AddNodes(n, ironicsim.NodeSpec{ResourceClass: rc, Ports: 2, RescueInterface: "fake"})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return &ironicSide{url: srv.URL, timeout: 30 * time.Second}, nodes
}

// points is a sequence of crash points as INGOT_CRASH_AT names them
// ("<point>:<nth>"), from a log of every point reached.
func points(lines []string) []string {
	seen := map[string]int{}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		seen[l]++
		out = append(out, fmt.Sprintf("%s:%d", l, seen[l]))
	}
	return out
}

// learn runs one build and one delete without crashing and returns the
// step boundaries each went through.
func learn(t *testing.T, ir *ironicSide, rc string, nodes []string) (build, del []string) {
	t.Helper()
	in := newIngot(t, ir, rc, nodes)
	logPath := filepath.Join(in.dir, "points.log")
	in.run("INGOT_CRASH_LOG=" + logPath)
	id := in.create("learn")
	in.waitActive(id)
	nBuild := len(readLines(logPath))
	in.p.Stop()
	in.run("INGOT_CRASH_LOG=" + logPath)
	if code, err := in.call("DELETE", "/v2.1/servers/"+id, nil, nil); err != nil || code != http.StatusNoContent {
		t.Fatalf("delete: %d %v", code, err)
	}
	in.waitGone(id)
	lines := readLines(logPath)
	in.checkReleased(id)
	build, del = points(lines[:nBuild]), points(lines[nBuild:])
	if len(build) < 5 || len(del) < 2 {
		t.Fatalf("too few step boundaries seen: build %v, delete %v", build, del)
	}
	return build, del
}

// crashBuild kills ingot at point during a build, restarts it, and checks
// the server still becomes ACTIVE, then deletes it cleanly. It reports
// whether the point was reached.
func crashBuild(t *testing.T, ir *ironicSide, rc string, nodes []string, point string) bool {
	in := newIngot(t, ir, rc, nodes)
	p := in.run("INGOT_CRASH_AT=" + point)
	id, answered := in.tryCreate("crash-build")
	killed := killedBy9(t, p, ir.timeout)
	in.run()
	if !answered {
		// Killed before the 202 went out: the request may or may not have
		// been recorded; a user would look and find out.
		id = in.findServer("crash-build")
		if id == "" {
			t.Logf("%s: killed before the create was answered or recorded", point)
			return killed
		}
	}
	in.waitActive(id)
	in.deleteAndCheck(id)
	return killed
}

// crashDelete builds a server, then kills ingot at point during its
// delete, restarts it and checks the delete completes and releases all.
func crashDelete(t *testing.T, ir *ironicSide, rc string, nodes []string, point string) bool {
	in := newIngot(t, ir, rc, nodes)
	in.run()
	id := in.create("crash-delete")
	in.waitActive(id)
	in.p.Stop()
	p := in.run("INGOT_CRASH_AT=" + point)
	code, err := in.call("DELETE", "/v2.1/servers/"+id, nil, nil)
	if err == nil && code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	killed := killedBy9(t, p, ir.timeout)
	in.run()
	if err != nil {
		// The answer was lost with the process: the user asks again.
		in.deleteAndCheck(id)
		return killed
	}
	in.waitGone(id) // the accepted delete survived the crash (I6)
	in.checkReleased(id)
	return killed
}

// runPoints runs f for every point (in parallel, as -parallel allows) and
// requires that the crash happened at (at least) minShare of them. Where
// every point must be reached (minShare 1), a run that did not reach its
// point (a busy machine let a tick's step and a work item interleave
// otherwise than in the learning run) is run once more.
func runPoints(t *testing.T, kind string, pts []string, minShare float64,
	f func(t *testing.T, point string) bool) {
	reached := make(chan bool, len(pts))
	t.Run(kind, func(t *testing.T) {
		for _, pt := range pts {
			t.Run(strings.ReplaceAll(pt, ":", "#"), func(t *testing.T) {
				t.Parallel()
				ok := f(t, pt)
				if !ok && minShare == 1 && !t.Failed() {
					t.Logf("%s not reached: the run took another path; once more", pt)
					ok = f(t, pt)
				}
				reached <- ok
			})
		}
	})
	close(reached)
	n := 0
	for r := range reached {
		if r {
			n++
		}
	}
	t.Logf("%s: killed at %d of %d step boundaries", kind, n, len(pts))
	if float64(n) < minShare*float64(len(pts)) {
		t.Errorf("%s: the crash point was reached in only %d of %d cases", kind, n, len(pts))
	}
}

// TestKill9Sim kills ingot at every step boundary of a build and of a
// delete against the simulated Ironic (out of process, over HTTP).
func TestKill9Sim(t *testing.T) {
	const rc = "baremetal"
	ir, nodes := simSide(t, 2, rc)
	build, del := learn(t, ir, rc, nodes)
	t.Logf("build step boundaries: %v", build)
	t.Logf("delete step boundaries: %v", del)
	// Each case has its own simulator: cases run in parallel.
	runPoints(t, "build", build, 1, func(t *testing.T, pt string) bool {
		ir, nodes := simSide(t, 2, rc)
		return crashBuild(t, ir, rc, nodes, pt)
	})
	runPoints(t, "delete", del, 1, func(t *testing.T, pt string) bool {
		ir, nodes := simSide(t, 2, rc)
		return crashDelete(t, ir, rc, nodes, pt)
	})
}

// TestKill9Real does the same against a real Ironic (skipped when none is
// installed, unless INGOT_TEST_IRONIC=1). The cases share one Ironic; each
// has its own nodes, kept apart by resource class.
func TestKill9Real(t *testing.T) {
	if testing.Short() {
		t.Skip("real Ironic: not in -short")
	}
	env := ironictest.StartReal(t, ironictest.RealOptions{})
	ir := &ironicSide{url: env.URL, real: true, timeout: 90 * time.Second}
	var next atomic.Int32 // cases enrol their nodes in parallel
	nodesFor := func(t *testing.T) (string, []string) {
		rc := fmt.Sprintf("crash-%d", next.Add(1))
		return rc, env.EnrollNodes(t, 2, ironictest.NodeSpec{ResourceClass: rc})
	}
	rc, nodes := nodesFor(t)
	build, del := learn(t, ir, rc, nodes)
	t.Logf("build step boundaries: %v", build)
	t.Logf("delete step boundaries: %v", del)
	// Timing on a real Ironic may vary a boundary's count (a lock seen one
	// tick more or less): most, not all, points must be reached.
	runPoints(t, "build", build, 0.75, func(t *testing.T, pt string) bool {
		rc, nodes := nodesFor(t)
		return crashBuild(t, ir, rc, nodes, pt)
	})
	runPoints(t, "delete", del, 0.75, func(t *testing.T, pt string) bool {
		rc, nodes := nodesFor(t)
		return crashDelete(t, ir, rc, nodes, pt)
	})
}

// TestKill9RandomInstants kills ingot at seeded random instants while
// three servers build and then while they are deleted.
func TestKill9RandomInstants(t *testing.T) {
	const rc = "baremetal"
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("INGOT_CRASH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("INGOT_CRASH_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay: INGOT_CRASH_SEED=%d go test ./test/crash -run TestKill9RandomInstants)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	ir, nodes := simSide(t, 4, rc)
	in := newIngot(t, ir, rc, nodes)
	in.run()
	var ids []string
	for i := range 3 {
		ids = append(ids, in.create(fmt.Sprintf("r%d", i)))
	}
	killAtRandom := func() {
		for range 4 {
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond) // the random instant
			in.p.Kill()
			in.run()
		}
	}
	killAtRandom()
	for _, id := range ids {
		in.waitActive(id)
	}
	for _, id := range ids {
		if code, err := in.call("DELETE", "/v2.1/servers/"+id, nil, nil); err != nil || code != http.StatusNoContent {
			t.Fatalf("delete %s: %d %v", id, code, err)
		}
	}
	killAtRandom()
	for _, id := range ids {
		in.waitGone(id)
	}
	in.checkReleased(ids...)
}
