package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store/backend"
)

// ironicSide is the Ironic a case runs against (simulated or real), seen
// through its public API only, the same way for both.
type ironicSide struct {
	url     string
	real    bool
	timeout time.Duration // how long a build or delete may take there
}

const (
	imageID   = "0b8b5e0e-6d7c-4a57-9f0c-3f3f3c1e2a10"
	networkID = "7d4e2b1a-93c5-4f0e-8a61-5c2d9e7f4b32"
)

var hc = &http.Client{Timeout: 10 * time.Second}

type nodeInfo struct {
	InstanceUUID   string `json:"instance_uuid"`
	ProvisionState string `json:"provision_state"`
	PowerState     string `json:"power_state"`
	Maintenance    bool   `json:"maintenance"`
}

func (ir *ironicSide) get(t testing.TB, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ir.url+path, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("ironic GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("ironic GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

func (ir *ironicSide) node(t testing.TB, id string) nodeInfo {
	t.Helper()
	var n nodeInfo
	if code := ir.get(t, "/v1/nodes/"+id, &n); code != http.StatusOK {
		t.Fatalf("ironic GET node %s: %d", id, code)
	}
	return n
}

func (ir *ironicSide) vifs(t testing.TB, id string) []string {
	t.Helper()
	var out struct {
		VIFs []struct {
			ID string `json:"id"`
		} `json:"vifs"`
	}
	ir.get(t, "/v1/nodes/"+id+"/vifs", &out)
	ids := make([]string, 0, len(out.VIFs))
	for _, v := range out.VIFs {
		ids = append(ids, v.ID)
	}
	return ids
}

// ingot is one case's ingot: its configuration and database, and the
// process currently running on them.
type ingot struct {
	t      testing.TB
	dir    string
	config string
	db     string
	ir     *ironicSide
	nodes  []string
	p      *ingottest.Proc
	runs   int
	// token, when set, is sent as X-Auth-Token (an ingot behind Keystone).
	token string
}

func newIngot(t testing.TB, ir *ironicSide, rc string, nodes []string) *ingot {
	t.Helper()
	dir := t.TempDir()
	in := &ingot{t: t, dir: dir, config: filepath.Join(dir, "ingot.yaml"), db: filepath.Join(dir, "ingot.db"), ir: ir, nodes: nodes}
	if os.Getenv("INGOT_TEST_STORE") == "postgres" {
		// The crash cases on the PostgreSQL store, one fresh database each.
		in.db = pgtest.DSN(t)
	}
	poll := "100ms"
	if ir.real {
		poll = "200ms"
	}
	cfg := fmt.Sprintf(`database: %s
ironic:
  url: %s
  timeout: 10s
poll_interval: %s
drift_interval: 500ms
build_timeout: 2m
delete_timeout: 1m
log_level: info
flavors:
  - {name: bm, resource_class: %s, disk_gb: 10}
images:
  - {id: %s, name: debian-12, url: "http://127.0.0.1:1/debian-12.qcow2"}
networks:
  - {id: %s, name: provisioning, cidr: 10.0.0.0/24}
`, in.db, ir.url, poll, rc, imageID, networkID)
	if err := os.WriteFile(in.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// run starts ingot on the case's database (a restart after a crash).
func (in *ingot) run(env ...string) *ingottest.Proc {
	in.t.Helper()
	in.runs++
	in.p = start(in.t, in.config, filepath.Join(in.dir, fmt.Sprintf("ingot-%d.log", in.runs)), env...)
	return in.p
}

func (in *ingot) call(method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, in.p.API+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
	req.Header.Set("X-Ingot-Extensions", "true")
	if in.token != "" {
		req.Header.Set("X-Auth-Token", in.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		_ = json.Unmarshal(raw, out)
	}
	return resp.StatusCode, nil
}

// create asks for a server and returns its id once answered 202.
func (in *ingot) create(name string) string {
	in.t.Helper()
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	body := map[string]any{"server": map[string]any{"name": name, "flavorRef": "bm", "imageRef": imageID,
		"networks": []map[string]string{{"uuid": networkID}}}}
	code, err := in.call("POST", "/v2.1/servers", body, &out)
	if err != nil || code != http.StatusAccepted || out.Server.ID == "" {
		in.t.Fatalf("create: %d %v", code, err)
	}
	return out.Server.ID
}

type serverView struct {
	Status     string  `json:"status"`
	TaskState  *string `json:"OS-EXT-STS:task_state"`
	IngotFault *struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"ingot:fault"`
}

func (in *ingot) show(id string) (serverView, int) {
	var out struct {
		Server serverView `json:"server"`
	}
	code, err := in.call("GET", "/v2.1/servers/"+id, nil, &out)
	if err != nil {
		return serverView{}, 0
	}
	return out.Server, code
}

// waitActive waits for ACTIVE, failing at once on ERROR (a crash is no
// reason for a build to fail) and checking no node but one carries the
// server (no duplicate reservation).
func (in *ingot) waitActive(id string) {
	in.t.Helper()
	poll.Until(in.t, in.ir.timeout, "server "+id+" ACTIVE", func() (bool, string) {
		s, code := in.show(id)
		if code == http.StatusNotFound {
			in.t.Fatalf("I6: server %s accepted (202) but 404 after the crash", id)
		}
		if s.Status == "ERROR" {
			in.t.Fatalf("server %s went to ERROR after a crash: %+v", id, s.IngotFault)
		}
		in.checkOneNode(id)
		return s.Status == "ACTIVE", fmt.Sprintf("status %q", s.Status)
	})
}

// waitGone waits for 404, checking the server never shows anything but
// task_state deleting meanwhile (I2).
func (in *ingot) waitGone(id string) {
	in.t.Helper()
	poll.Until(in.t, in.ir.timeout, "server "+id+" gone", func() (bool, string) {
		s, code := in.show(id)
		if code == http.StatusOK && (s.TaskState == nil || *s.TaskState != "deleting") {
			in.t.Fatalf("I2: deleted server %s shows %s, task_state %v", id, s.Status, s.TaskState)
		}
		return code == http.StatusNotFound, fmt.Sprintf("code %d, status %q", code, s.Status)
	})
}

func (in *ingot) checkOneNode(id string) {
	in.t.Helper()
	n := 0
	for _, node := range in.nodes {
		if in.ir.node(in.t, node).InstanceUUID == id {
			n++
		}
	}
	if n > 1 {
		in.t.Fatalf("I4: server %s reserved on %d nodes", id, n)
	}
}

// checkReleased stops ingot and checks nothing leaked (I3): the record is
// deleted and holds nothing, no port is left, and every node of the case is
// back to available with no instance_uuid and no VIF.
func (in *ingot) checkReleased(ids ...string) {
	in.t.Helper()
	in.p.Stop()
	ctx := context.Background()
	st, err := backend.Open(ctx, in.db, backend.Options{})
	if err != nil {
		in.t.Fatal(err)
	}
	defer st.Close()
	for _, id := range ids {
		s, err := st.GetServer(ctx, id)
		if err != nil {
			in.t.Fatalf("server %s: %v", id, err)
		}
		if s.Phase != lifecycle.PhaseDeleted || s.Holds() {
			in.t.Errorf("I3: server %s is %s holding node %q (ports %v)", id, s.Phase, s.NodeID, s.PortsAllocated)
		}
		ports, err := st.Ports(ctx, id)
		if err != nil {
			in.t.Fatal(err)
		}
		if len(ports) != 0 {
			in.t.Errorf("I3: deleted server %s keeps %d port(s)", id, len(ports))
		}
	}
	for _, node := range in.nodes {
		err := poll.Wait(context.Background(), in.ir.timeout, func() (bool, string, error) {
			n := in.ir.node(in.t, node)
			return n.ProvisionState == "available" && n.InstanceUUID == "", fmt.Sprintf("%s with instance_uuid %q", n.ProvisionState, n.InstanceUUID), nil
		})
		if err != nil {
			in.t.Errorf("I3: node %s after the delete: %v", node, err)
		}
		if v := in.ir.vifs(in.t, node); len(v) != 0 {
			in.t.Errorf("I3: node %s keeps VIFs %v after the delete", node, v)
		}
	}
}

// tryCreate asks for a server; answered is false when the process died
// before the answer (a crash point right after the commit).
func (in *ingot) tryCreate(name string) (id string, answered bool) {
	in.t.Helper()
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	body := map[string]any{"server": map[string]any{"name": name, "flavorRef": "bm", "imageRef": imageID,
		"networks": []map[string]string{{"uuid": networkID}}}}
	code, err := in.call("POST", "/v2.1/servers", body, &out)
	if err != nil {
		return "", false
	}
	if code != http.StatusAccepted || out.Server.ID == "" {
		in.t.Fatalf("create: %d", code)
	}
	return out.Server.ID, true
}

// findServer returns the id of the server with that name ("" if none).
func (in *ingot) findServer(name string) string {
	in.t.Helper()
	var out struct {
		Servers []struct{ ID, Name string } `json:"servers"`
	}
	if code, err := in.call("GET", "/v2.1/servers", nil, &out); err != nil || code != http.StatusOK {
		in.t.Fatalf("list: %d %v", code, err)
	}
	for _, s := range out.Servers {
		if s.Name == name {
			return s.ID
		}
	}
	return ""
}

// deleteAndCheck deletes the server, waits for 404 and checks the release.
func (in *ingot) deleteAndCheck(id string) {
	in.t.Helper()
	code, err := in.call("DELETE", "/v2.1/servers/"+id, nil, nil)
	if err != nil || (code != http.StatusNoContent && code != http.StatusNotFound) {
		in.t.Fatalf("delete %s: %d %v", id, code, err)
	}
	in.waitGone(id)
	in.checkReleased(id)
}
