package bench

import (
	"context"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/poll"
)

func counts(t *testing.T, env, def string) []int {
	v := os.Getenv(env)
	if v == "" {
		v = def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("%s: %q is not a list of counts", env, v)
		}
		out = append(out, n)
	}
	return out
}

// builds runs n concurrent builds through a fresh ingot at the default
// cadence behind the counting proxy, and prints the Ironic calls and the
// time from Ironic's active to the server's ACTIVE.
func builds(t *testing.T, label, ironicURL, rc string, n int) {
	notified(t, label, ironicURL, rc, n, "")
}

// notified is builds with ingot reading Ironic's notifications from
// busURL (none when empty).
func notified(t *testing.T, label, ironicURL, rc string, n int, busURL string) {
	c, proxied := newCounter(t, ironicURL)
	g := startIngot(t, proxied, rc, func(c *config.Config) { c.Ironic.Notifications.URL = busURL })
	g.ticks.waitFull(t) // the first full tick, on an empty fleet
	if busURL != "" {
		g.listen(t)
		g.ticks.waitFulls(t, 2) // the resync the connection asks for
	}
	c.warmed(t)
	c.reset()
	start := time.Now()
	ids := g.create(t, n)
	g.waitActive(t, n, 20*time.Minute)
	wall := time.Since(start)
	routes, total, polls := c.snapshot()
	lat, each := g.toActive(t, ironicURL, ids)
	t.Logf("%s, %d concurrent builds: all ACTIVE in %s (each create→ACTIVE median %s, max %s); Ironic calls %d = %.1f per build, %.2f/s (polling %d = %.2f/s; Nova's polling %.1f/s); active→ACTIVE median %s p95 %s; %s",
		label, n, wall.Round(time.Millisecond), quantile(each, 0.5).Round(time.Millisecond), each[len(each)-1].Round(time.Millisecond),
		total, float64(total)/float64(n), float64(total)/wall.Seconds(),
		polls, float64(polls)/wall.Seconds(), float64(n)/2, quantile(lat, 0.5).Round(time.Millisecond),
		quantile(lat, 0.95).Round(time.Millisecond), g.ticks)
	t.Logf("%s, %d builds: busiest routes %s", label, n, topRoutes(routes, 8))
	t.Logf("%s, %d builds: slowest answer per route (ms) %s", label, n, c.slowRoutes(6))
	if tr := c.traced(); len(tr) > 0 {
		t.Logf("%s, %d builds: requests in order (create at +0ms = %s):\n%s", label, n, start.UTC().Format("15:04:05.000"), strings.Join(tr, "\n"))
	}
}

// listen runs g's consumer of Ironic's notifications until the test ends,
// and waits for it to connect.
func (g *ingot) listen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.a.RunNotifications(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	poll.Until(t, 30*time.Second, "the notification consumer's connection", func() (bool, string) {
		return g.a.Notifications.Status().Connected, ""
	})
}

// TestBenchBuildsSim: INGOT_BENCH=1 [INGOT_BENCH_BUILDS=1,10,100,1000].
func TestBenchBuildsSim(t *testing.T) {
	wanted(t)
	for _, n := range counts(t, "INGOT_BENCH_BUILDS", "1,10,100,1000") {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			sim := ironicsim.New(ironicsim.Options{DeployTime: 10 * time.Second, UndeployTime: time.Second, Seed: 1})
			// Deploys take 10–12 s, spread evenly, so that they end at every
			// phase of the tick (a fixed time would end each one at the same
			// point of the cadence, which the kick of the creates sets).
			nodes := n + n/10 + 1
			for i := range nodes {
				sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: "baremetal",
					DeployTime: 10*time.Second + time.Duration(i)*2*time.Second/time.Duration(nodes)})
			}
			srv := httptest.NewServer(sim.Handler())
			defer srv.Close()
			builds(t, "simulator (10–12 s deploys)", srv.URL, "baremetal", n)
		})
	}
}

// TestBenchBuildsReal: INGOT_BENCH=1 [INGOT_BENCH_REAL=1,10], against
// Debian's Ironic with fake hardware (skipped when it is not installed).
func TestBenchBuildsReal(t *testing.T) {
	wanted(t)
	for _, n := range counts(t, "INGOT_BENCH_REAL", "1,10") {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ir := ironictest.StartReal(t, ironictest.RealOptions{})
			ir.EnrollNodes(t, n, ironictest.NodeSpec{ResourceClass: "rc-bench", Kind: ironictest.Fast})
			builds(t, "real Ironic (fake hardware)", ir.URL, "rc-bench", n)
		})
	}
}

// TestBenchBuildsRealNotified: INGOT_BENCH=1 [INGOT_BENCH_REAL=1,10], the
// real Ironic publishing its notifications to the machine's RabbitMQ and
// ingot reading them (ironic.notifications), default cadence otherwise.
func TestBenchBuildsRealNotified(t *testing.T) {
	wanted(t)
	for _, n := range counts(t, "INGOT_BENCH_REAL", "1,10") {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			bus := ironictest.NewBus(t)
			ir := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL})
			ir.EnrollNodes(t, n, ironictest.NodeSpec{ResourceClass: "rc-bench", Kind: ironictest.Fast})
			notified(t, "real Ironic with notifications", ir.URL, "rc-bench", n, bus.URL)
		})
	}
}
