package serve

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/faulttest"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/ingottest"
)

var simListening = regexp.MustCompile(`ironic simulator listening on (http://\S+) `)

// faultyIronic is one ingot serve on SQLite whose link to a simulated
// Ironic (its own process) goes through a fault proxy.
type faultyIronic struct {
	link *faulttest.Link
	api  *apitest.Client
	cfg  config.Config
	sim  string // the simulator's URL (not through the link)
	db   string // the SQLite file
	rec  *history.Recorder
	p    *ingottest.Proc
}

func newFaultyIronic(t *testing.T, ironicTimeout time.Duration) *faultyIronic {
	t.Helper()
	return newFaultyIronicOn(t, ironicTimeout, t.TempDir())
}

// newFaultyIronicOn is newFaultyIronic with the database in dbDir (a file
// system of its own, for one).
func newFaultyIronicOn(t *testing.T, ironicTimeout time.Duration, dbDir string) *faultyIronic {
	t.Helper()
	sim := launch(t, "sim", "--nodes", "12", "--listen", "127.0.0.1:0", "--deploy-time", "1s", "--undeploy-time", "200ms",
		"--vif-mode", "store", "--ports", "1", "--seed", "1")
	simURL := sim.WaitLog(simListening, 30*time.Second)
	u, err := url.Parse(simURL)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &faultyIronic{link: faulttest.New(t, "ironic", u.Host), sim: simURL, db: filepath.Join(dbDir, "ingot.db"), rec: history.New()}
	yaml := fmt.Sprintf(`database: %s
poll_interval: 200ms
build_timeout: 5m
ironic: {url: %s, timeout: %s}
flavors: [{name: bm, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}]
images: [{name: debian-12, url: "http://images.example/debian-12.qcow2"}]
networks: [{name: provisioning, cidr: 10.0.0.0/24}]
`, f.db, f.link.Rewrite(simURL), ironicTimeout)
	path := filepath.Join(dir, "ingot.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.cfg, err = config.Parse([]byte(yaml)); err != nil {
		t.Fatal(err)
	}
	f.p = ingottest.Serve(t, ingottest.Binary(t), path, ingottest.Options{})
	f.api = apitest.New(t, f.p.API)
	f.api.HTTP = f.rec.Client(30 * time.Second)
	return f
}

func (f *faultyIronic) create(name string) string {
	return f.api.Create(map[string]any{"name": name, "flavorRef": "bm", "imageRef": f.cfg.Images[0].ID,
		"networks": []map[string]string{{"uuid": f.cfg.Networks[0].ID}}})
}

// slowest is the longest of n reads of id through the API.
func (f *faultyIronic) slowest(id string, n int) time.Duration {
	var worst time.Duration
	for range n {
		began := time.Now()
		if _, code := f.api.Get(id); code != 200 {
			f.api.T.Fatalf("show %s: HTTP %d", id, code)
		}
		worst = max(worst, time.Since(began))
	}
	return worst
}

// TestIronicBlackholedThenHealed: the link to Ironic goes silent (every
// byte dropped, nothing closed) for longer than Ironic's per-call timeout,
// in the middle of builds. The API goes on answering at once and accepts
// creates and a delete; nothing goes to ERROR (the builds are well within
// their deadline); once the link heals every build ends ACTIVE and the
// deleted server is gone; the history check finds nothing lost,
// resurrected, double-held or leaked.
func TestIronicBlackholedThenHealed(t *testing.T) {
	f := newFaultyIronic(t, 2*time.Second)
	var ids []string
	for i := range 4 {
		ids = append(ids, f.create(fmt.Sprintf("bh-%d", i)))
	}
	f.link.Blackhole()
	cut := time.Now()
	ids = append(ids, f.create("during"))
	doomed := ids[1]
	f.api.Delete(doomed)
	ids = append(ids[:1], ids[2:]...)
	worst := f.slowest(ids[0], 20)
	if worst > time.Second {
		t.Errorf("a show took %s while Ironic was blackholed", worst)
	}
	f.api.WaitFor("two Ironic timeouts to pass", time.Minute, func() bool { return time.Since(cut) > 5*time.Second })
	for _, id := range ids {
		if s, _ := f.api.Get(id); s.Status == "ERROR" {
			t.Fatalf("%s went to ERROR while Ironic was blackholed: %+v", id, s)
		}
	}
	out := time.Since(cut)
	f.link.Heal()
	for _, id := range ids {
		f.api.WaitStatus(id, "ACTIVE", 2*time.Minute)
	}
	f.api.WaitGone(doomed, 2*time.Minute)
	t.Logf("Ironic blackholed %s (per-call timeout 2s) during %d builds and a delete: slowest show %s, a create and the delete accepted, all ACTIVE and the deleted one gone after the heal; %s",
		out.Round(100*time.Millisecond), len(ids), worst.Round(time.Millisecond), f.checkHistory(t))
}

// TestIronicSlowed: every byte to and from Ironic delayed 400 ms (±100),
// so a node list takes longer than a tick's budget (poll_interval 200 ms):
// builds take longer and all end ACTIVE, none ERROR, a delete through
// the slow link ends, and the API answers as fast as with a quick Ironic;
// the history check finds nothing lost, resurrected, double-held or
// leaked. (Before the steps got their own half
// budget after the view, every tick spent itself on the view and no build
// got past networking.)
func TestIronicSlowed(t *testing.T) {
	f := newFaultyIronic(t, 10*time.Second)
	f.link.Latency(400*time.Millisecond, 100*time.Millisecond)
	var ids []string
	for i := range 4 {
		ids = append(ids, f.create(fmt.Sprintf("slow-%d", i)))
	}
	worst := f.slowest(ids[0], 20)
	if worst > time.Second {
		t.Errorf("a show took %s while Ironic was slow", worst)
	}
	began := time.Now()
	for _, id := range ids {
		f.api.WaitStatus(id, "ACTIVE", 3*time.Minute)
	}
	built := time.Since(began)
	f.api.Delete(ids[0])
	f.api.WaitGone(ids[0], 3*time.Minute)
	t.Logf("Ironic slowed by 400±100 ms a chunk: %d builds ACTIVE in %s, a delete done in %s, slowest show %s; %s", len(ids),
		built.Round(100*time.Millisecond), (time.Since(began) - built).Round(100*time.Millisecond), worst.Round(time.Millisecond), f.checkHistory(t))
}
