package replicas

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// steppedClock is a host's wall clock that a test steps: what a process
// reads after date -s (no monotonic reading: compared by the wall).
type steppedClock struct{ offset atomic.Int64 }

func (c *steppedClock) Now() time.Time {
	return time.Now().Round(0).Add(time.Duration(c.offset.Load()))
}

func (c *steppedClock) step(d time.Duration) { c.offset.Store(int64(d)) }

// TestWallClockStepped: two replicas on PostgreSQL (in process, so that
// the step goes through ingot's clock seam, app.Options.SystemClock: the
// machine's own clock is shared by every test on it), and the host clock
// of one of them stepped by an hour once both serve. Stepped +1 h, its
// builds do not time out early: every one ends ACTIVE. Stepped −1 h, held
// deploys time out on time — ERROR build_timeout no sooner than
// build_timeout after their create and no later than a few ticks past it,
// whichever replica took the create or holds the shard. (Reading the host
// clock directly, the +1 h replica failed its builds at once and the −1 h
// one let them run an hour past their deadline.) The history check finds
// nothing lost, resurrected, double-held, leaked or past its deadline.
func TestWallClockStepped(t *testing.T) {
	const buildTimeout = 8 * time.Second
	sim := ironicsim.New(ironicsim.Options{DeployTime: time.Second, UndeployTime: 200 * time.Millisecond})
	sim.AddNodes(24, ironicsim.NodeSpec{ResourceClass: "baremetal", Ports: 1})
	ironic := httptest.NewServer(sim.Handler())
	t.Cleanup(ironic.Close)
	dsn := pgtest.DSN(t)
	rec := history.New()
	stepped := &steppedClock{}
	var apis []*apitest.Client
	var cfg config.Config
	for i := range 2 {
		var err error
		cfg, err = config.Parse(fmt.Appendf(nil, `database: %s
host: clock-%d
lease_ttl: 3s
poll_interval: 200ms
build_timeout: %s
ironic: {url: %s, timeout: 5s}
flavors: [{name: bm, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}]
images: [{name: debian-12, url: "http://images.example/debian-12.qcow2"}]
networks: [{name: provisioning, cidr: 10.0.0.0/24}]
`, dsn, i, buildTimeout, ironic.URL))
		if err != nil {
			t.Fatal(err)
		}
		opts := app.Options{}
		if i == 1 {
			opts.SystemClock = stepped
		}
		_, url := apptest.Serve(t, cfg, opts)
		c := apitest.New(t, url)
		c.HTTP = rec.Client(30 * time.Second)
		apis = append(apis, c)
	}
	apis[0].WaitFor("both replicas holding their share", time.Minute, func() bool {
		for _, c := range apis {
			var ready struct {
				Replica struct {
					Leases []struct{} `json:"leases"`
				} `json:"replica"`
			}
			if c.Call("GET", "/readyz", nil, &ready) != http.StatusOK || len(ready.Replica.Leases) != 32 {
				return false
			}
		}
		return true
	})
	create := func(name string, i int) string {
		return apis[i%2].Create(map[string]any{"name": name, "flavorRef": "bm", "imageRef": cfg.Images[0].ID,
			"networks": []map[string]string{{"uuid": cfg.Networks[0].ID}}})
	}

	stepped.step(time.Hour)
	var built []string
	for i := range 10 {
		built = append(built, create(fmt.Sprintf("ahead-%d", i), i))
	}
	for _, id := range built {
		apis[0].WaitStatus(id, "ACTIVE", time.Minute)
	}

	stepped.step(-time.Hour)
	for _, n := range sim.Nodes() {
		if n.ProvisionState == "available" {
			if err := sim.HoldDeploy(n.UUID); err != nil {
				t.Fatal(err)
			}
		}
	}
	created := map[string]time.Time{}
	for i := range 6 {
		id := create(fmt.Sprintf("behind-%d", i), i)
		created[id] = time.Now()
	}
	early, late := time.Hour, -time.Hour
	for id, at := range created {
		s := apis[0].WaitStatus(id, "ERROR", time.Minute)
		took := time.Since(at)
		if s.IngotFault == nil || s.IngotFault.Reason != "build_timeout" || took < buildTimeout-time.Second || took > buildTimeout+4*time.Second {
			t.Errorf("held build %s: ERROR %+v %s after its create, want build_timeout at %s", id, s.IngotFault, took.Round(10*time.Millisecond), buildTimeout)
		}
		early, late = min(early, took-buildTimeout), max(late, took-buildTimeout)
	}
	for id := range created {
		apis[0].Delete(id)
		apis[0].WaitGone(id, time.Minute)
	}
	servers, err := history.Servers(apis[0].HTTP, apis[0].URL, "")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := history.SimNodes(hc, ironic.URL)
	if err != nil {
		t.Fatal(err)
	}
	v := rec.Require(t, history.Final{At: time.Now(), Servers: servers, Nodes: nodes},
		history.Bounds{Build: buildTimeout + 4*time.Second, Delete: time.Minute})
	t.Logf("one of two replicas' host clock stepped +1 h: %d builds ACTIVE; then −1 h: %d held builds ERROR build_timeout %s to %s from their deadline; %s",
		len(built), len(created), early.Round(10*time.Millisecond), late.Round(10*time.Millisecond), v)
}
