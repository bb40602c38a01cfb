package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// driftInterval is short so a test sees several drift passes in a second.
const driftInterval = 300 * time.Millisecond

// dev is one data directory for `ingot serve --dev` and the overlay that
// makes it quick (short poll and drift intervals, 1 s deploys).
type dev struct {
	t       *testing.T
	dir     string
	overlay string
	imageID string
	netID   string
}

func newDev(t *testing.T) *dev {
	t.Helper()
	d := &dev{t: t, dir: t.TempDir()}
	d.overlay = filepath.Join(d.dir, "quick.yaml")
	cfg := "poll_interval: 100ms\ndrift_interval: " + driftInterval.String() + "\nironic: {sim: {deploy_time: 1s, undeploy_time: 200ms}}\n"
	if err := os.WriteFile(d.overlay, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c := config.Dev(d.dir)
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
	d.imageID, d.netID = c.Images[0].ID, c.Networks[0].ID
	return d
}

// launch starts `ingot serve --dev` on the data directory.
func (d *dev) launch() *ingottest.Proc {
	d.t.Helper()
	return launch(d.t, "serve", "--dev", "--data-dir", filepath.Join(d.dir, "data"), "--config", d.overlay, "--listen", "127.0.0.1:0")
}

func (d *dev) create(c *apitest.Client, name string) string {
	d.t.Helper()
	return c.Create(map[string]any{"name": name, "flavorRef": "bm.small", "imageRef": d.imageID,
		"networks": []map[string]string{{"uuid": d.netID}}})
}

type simNode struct {
	UUID           string `json:"uuid"`
	InstanceUUID   string `json:"instance_uuid"`
	ProvisionState string `json:"provision_state"`
}

// nodesOf lists the simulator's nodes carrying instance.
func nodesOf(t testing.TB, p *ingottest.Proc, instance string) []simNode {
	t.Helper()
	var out struct {
		Nodes []simNode `json:"nodes"`
	}
	getJSON(t, p.Sim+"/v1/nodes/detail?instance_uuid="+instance, &out)
	return out.Nodes
}

// nodeLists is how many times ingot listed the simulator's nodes
// (GET /v1/nodes: the drift pass's bulk view, or the scheduler's inventory).
func nodeLists(t testing.TB, p *ingottest.Proc) int {
	t.Helper()
	var counts map[string]int
	getJSON(t, p.Sim+"/_sim/counts", &counts)
	return counts["GET /v1/nodes"]
}

// staysActive checks that server id stays ACTIVE while ingot makes at least
// passes drift passes over it, and at least one drift interval passes.
func staysActive(t *testing.T, p *ingottest.Proc, c *apitest.Client, id string, passes int) {
	t.Helper()
	start := time.Now()
	poll.Until(t, 30*time.Second, fmt.Sprintf("%d drift passes", passes), func() (bool, string) {
		s, code := c.Get(id)
		if code != 200 || s.Status != "ACTIVE" {
			t.Fatalf("server %s after the restart: %d %s %+v", id, code, s.Status, s.IngotFault)
		}
		n := nodeLists(t, p)
		return n >= passes && time.Since(start) > driftInterval, fmt.Sprintf("%d node lists", n)
	})
}

// TestSecondServeOnOneDatabase (S25): a second `ingot serve` on the database
// another one serves exits at once, non-zero, naming the first (pid and
// address), and the first goes on serving its ACTIVE server.
func TestSecondServeOnOneDatabase(t *testing.T) {
	d := newDev(t)
	first := d.launch().Serving()
	c := apitest.New(t, first.API)
	id := d.create(c, "web1")
	c.WaitStatus(id, "ACTIVE", 30*time.Second)

	second := d.launch()
	if !second.Exited(20 * time.Second) {
		t.Fatalf("the second serve on the same database still runs after 20s:\n%s", second.Tail(20))
	}
	out := second.Output()
	t.Logf("second serve, exit %d:\n%s", second.ExitCode(), out)
	if second.ExitCode() == 0 || strings.Contains(out, "ingot serving") {
		t.Fatalf("second serve: exit %d, want non-zero before serving:\n%s", second.ExitCode(), out)
	}
	for _, want := range []string{"is in use by another ingot", "pid " + strconv.Itoa(first.Pid()), "serving " + first.API} {
		if !strings.Contains(out, want) {
			t.Errorf("second serve's message lacks %q:\n%s", want, out)
		}
	}
	staysActive(t, first, c, id, nodeLists(t, first)+2)
	if nodes := nodesOf(t, first, id); len(nodes) != 1 || nodes[0].ProvisionState != "active" {
		t.Errorf("the first serve's node for %s: %+v", id, nodes)
	}
}
