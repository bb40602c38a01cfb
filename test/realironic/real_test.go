// Package realironic runs the scenarios of DESIGN.md §3 marked R against a
// real Ironic (Debian's, fake-hardware), through ingot's API. Long-deploy
// nodes (custom-agent, unlocked in "wait call-back") give the window for
// out-of-band actions during a deploy.
package realironic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

type stack struct {
	t     *testing.T
	ir    *ironictest.Env
	app   *app.App
	api   *httptest.Server
	rc    string
	netID string
	imgID string
}

// newStack runs an ingot against ir whose one flavor maps to resource class rc.
func newStack(t *testing.T, ir *ironictest.Env, rc string) *stack {
	t.Helper()
	cfg := config.Default()
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	cfg.Ironic.URL = ir.URL
	cfg.Ironic.Timeout = 10 * time.Second
	cfg.PollInterval = 200 * time.Millisecond
	cfg.DriftInterval = 500 * time.Millisecond
	cfg.BuildTimeout = 2 * time.Minute
	cfg.DeleteTimeout = time.Minute
	cfg.Flavors = []config.Flavor{{Name: "bm", ResourceClass: rc, DiskGB: 10}, {Name: "none", ResourceClass: "rc-nothing"}}
	cfg.Images = []config.Image{{Name: "debian-12", URL: "http://127.0.0.1:1/debian-12.qcow2"}}
	cfg.Networks = []config.Network{{Name: "provisioning", CIDR: "10.0.0.0/24"}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts := app.Options{}
	if os.Getenv("INGOT_TEST_LOG") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(a.Handler)
	done := make(chan struct{})
	go func() { _ = a.Reconciler.Run(ctx); close(done) }()
	t.Cleanup(func() { api.Close(); cancel(); <-done; a.Close() })
	return &stack{t: t, ir: ir, app: a, api: api, rc: rc, netID: cfg.Networks[0].ID, imgID: cfg.Images[0].ID}
}

func (s *stack) call(method, path string, body any, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.api.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		_ = json.Unmarshal(raw, out)
	}
	return resp.StatusCode
}

func (s *stack) create(name, flavor string) string {
	s.t.Helper()
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	body := map[string]any{"server": map[string]any{"name": name, "flavorRef": flavor, "imageRef": s.imgID,
		"networks": []map[string]string{{"uuid": s.netID}}}}
	if code := s.call("POST", "/v2.1/servers", body, &out); code != http.StatusAccepted {
		s.t.Fatalf("create: %d", code)
	}
	return out.Server.ID
}

type view struct {
	Status     string `json:"status"`
	IngotFault *struct {
		Reason string `json:"reason"`
	} `json:"ingot:fault"`
	Attempts []struct {
		Node, Reason string
	} `json:"ingot:attempts"`
}

func (s *stack) get(id string) (view, int) {
	var out struct {
		Server view `json:"server"`
	}
	code := s.call("GET", "/v2.1/servers/"+id, nil, &out)
	return out.Server, code
}

func (s *stack) rec(id string) *lifecycle.Server {
	r, err := s.app.Store.GetServer(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

func (s *stack) waitFor(what string, timeout time.Duration, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *stack) waitStatus(id, want string, timeout time.Duration) view {
	s.t.Helper()
	var v view
	s.waitFor(id+" "+want, timeout, func() bool {
		var code int
		v, code = s.get(id)
		if code != http.StatusOK {
			s.t.Fatalf("GET %s: %d", id, code)
		}
		if v.Status != want && (v.Status == "ERROR" || (v.Status == "ACTIVE" && want != "ERROR")) {
			s.t.Fatalf("%s is %s, want %s (%+v)", id, v.Status, want, v.IngotFault)
		}
		return v.Status == want
	})
	return v
}

func (s *stack) waitGone(id string, timeout time.Duration) {
	s.t.Helper()
	s.waitFor(id+" gone", timeout, func() bool {
		v, code := s.get(id)
		if code == http.StatusOK && v.Status != "DELETED" {
			s.t.Fatalf("deleted server shows %s (I2)", v.Status)
		}
		return code == http.StatusNotFound
	})
}

// waitCallback waits until the server's node sits in wait call-back.
func (s *stack) waitCallback(id string) string {
	s.t.Helper()
	var node string
	start := time.Now()
	s.waitFor("wait call-back", 30*time.Second, func() bool {
		r := s.rec(id)
		if r.NodeID == "" || !r.DeployRequested {
			return false
		}
		node = r.NodeID
		n := s.ir.GetNode(s.t, node)
		if time.Since(start) > 25*time.Second {
			s.t.Logf("node %s: %v / %v / %v (phase %s)", node, n["provision_state"], n["last_error"], n["target_provision_state"], r.Phase)
		}
		return n["provision_state"] == "wait call-back"
	})
	return node
}

// released checks a node is back in available with nothing of ours on it.
func (s *stack) released(node string) {
	s.t.Helper()
	s.waitFor("node "+node+" released", 30*time.Second, func() bool {
		n := s.ir.GetNode(s.t, node)
		return n["provision_state"] == "available" && n["instance_uuid"] == nil
	})
	if vifs := s.ir.ListVIFs(s.t, node); len(vifs) != 0 {
		s.t.Errorf("VIFs left on %s: %v", node, vifs)
	}
}

func (s *stack) noPorts(id string) {
	s.t.Helper()
	s.waitFor("ports freed", 10*time.Second, func() bool {
		p, err := s.app.Store.Ports(context.Background(), id)
		return err == nil && len(p) == 0
	})
}

func TestRealIronic(t *testing.T) {
	ir := ironictest.StartReal(t, ironictest.RealOptions{CallbackTimeout: 120 * time.Second})

	t.Run("S1 create active", func(t *testing.T) {
		s := newStack(t, ir, "rc-s1")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s1", ResourceClass: "rc-s1", Kind: ironictest.Fast})
		start := time.Now()
		id := s.create("s1", "bm")
		s.waitStatus(id, "ACTIVE", 60*time.Second)
		t.Logf("S1: ACTIVE %s after create", time.Since(start).Round(time.Millisecond))
		n := ir.GetNode(t, node)
		if n["instance_uuid"] != id || n["provision_state"] != "active" {
			t.Fatalf("node = %v / %v", n["instance_uuid"], n["provision_state"])
		}
		info, _ := n["instance_info"].(map[string]any)
		if info["image_source"] != "http://127.0.0.1:1/debian-12.qcow2" {
			t.Errorf("instance_info = %v", info)
		}
		s.call("DELETE", "/v2.1/servers/"+id, nil, nil)
		s.waitGone(id, 60*time.Second)
		s.released(node)
		s.noPorts(id)
	})

	t.Run("S2 delete while deploying", func(t *testing.T) {
		s := newStack(t, ir, "rc-s2")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s2", ResourceClass: "rc-s2", Kind: ironictest.LongDeploy})
		id := s.create("s2", "bm")
		s.waitCallback(id)
		if code := s.call("DELETE", "/v2.1/servers/"+id, nil, nil); code != http.StatusNoContent {
			t.Fatalf("delete: %d", code)
		}
		s.waitGone(id, 60*time.Second)
		s.released(node)
		s.noPorts(id)
	})

	t.Run("S3 node deleted out-of-band while deploying, rescheduled", func(t *testing.T) {
		s := newStack(t, ir, "rc-s3")
		long := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s3-long", ResourceClass: "rc-s3", Kind: ironictest.LongDeploy})
		id := s.create("s3", "bm")
		if got := s.waitCallback(id); got != long {
			t.Fatalf("deploying on %s, want %s", got, long)
		}
		fast := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s3-fast", ResourceClass: "rc-s3", Kind: ironictest.Fast})
		start := time.Now()
		ir.OutOfBandDelete(t, long)
		s.waitFor("rescheduled", 30*time.Second, func() bool { return s.rec(id).NodeID != long })
		t.Logf("S3: out-of-band delete to reschedule: %s", time.Since(start).Round(time.Millisecond))
		v := s.waitStatus(id, "ACTIVE", 60*time.Second)
		if s.rec(id).NodeID != fast || len(v.Attempts) != 1 || v.Attempts[0].Reason != "node_deleted" {
			t.Fatalf("node %s attempts %+v", s.rec(id).NodeID, v.Attempts)
		}
	})

	t.Run("S3 node deleted out-of-band, no other node", func(t *testing.T) {
		s := newStack(t, ir, "rc-s3b")
		long := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s3b", ResourceClass: "rc-s3b", Kind: ironictest.LongDeploy})
		id := s.create("s3b", "bm")
		s.waitCallback(id)
		start := time.Now()
		ir.OutOfBandDelete(t, long)
		v := s.waitStatus(id, "ERROR", 30*time.Second)
		t.Logf("S3: out-of-band delete to ERROR (left BUILD): %s", time.Since(start).Round(time.Millisecond))
		if v.IngotFault == nil || v.IngotFault.Reason != "node_deleted" {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.noPorts(id)
	})

	t.Run("S4 torn down out-of-band, no node left", func(t *testing.T) {
		s := newStack(t, ir, "rc-s4")
		long := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s4", ResourceClass: "rc-s4", Kind: ironictest.LongDeploy})
		id := s.create("s4", "bm")
		s.waitCallback(id)
		start := time.Now()
		ir.OutOfBandTeardown(t, long)
		v := s.waitStatus(id, "ERROR", 30*time.Second)
		t.Logf("S4: out-of-band teardown to ERROR: %s", time.Since(start).Round(time.Millisecond))
		if v.IngotFault == nil || v.IngotFault.Reason != "node_torn_down" {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.released(long)
		s.noPorts(id)
	})

	t.Run("S11 delete of ERROR server and of a server whose node is gone", func(t *testing.T) {
		s := newStack(t, ir, "rc-s11")
		bad := s.create("s11-bad", "none")
		s.waitStatus(bad, "ERROR", 30*time.Second)
		s.call("DELETE", "/v2.1/servers/"+bad, nil, nil)
		s.waitGone(bad, 10*time.Second)

		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s11", ResourceClass: "rc-s11", Kind: ironictest.Fast})
		id := s.create("s11", "bm")
		s.waitStatus(id, "ACTIVE", 60*time.Second)
		ir.OutOfBandDelete(t, node)
		s.call("DELETE", "/v2.1/servers/"+id, nil, nil)
		s.waitGone(id, 30*time.Second)
		s.noPorts(id)
	})

	t.Run("S12 active node deleted or torn down", func(t *testing.T) {
		s := newStack(t, ir, "rc-s12")
		a := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s12a", ResourceClass: "rc-s12", Kind: ironictest.Fast})
		id := s.create("s12a", "bm")
		s.waitStatus(id, "ACTIVE", 60*time.Second)
		start := time.Now()
		ir.OutOfBandDelete(t, a)
		v := s.waitStatus(id, "ERROR", 30*time.Second)
		t.Logf("S12: active node deleted to ERROR: %s", time.Since(start).Round(time.Millisecond))
		if v.IngotFault == nil || v.IngotFault.Reason != "node_deleted" {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.noPorts(id)

		b := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s12b", ResourceClass: "rc-s12", Kind: ironictest.Fast})
		id2 := s.create("s12b", "bm")
		s.waitStatus(id2, "ACTIVE", 60*time.Second)
		ir.OutOfBandTeardown(t, b)
		v = s.waitStatus(id2, "ERROR", 30*time.Second)
		if v.IngotFault == nil || !strings.HasPrefix(v.IngotFault.Reason, "node_torn_down") {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.released(b)
		s.noPorts(id2)
	})
}
