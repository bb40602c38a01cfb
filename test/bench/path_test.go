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
// reserve PATCH, the node's ports, the VIF attach, the instance_info PATCH
// and the provision PUT, and nothing between them — no GET of the node
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
	var path []string
	poll.Until(t, time.Minute, "the provision PUT", func() (bool, string) {
		path = path[:0]
		for _, line := range c.traced() {
			// "+12ms GET /v1/nodes/…": the calls on the one node, not the
			// scheduler's listings.
			f := strings.Fields(line)
			if len(f) == 3 && strings.HasPrefix(f[2], "/v1/nodes/") || strings.Contains(line, "node=") {
				path = append(path, f[1]+" "+f[2])
			}
		}
		return len(path) > 0 && strings.Contains(path[len(path)-1], "/states/provision"), strings.Join(c.traced(), "\n")
	})
	want := []string{"PATCH /v1/nodes/", "GET /v1/ports?", "POST /v1/nodes/", "PATCH /v1/nodes/", "PUT /v1/nodes/"}
	ok := len(path) == len(want)
	for i := range want {
		ok = ok && strings.HasPrefix(path[i], want[i])
	}
	if !ok {
		t.Fatalf("the build's calls on its node up to the deploy:\n%s\nwant, in order: %s", strings.Join(path, "\n"), fmt.Sprint(want))
	}
	t.Logf("reserve to deploy: %d calls on the node (%s)", len(path), strings.Join(want, ", "))
}
