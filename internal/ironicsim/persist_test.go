package ironicsim

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var persistOpts = Options{VIFMode: VIFModeStore, DeployTime: 10 * time.Second, UndeployTime: 5 * time.Second,
	LockLinger: 100 * ms, CallbackTimeout: time.Minute}

// busyState gives h's simulator one of each thing Snapshot must keep: a
// node deploying (locked, with a config drive and a VIF), one active with
// volume objects and traits, one in maintenance, one held in wait
// call-back, one whose next deploy fails, one with its own deploy time.
// It returns the nodes in that order.
func busyState(h *harness) []string {
	h.t.Helper()
	ids := h.sim.AddNodes(6, NodeSpec{ResourceClass: "baremetal", Ports: 2, Properties: map[string]any{"cpus": 8}})
	deploy := func(id, instance string, vif string) {
		h.want(h.patch(id, op("add", "/instance_uuid", instance),
			op("add", "/instance_info/image_source", "http://images.example/x.qcow2")), 200, "")
		if vif != "" {
			h.want(h.do("POST", "/v1/nodes/"+id+"/vifs", map[string]any{"id": vif}), 204, "")
		}
		h.want(h.provision(id, map[string]any{"target": "active", "configdrive": map[string]any{"user_data": "#cloud-config\n"}}), 202, "")
	}
	h.want(h.do("PUT", "/v1/nodes/"+ids[1]+"/traits", map[string]any{"traits": []string{"CUSTOM_GPU"}}), 204, "")
	deploy(ids[1], inst2, "")
	h.want(h.do("POST", "/v1/volume/connectors", map[string]any{"node_uuid": ids[1], "type": "iqn",
		"connector_id": "iqn.2010-10.org.openstack:" + ids[1]}), 201, "")
	h.want(h.do("POST", "/v1/volume/targets", map[string]any{"node_uuid": ids[1], "volume_type": "iscsi",
		"boot_index": 0, "volume_id": "vol-1", "properties": map[string]any{"target_lun": 0}}), 201, "")
	h.clk.Advance(11 * time.Second) // ids[1] active
	deploy(ids[0], inst1, "vif-1")
	h.want(h.do("PUT", "/v1/nodes/"+ids[2]+"/maintenance", map[string]any{"reason": "disk"}), 202, "")
	if err := h.sim.HoldDeploy(ids[3]); err != nil {
		h.t.Fatal(err)
	}
	deploy(ids[3], "0b5a7c62-4d0e-4d53-9d3e-0b1f63c8ae41", "")
	if err := h.sim.FailNextDeploy(ids[4], "boom"); err != nil {
		h.t.Fatal(err)
	}
	if err := h.sim.SetNodeTimes(ids[5], time.Minute, -1); err != nil {
		h.t.Fatal(err)
	}
	h.clk.Advance(time.Second) // ids[3] in wait call-back
	return ids
}

// views is what a client sees of a simulator: every list, and each node's
// VIFs and traits, with the server's address taken out.
func views(h *harness, ids []string) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	paths := []string{"/v1/nodes/detail", "/v1/ports/detail", "/v1/volume/connectors?detail=True", "/v1/volume/targets?detail=True"}
	for _, id := range ids {
		paths = append(paths, "/v1/nodes/"+id+"/vifs", "/v1/nodes/"+id+"/traits")
	}
	for _, p := range paths {
		r := h.do("GET", p, nil)
		h.want(r, 200, "")
		out[p] = strings.ReplaceAll(string(r.body), h.srv.URL, "BASE")
	}
	return out
}

// restoreInto builds a fresh simulator with the same options on a clock at
// h's instant and restores raw into it.
func restoreInto(t *testing.T, h *harness, raw []byte) *harness {
	t.Helper()
	h2 := newHarness(t, persistOpts)
	h2.clk.Set(h.clk.Now())
	if err := h2.sim.Restore(raw); err != nil {
		t.Fatal(err)
	}
	return h2
}

func sameViews(t *testing.T, when string, a, b map[string]string) {
	t.Helper()
	for p, want := range a {
		if b[p] != want {
			t.Errorf("%s: GET %s differs\n original: %s\n restored: %s", when, p, want, b[p])
		}
	}
}

// TestSnapshotRestore: a restored simulator answers every read as the
// original does, and its pending transitions complete at the same instants
// (deploying → active, held stays, the failing deploy fails, lingering locks
// end).
func TestSnapshotRestore(t *testing.T) {
	h := newHarness(t, persistOpts)
	ids := busyState(h)
	raw, err := h.sim.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	h2 := restoreInto(t, h, raw)
	sameViews(t, "at once", views(h, ids), views(h2, ids))
	if h2.state(ids[0]) != "deploying" || h2.node(ids[0])["reservation"] != "localhost" {
		t.Fatalf("restored in-flight deploy: %v", h2.node(ids[0]))
	}

	for _, hh := range []*harness{h, h2} {
		hh.want(hh.provision(ids[4], map[string]any{"target": "active"}), 202, "")
		hh.clk.Advance(10*time.Second + 50*ms) // ids[0] active, lock lingering
	}
	sameViews(t, "deploy over, lock lingering", views(h, ids), views(h2, ids))
	for _, hh := range []*harness{h, h2} {
		hh.clk.Advance(time.Second)
	}
	sameViews(t, "later", views(h, ids), views(h2, ids))
	if h2.state(ids[0]) != "active" || h2.state(ids[3]) != "wait call-back" || h2.state(ids[4]) != "deploy failed" {
		t.Errorf("restored transitions: %s %s %s", h2.state(ids[0]), h2.state(ids[3]), h2.state(ids[4]))
	}
	if got := h2.sim.VIFs(ids[0]); len(got) != 1 || got[0] != "vif-1" {
		t.Errorf("restored VIFs %v", got)
	}
}

// TestRestoreKeepsUUIDsUnique: a simulator seeded like the one that saved
// the state draws the same UUIDs again; new nodes must not reuse them.
func TestRestoreKeepsUUIDsUnique(t *testing.T) {
	h := newHarness(t, Options{Seed: 7})
	first := h.sim.AddNodes(3, NodeSpec{Ports: 1})
	raw, err := h.sim.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, Options{Seed: 7})
	if err := h2.sim.Restore(raw); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range append(first, h2.sim.AddNodes(3, NodeSpec{Ports: 1})...) {
		if seen[id] {
			t.Fatalf("UUID %s drawn twice", id)
		}
		seen[id] = true
	}
	if n := len(h2.sim.Nodes()); n != 6 {
		t.Fatalf("%d nodes, want 6", n)
	}
}

// TestPersist: with Persist, every change is in the file by the time it is
// answered (a kill -9 right after an answer loses nothing), and a new
// simulator on the file resumes it.
func TestPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.json")
	h := newHarness(t, persistOpts)
	if restored, err := h.sim.Persist(path, func(err error) { t.Errorf("save: %v", err) }); err != nil || restored {
		t.Fatalf("Persist on no file: restored %v, %v", restored, err)
	}
	onDisk := func() string {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var st state
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("the file is not a whole state: %v", err)
		}
		return string(raw)
	}
	id := h.sim.AddNodes(1, NodeSpec{Ports: 1})[0]
	if !strings.Contains(onDisk(), id) {
		t.Fatal("AddNodes not saved")
	}
	h.want(h.patch(id, op("add", "/instance_uuid", inst1)), 200, "")
	if !strings.Contains(onDisk(), inst1) {
		t.Fatal("a PATCH answered before it was saved")
	}
	h.want(h.provision(id, map[string]any{"target": "active"}), 202, "")
	if !strings.Contains(onDisk(), `"ProvisionState":"deploying"`) {
		t.Fatal("a provision request answered before it was saved")
	}
	if err := h.sim.SetMaintenance(id, true, "check"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(onDisk(), `"MaintenanceReason":"check"`) {
		t.Fatal("the Go fault API's change not saved")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v (%v), want 0600", fi.Mode(), err)
	}

	// No Close, no final save: as after kill -9.
	h2 := newHarness(t, persistOpts)
	h2.clk.Set(h.clk.Now())
	restored, err := h2.sim.Persist(path, nil)
	if err != nil || !restored {
		t.Fatalf("Persist on the file: restored %v, %v", restored, err)
	}
	sameViews(t, "resumed", views(h, []string{id}), views(h2, []string{id}))
	h2.clk.Advance(11 * time.Second)
	if n := h2.node(id); n["provision_state"] != "active" || n["instance_uuid"] != inst1 {
		t.Fatalf("resumed deploy: %v %v", n["provision_state"], n["instance_uuid"])
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files beside the state: %v (a temporary file left behind?)", entries)
	}
}

func TestPersistRefusesABadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.json")
	for _, body := range []string{"{", `{"version": 99}`} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := New(Options{}).Persist(path, nil); err == nil {
			t.Errorf("Persist on %q: no error", body)
		}
	}
}

// TestPersistConcurrent: changes answered concurrently are all in the file
// (saves are shared, never lost), and the file is whole.
func TestPersistConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.json")
	h := newHarness(t, Options{})
	if _, err := h.sim.Persist(path, func(err error) { t.Errorf("save: %v", err) }); err != nil {
		t.Fatal(err)
	}
	ids := h.sim.AddNodes(8, NodeSpec{})
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for k := range 10 {
				body := `[{"op": "add", "path": "/extra/k` + strconv.Itoa(k) + `", "value": "v"}]`
				req, _ := http.NewRequest("PATCH", h.srv.URL+"/v1/nodes/"+id, strings.NewReader(body))
				req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Errorf("PATCH %s: %d", id, res.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	h2 := newHarness(t, Options{})
	if restored, err := h2.sim.Persist(path, nil); err != nil || !restored {
		t.Fatalf("restored %v, %v", restored, err)
	}
	sameViews(t, "after concurrent changes", views(h, ids), views(h2, ids))
}

func TestStopPersisting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sim.json")
	s := New(Options{Seed: 1})
	if _, err := s.Persist(path, nil); err != nil {
		t.Fatal(err)
	}
	s.AddNodes(1, NodeSpec{})
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s.StopPersisting()
	s.AddNodes(1, NodeSpec{})
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("the state file changed after StopPersisting")
	}
}
