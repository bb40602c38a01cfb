// Package realironic runs the scenarios of docs/DESIGN.md §3 marked R against a
// real Ironic (Debian's, fake-hardware), through ingot's API. Long-deploy
// nodes (custom-agent, unlocked in "wait call-back") give the window for
// out-of-band actions during a deploy.
package realironic

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

type stack struct {
	*apitest.Client
	t     *testing.T
	ir    *ironictest.Env
	app   *app.App
	api   *httptest.Server
	rc    string
	netID string
	imgID string
}

// newStack runs an ingot against ir whose one flavor maps to resource class
// rc; configure, if given, changes the configuration first.
func newStack(t *testing.T, ir *ironictest.Env, rc string, configure ...func(*config.Config)) *stack {
	t.Helper()
	return newStackVia(t, ir, rc, ir.URL, configure...)
}

// newStackVia is newStack with ingot talking to ir through url (a proxy).
func newStackVia(t *testing.T, ir *ironictest.Env, rc, url string, configure ...func(*config.Config)) *stack {
	t.Helper()
	cfg := config.Default()
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	cfg.Ironic.URL = url
	cfg.Ironic.Timeout = 10 * time.Second
	cfg.PollInterval = 200 * time.Millisecond
	cfg.DriftInterval = 500 * time.Millisecond
	cfg.BuildTimeout = 2 * time.Minute
	cfg.DeleteTimeout = time.Minute
	cfg.Flavors = []config.Flavor{{Name: "bm", ResourceClass: rc, DiskGB: 10}, {Name: "none", ResourceClass: "rc-nothing"}}
	cfg.Images = []config.Image{{Name: "debian-12", URL: "http://127.0.0.1:1/debian-12.qcow2"}}
	cfg.Networks = []config.Network{{Name: "provisioning", CIDR: "10.0.0.0/24"}}
	for _, f := range configure {
		f(&cfg)
	}
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
	c := apitest.New(t, api.URL)
	c.Poll = 50 * time.Millisecond
	return &stack{Client: c, t: t, ir: ir, app: a, api: api, rc: rc, netID: cfg.Networks[0].ID, imgID: cfg.Images[0].ID}
}

func (s *stack) create(name, flavor string) string {
	s.t.Helper()
	return s.Create(map[string]any{"name": name, "flavorRef": flavor, "imageRef": s.imgID,
		"networks": []map[string]string{{"uuid": s.netID}}})
}

func (s *stack) rec(id string) *lifecycle.Server {
	r, err := s.app.Store.GetServer(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// waitCallback waits until the server's node sits in wait call-back.
func (s *stack) waitCallback(id string) string {
	s.t.Helper()
	var node string
	start := time.Now()
	s.WaitFor("wait call-back", 30*time.Second, func() bool {
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
	s.WaitFor("node "+node+" released", 30*time.Second, func() bool {
		n := s.ir.GetNode(s.t, node)
		return n["provision_state"] == "available" && n["instance_uuid"] == nil
	})
	if vifs := s.ir.ListVIFs(s.t, node); len(vifs) != 0 {
		s.t.Errorf("VIFs left on %s: %v", node, vifs)
	}
}

func (s *stack) noPorts(id string) {
	s.t.Helper()
	s.WaitFor("ports freed", 10*time.Second, func() bool {
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
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		t.Logf("S1: ACTIVE %s after create", time.Since(start).Round(time.Millisecond))
		n := ir.GetNode(t, node)
		if n["instance_uuid"] != id || n["provision_state"] != "active" {
			t.Fatalf("node = %v / %v", n["instance_uuid"], n["provision_state"])
		}
		info, _ := n["instance_info"].(map[string]any)
		if info["image_source"] != "http://127.0.0.1:1/debian-12.qcow2" {
			t.Errorf("instance_info = %v", info)
		}
		s.Call("DELETE", "/v2.1/servers/"+id, nil, nil)
		s.WaitGone(id, 60*time.Second)
		s.released(node)
		s.noPorts(id)
	})

	t.Run("S2 delete while deploying", func(t *testing.T) {
		s := newStack(t, ir, "rc-s2")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s2", ResourceClass: "rc-s2", Kind: ironictest.LongDeploy})
		id := s.create("s2", "bm")
		s.waitCallback(id)
		if code := s.Call("DELETE", "/v2.1/servers/"+id, nil, nil); code != http.StatusNoContent {
			t.Fatalf("delete: %d", code)
		}
		s.WaitGone(id, 60*time.Second)
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
		s.WaitFor("rescheduled", 30*time.Second, func() bool { return s.rec(id).NodeID != long })
		t.Logf("S3: out-of-band delete to reschedule: %s", time.Since(start).Round(time.Millisecond))
		v := s.WaitStatus(id, "ACTIVE", 60*time.Second)
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
		v := s.WaitStatus(id, "ERROR", 30*time.Second)
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
		v := s.WaitStatus(id, "ERROR", 30*time.Second)
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
		s.WaitStatus(bad, "ERROR", 30*time.Second)
		s.Call("DELETE", "/v2.1/servers/"+bad, nil, nil)
		s.WaitGone(bad, 10*time.Second)

		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s11", ResourceClass: "rc-s11", Kind: ironictest.Fast})
		id := s.create("s11", "bm")
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		ir.OutOfBandDelete(t, node)
		s.Call("DELETE", "/v2.1/servers/"+id, nil, nil)
		s.WaitGone(id, 30*time.Second)
		s.noPorts(id)
	})

	t.Run("S21 chosen node put in maintenance after the inventory refresh", func(t *testing.T) { testS21(t, ir) })
	testDay2(t, ir)

	t.Run("S12 active node deleted or torn down", func(t *testing.T) {
		s := newStack(t, ir, "rc-s12")
		a := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s12a", ResourceClass: "rc-s12", Kind: ironictest.Fast})
		id := s.create("s12a", "bm")
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		start := time.Now()
		ir.OutOfBandDelete(t, a)
		v := s.WaitStatus(id, "ERROR", 30*time.Second)
		t.Logf("S12: active node deleted to ERROR: %s", time.Since(start).Round(time.Millisecond))
		if v.IngotFault == nil || v.IngotFault.Reason != "node_deleted" {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.noPorts(id)

		b := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s12b", ResourceClass: "rc-s12", Kind: ironictest.Fast})
		id2 := s.create("s12b", "bm")
		s.WaitStatus(id2, "ACTIVE", 60*time.Second)
		ir.OutOfBandTeardown(t, b)
		v = s.WaitStatus(id2, "ERROR", 30*time.Second)
		if v.IngotFault == nil || !strings.HasPrefix(v.IngotFault.Reason, "node_torn_down") {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.released(b)
		s.noPorts(id2)
	})
}
