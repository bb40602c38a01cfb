package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

const (
	cliImage = "11111111-2222-3333-4444-555555555555"
	cliNet   = "99999999-8888-7777-6666-555555555555"
)

// cliFixture serves the real API over a real SQLite store. Instead of a
// reconciler, step moves a server one phase on every GET of it, so a
// polling client sees each phase exactly once, whatever the timing.
type cliFixture struct {
	t     *testing.T
	store *sqlite.Store
	url   string

	mu   sync.Mutex
	step func(s *lifecycle.Server) bool // changes s; false: leave it
}

func newCLIFixture(t *testing.T) *cliFixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := &cliFixture{t: t, store: st}
	h := api.New(api.Config{
		Store: st,
		Catalog: &catalog.Catalog{
			Flavors: []catalog.Flavor{{ID: "1", Name: "bm.small", ResourceClass: "baremetal", VCPUs: 2, RAMMB: 4096, DiskGB: 40}},
			Images:  []catalog.Image{{ID: cliImage, Name: "debian-12", URL: "http://images/debian.qcow2"}},
		},
		Networks: network.Networks{{ID: cliNet, Name: "provisioning", CIDR: netip.MustParsePrefix("10.0.0.0/24")}},
		Nodes: func(ctx context.Context) ([]ironic.Node, error) {
			return []ironic.Node{{UUID: "node-1", Name: "rack1-1", ProvisionState: "active", PowerState: "power on", InstanceUUID: "x", ResourceClass: "baremetal",
				LastError: "ipmi: \x1b[2Jcleared \u202eyour screen"}}, nil
		},
	})
	showPath := regexp.MustCompile(`^/v2\.1/servers/([0-9a-f-]{36})$`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := showPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
			f.advance(m[1])
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *cliFixture) advance(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.step == nil {
		return
	}
	ctx := context.Background()
	s, err := f.store.GetServer(ctx, id)
	if err != nil {
		return
	}
	if !f.step(s) {
		return
	}
	if err := f.store.SaveServer(ctx, s, lifecycle.Event{ServerID: id, RequestID: s.CreateRequestID,
		Action: lifecycle.ActionCreate, Name: "step_" + string(s.Phase), Node: s.NodeID,
		Result: lifecycle.ResultSuccess, Start: time.Now(), Finish: time.Now()}); err != nil {
		f.t.Errorf("save: %v", err)
	}
}

// run executes `ingot ARGS…` against the fixture.
func (f *cliFixture) run(args ...string) (string, string, error) {
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append(args, "--endpoint", f.url+"/v2.1", "--poll-interval", "5ms"))
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// buildSteps walks pending → networking → deploying → active, one per poll.
func buildSteps(s *lifecycle.Server) bool {
	switch s.Phase {
	case lifecycle.PhasePending:
		s.Phase, s.NodeID = lifecycle.PhaseNetworking, "node-1"
	case lifecycle.PhaseNetworking:
		s.Phase = lifecycle.PhaseDeploying
	case lifecycle.PhaseDeploying:
		s.Phase, s.LaunchedAt = lifecycle.PhaseActive, time.Now()
	default:
		return false
	}
	return true
}

func TestCLICreateWaitActive(t *testing.T) {
	f := newCLIFixture(t)
	f.step = buildSteps
	out, errOut, err := f.run("server", "create", "vm1", "--flavor", "bm.small", "--image", "debian-12",
		"--network", "provisioning", "--property", "team=a", "--wait")
	if err != nil {
		t.Fatalf("create --wait: %v\n%s%s", err, out, errOut)
	}
	// One progress line per observed state, in order.
	var states []string
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "] "); strings.HasPrefix(line, "[") && i > 0 {
			states = append(states, strings.Fields(line[i+2:])[0]+" "+strings.Fields(line[i+2:])[2])
		}
	}
	want := []string{"BUILD phase=networking", "BUILD phase=deploying", "ACTIVE phase=active"}
	if strings.Join(states, ",") != strings.Join(want, ",") {
		t.Fatalf("progress %q, want %q\n%s", states, want, out)
	}
	if !strings.Contains(out, "is ACTIVE on node node-1") {
		t.Errorf("no final line:\n%s", out)
	}

	// The record carries what the flags asked for.
	list, err := f.store.ListServers(context.Background(), store.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Fatalf("stored %d servers (%v)", len(list), err)
	}
	if s := list[0]; s.Spec.Networks[0] != cliNet || s.Spec.Metadata["team"] != "a" || s.Spec.ImageID != cliImage {
		t.Errorf("spec %+v", s.Spec)
	}

	out, _, err = f.run("server", "list")
	if err != nil || !strings.Contains(out, "vm1") || !strings.Contains(out, "ACTIVE") {
		t.Errorf("list: %v\n%s", err, out)
	}
	out, _, err = f.run("server", "list", "-o", "json")
	var raws []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &raws) != nil || len(raws) != 1 || raws[0]["ingot:phase"] != "active" {
		t.Errorf("list -o json: %v\n%s", err, out)
	}
	out, _, err = f.run("server", "show", "vm1")
	if err != nil || !regexp.MustCompile(`node\s+node-1`).MatchString(out) || !strings.Contains(out, "team=a") ||
		!regexp.MustCompile(`image\s+debian-12 \(`+cliImage+`\)`).MatchString(out) {
		t.Errorf("show by name: %v\n%s", err, out)
	}
	out, _, err = f.run("server", "events", "vm1")
	if err != nil || !strings.Contains(out, "create") || !strings.Contains(out, "step_active") {
		t.Errorf("events: %v\n%s", err, out)
	}
	out, _, err = f.run("node", "list")
	if err != nil || !strings.Contains(out, "rack1-1") {
		t.Errorf("node list: %v\n%s", err, out)
	}
}

func TestCLICreateWaitError(t *testing.T) {
	f := newCLIFixture(t)
	at := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	f.step = func(s *lifecycle.Server) bool {
		if s.Phase != lifecycle.PhasePending {
			return false
		}
		s.Phase = lifecycle.PhaseError
		s.Attempts = []lifecycle.Attempt{{Node: "node-9", Step: lifecycle.StepDeploy, Reason: lifecycle.ReasonDeployFailed,
			Message: "deploy failed on node-9: disk gone", At: at}}
		s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonNoValidHost, Message: "no node left for resource class baremetal",
			Step: lifecycle.StepSchedule, At: at}
		return true
	}
	out, errOut, err := f.run("server", "create", "vm1", "--flavor", "1", "--image", cliImage, "--network", "none", "--wait")
	if !errors.Is(err, errServerFailed) {
		t.Fatalf("create --wait on ERROR: err %v, want errServerFailed\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"no_valid_host", "no node left for resource class baremetal",
		"attempt 1: node node-9, step deploy, deploy_failed: deploy failed on node-9: disk gone"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	out, _, err = f.run("server", "show", "vm1")
	if err != nil || !strings.Contains(out, "no_valid_host") || !strings.Contains(out, "attempt 1") {
		t.Errorf("show: %v\n%s", err, out)
	}
}

func TestCLIDeleteWait(t *testing.T) {
	f := newCLIFixture(t)
	f.step = func(s *lifecycle.Server) bool {
		switch {
		case s.Desired == lifecycle.DesiredDeleted && s.Phase != lifecycle.PhaseDeleting && s.Phase != lifecycle.PhaseDeleted:
			s.Phase = lifecycle.PhaseDeleting
		case s.Phase == lifecycle.PhaseDeleting:
			s.Phase, s.NodeID = lifecycle.PhaseDeleted, ""
		default:
			return buildSteps(s)
		}
		return true
	}
	if _, _, err := f.run("server", "create", "vm1", "--flavor", "1", "--image", cliImage, "--wait"); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := f.run("server", "delete", "vm1", "--wait")
	if err != nil || !strings.Contains(out, "deleted after") || !strings.Contains(out, "ACTIVE  task=deleting") {
		t.Fatalf("delete --wait: %v\n%s%s", err, out, errOut)
	}
	if _, _, err := f.run("server", "show", "vm1"); err == nil || !strings.Contains(err.Error(), "no server") {
		t.Errorf("show after delete: %v", err)
	}
	// Its events are still found by its name (the changes-since listing).
	out, _, err = f.run("server", "events", "vm1")
	if err != nil || !strings.Contains(out, "create") || !strings.Contains(out, "delete") {
		t.Errorf("events by name after delete: %v\n%s", err, out)
	}
	if _, _, err := f.run("server", "events", "vm2"); err == nil || !strings.Contains(err.Error(), `no server, live or deleted, with id or name "vm2"`) {
		t.Errorf("events of a name never used: %v", err)
	}
}

func TestCLIErrors(t *testing.T) {
	f := newCLIFixture(t)
	_, _, err := f.run("server", "create", "vm1", "--flavor", "nope", "--image", cliImage)
	if err == nil || !strings.Contains(err.Error(), "Flavor nope could not be found") {
		t.Errorf("unknown flavor: %v", err)
	}
	_, _, err = f.run("server", "create", "vm1", "--flavor", "1", "--image", cliImage, "--network", "nonet")
	if err == nil || !strings.Contains(err.Error(), `no network with id or name "nonet"`) {
		t.Errorf("unknown network: %v", err)
	}
	_, _, err = f.run("server", "show", "00000000-0000-0000-0000-000000000000")
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown id: %v", err)
	}
	_, _, err = f.run("server", "create", "vm1", "--flavor", "1", "--image", cliImage, "--property", "novalue")
	if err == nil || !strings.Contains(err.Error(), "key=value") {
		t.Errorf("bad property: %v", err)
	}
	if n, _ := f.store.ListServers(context.Background(), store.ListOptions{}); len(n) != 0 {
		t.Errorf("failed creates stored %d servers", len(n))
	}
}
