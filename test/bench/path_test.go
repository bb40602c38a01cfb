package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestBuildPathReal is not a benchmark: it pins the Ironic calls of one
// build's own path on the real Ironic, from the reservation to the deploy,
// with the poll so slow that nothing else looks at the node meanwhile:
// the reserve PATCH (with instance_info, as Nova's driver sends it), the
// node's ports, the VIF attach and the provision PUT, and nothing between
// them — no instance_info PATCH of the deploy's own, no GET of the node
// after the VIF attach (the reservation's answer shows the node under its
// own PATCH's lock; the attach since took and released it) and no read of
// instance_info (the deploy removes no key).
func TestBuildPathReal(t *testing.T) {
	ir := ironictest.StartReal(t, ironictest.RealOptions{})
	ir.EnrollNodes(t, 1, ironictest.NodeSpec{ResourceClass: "rc-path", Kind: ironictest.Fast})
	c, proxied := newCounter(t, ir.URL)
	c.tracing = true
	g := startIngot(t, proxied, "rc-path", func(c *config.Config) {
		c.PollInterval, c.FastPollInterval = time.Hour, time.Hour
	})
	g.ticks.waitFull(t)
	c.reset()
	g.create(t, 1)
	path := c.nodePath(t, "the provision PUT", func(path []string) bool {
		return len(path) > 0 && strings.Contains(path[len(path)-1], "/states/provision")
	})
	pin(t, path, "PATCH /v1/nodes/", "GET /v1/ports?", "POST /v1/nodes/", "PUT /v1/nodes/")
}

// TestBuildPathRealNotified pins a whole build's Ironic calls on the real
// Ironic publishing its notifications, with the poll so slow that only
// the notifications move the build past its waits: the four calls up to
// the deploy, one look when Ironic notifies the node active, the power-on
// (the fake deploy leaves the node off) and one look when Ironic notifies
// it on — 7 in all, the scheduler's inventory having been listed at the
// start. The echoes of ingot's own PATCHes (notified as updates) and the
// start of each transition wake nothing, and no look follows the
// power-on before its end is notified.
func TestBuildPathRealNotified(t *testing.T) {
	bus := ironictest.NewBus(t)
	ir := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL})
	ir.EnrollNodes(t, 1, ironictest.NodeSpec{ResourceClass: "rc-path", Kind: ironictest.Fast})
	c, proxied := newCounter(t, ir.URL)
	c.tracing = true
	g := startIngot(t, proxied, "rc-path", func(c *config.Config) {
		c.PollInterval, c.FastPollInterval = time.Hour, time.Hour
		c.Ironic.Notifications.URL = bus.URL
	})
	g.ticks.waitFull(t)
	g.listen(t)
	g.ticks.waitFulls(t, 2) // the resync the connection asks for
	c.warmed(t)
	c.reset()
	g.create(t, 1)
	g.waitActive(t, 1, 2*time.Minute)
	path := c.nodePath(t, "the calls", func([]string) bool { return true })
	t.Logf("the calls, create at +0ms = %s:\n%s", c.started.UTC().Format("15:04:05.000"), strings.Join(c.traced(), "\n"))
	pin(t, path, "PATCH /v1/nodes/", "GET /v1/ports?", "POST /v1/nodes/", "PUT /v1/nodes/",
		"GET /v1/nodes/", "PUT /v1/nodes/", "GET /v1/nodes/")
	if _, total, _ := c.snapshot(); total != len(path) {
		t.Fatalf("%d Ironic calls, %d of them on the node:\n%s", total, len(path), strings.Join(c.traced(), "\n"))
	}
}

// nodePath waits until done holds of the calls counted on the one node
// (not the scheduler's listings) and returns them as "METHOD path".
func (c *counter) nodePath(t *testing.T, what string, done func([]string) bool) []string {
	t.Helper()
	var path []string
	poll.Until(t, time.Minute, what, func() (bool, string) {
		path = path[:0]
		for _, line := range c.traced() {
			// "+12ms GET /v1/nodes/…"
			f := strings.Fields(line)
			if len(f) == 3 && strings.HasPrefix(f[2], "/v1/nodes/") || strings.Contains(line, "node=") {
				path = append(path, f[1]+" "+f[2])
			}
		}
		return done(path), strings.Join(c.traced(), "\n")
	})
	return path
}

// pin fails unless path is want, call by call (each a prefix).
func pin(t *testing.T, path []string, want ...string) {
	t.Helper()
	ok := len(path) == len(want)
	for i := range want {
		ok = ok && strings.HasPrefix(path[i], want[i])
	}
	if !ok {
		t.Fatalf("the build's calls on its node:\n%s\nwant, in order: %s", strings.Join(path, "\n"), fmt.Sprint(want))
	}
	t.Logf("%d calls on the node (%s)", len(path), strings.Join(want, ", "))
}
