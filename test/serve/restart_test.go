package serve

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/ingottest"
)

// TestDevRestartKeepsServers: `serve --dev` stopped (SIGTERM) or killed
// (SIGKILL) and started again on its data directory keeps its ACTIVE server
// ACTIVE through several drift passes, its node still carrying it; a build
// killed mid-deploy finishes (the simulated Ironic kept deploying).
func TestDevRestartKeepsServers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		end       func(*ingottest.Proc)
		deploying bool // kill while the node deploys, not once ACTIVE
	}{
		{"sigterm", (*ingottest.Proc).Stop, false},
		{"sigkill", (*ingottest.Proc).Kill, false},
		{"sigkill-deploying", (*ingottest.Proc).Kill, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDev(t)
			p := d.launch().Serving()
			c := apitest.New(t, p.API)
			id := d.create(c, "web1")
			if tc.deploying {
				c.WaitFor("the node deploying", 30*time.Second, func() bool {
					n := nodesOf(t, p, id)
					return len(n) == 1 && n[0].ProvisionState == "deploying"
				})
			} else {
				c.WaitStatus(id, "ACTIVE", 30*time.Second)
			}
			before := nodesOf(t, p, id)
			tc.end(p)

			p = d.launch().Serving()
			c = apitest.New(t, p.API)
			if tc.deploying {
				c.WaitStatus(id, "ACTIVE", 30*time.Second)
			}
			staysActive(t, p, c, id, 2)
			after := nodesOf(t, p, id)
			if len(after) != 1 || after[0].UUID != before[0].UUID || after[0].ProvisionState != "active" {
				t.Fatalf("node of %s: before the restart %+v, after %+v", id, before, after)
			}
		})
	}
}
