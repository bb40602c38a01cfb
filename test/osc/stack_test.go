package osc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// stack is one `ingot serve` process built from this tree, with its
// built-in simulated Ironic, whose /_sim/ admin API the test reaches.
type stack struct {
	t      *testing.T
	url    string // ingot, e.g. http://127.0.0.1:41234
	simURL string // the simulated Ironic
	http   *http.Client
}

// flavorID is deliberately not the flavor's name, so the CLI's look-ups by
// name (flavor show bm.small, --flavor bm.small) are exercised.
const (
	flavorID   = "1"
	flavorName = "bm.small"
	imageName  = "debian-12"
	netName    = "provisioning"
)

// startIngot runs `ingot serve --config` with the built-in simulator
// (nodes nodes, every build retried once on another node).
func startIngot(t *testing.T, nodes int) *stack {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`database: %s
host: ingot-osc
poll_interval: 200ms
max_attempts: 2
log_level: info
ironic:
  url: sim
  sim: {nodes: %d, resource_class: baremetal, deploy_time: 3s, undeploy_time: 300ms}
flavors:
  - {id: %q, name: %s, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100, description: small bare metal}
images:
  - {name: %s, url: "http://images.example/debian-12.qcow2"}
networks:
  - {name: %s, cidr: 10.0.0.0/24}
`, filepath.Join(dir, "ingot.db"), nodes, flavorID, flavorName, imageName, netName)
	cfgPath := filepath.Join(dir, "ingot.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := ingottest.Serve(t, ingottest.Binary(t), cfgPath, ingottest.Options{})
	return &stack{t: t, url: p.API, simURL: p.Sim, http: &http.Client{Timeout: 10 * time.Second}}
}

// call sends a request to base+path (a compute call at microversion mv when
// mv is set) and decodes a JSON answer into out (may be nil).
func (s *stack) call(ctx context.Context, method, url, mv string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("marshal: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, fmt.Errorf("request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if mv != "" {
		req.Header.Set("OpenStack-API-Version", "compute "+mv)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: read: %w", method, url, err)
	}
	if out != nil && resp.StatusCode < 300 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode %q: %w", method, url, raw, err)
		}
	}
	return resp.StatusCode, nil
}

// server is the part of a Nova server body the test steers by.
type server struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Node   string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
}

func (s *stack) servers(ctx context.Context) ([]server, error) {
	var body struct {
		Servers []server `json:"servers"`
	}
	if code, err := s.call(ctx, "GET", s.url+"/v2.1/servers/detail", "2.90", nil, &body); err != nil || code != http.StatusOK {
		return nil, fmt.Errorf("list servers: %d %w", code, err)
	}
	return body.Servers, nil
}

// serverByName finds a live server by name (nil when there is none).
func (s *stack) serverByName(t *testing.T, name string) *server {
	t.Helper()
	list, err := s.servers(context.Background())
	if err != nil {
		t.Fatalf("%v", err)
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// waitStatus waits for the named server to show status.
func (s *stack) waitStatus(t *testing.T, name, status string) server {
	t.Helper()
	var got server
	poll.Until(t, 60*time.Second, name+" "+status, func() (bool, string) {
		sv := s.serverByName(t, name)
		if sv == nil {
			return false, "not listed"
		}
		got = *sv
		return sv.Status == status, sv.Status
	})
	return got
}

// waitGone waits for GET /servers/{id} to answer 404.
func (s *stack) waitGone(t *testing.T, id string) {
	t.Helper()
	poll.Until(t, 60*time.Second, "server "+id+" gone", func() (bool, string) {
		code, err := s.call(context.Background(), "GET", s.url+"/v2.1/servers/"+id, "2.1", nil, nil)
		return err == nil && code == http.StatusNotFound, fmt.Sprintf("%d %v", code, err)
	})
}

// createRequestID is the request id of the server's create action.
func (s *stack) createRequestID(t *testing.T, id string) string {
	t.Helper()
	var body struct {
		Actions []struct {
			Action    string `json:"action"`
			RequestID string `json:"request_id"`
		} `json:"instanceActions"`
	}
	if code, err := s.call(context.Background(), "GET", s.url+"/v2.1/servers/"+id+"/os-instance-actions", "2.1", nil, &body); err != nil || code != http.StatusOK {
		t.Fatalf("actions of %s: %d %v", id, code, err)
	}
	for _, a := range body.Actions {
		if a.Action == "create" {
			return a.RequestID
		}
	}
	t.Fatalf("server %s has no create action: %+v", id, body.Actions)
	return ""
}

// simNode is the part of the simulator's node snapshot the driver reads.
type simNode struct {
	UUID           string `json:"uuid"`
	ProvisionState string `json:"provision_state"`
	Held           bool   `json:"held"`
}

func (s *stack) simNodes(ctx context.Context) (map[string]simNode, error) {
	var body struct {
		Nodes []simNode `json:"nodes"`
	}
	if code, err := s.call(ctx, "GET", s.simURL+"/_sim/nodes", "", nil, &body); err != nil || code != http.StatusOK {
		return nil, fmt.Errorf("sim nodes: %d %w", code, err)
	}
	out := make(map[string]simNode, len(body.Nodes))
	for _, n := range body.Nodes {
		out[n.UUID] = n
	}
	return out, nil
}

// holdFree holds every node that is not deploying: the simulator ends a
// hold when it releases a deploy or tears a node down, and the test wants
// every build to stop in `wait call-back` until the driver decides.
func (s *stack) holdFree(ctx context.Context, nodes map[string]simNode) error {
	for _, n := range nodes {
		switch n.ProvisionState {
		case "available", "deleting", "cleaning", "active":
			if n.Held {
				continue
			}
			if code, err := s.call(ctx, "POST", s.simURL+"/_sim/nodes/"+n.UUID+"/hold-deploy", "", nil, nil); err != nil || code != http.StatusNoContent {
				return fmt.Errorf("hold %s: %d %w", n.UUID, code, err)
			}
		}
	}
	return nil
}

// holdAll holds every simulated node before the first build.
func (s *stack) holdAll(t *testing.T) {
	t.Helper()
	nodes, err := s.simNodes(context.Background())
	if err == nil {
		err = s.holdFree(context.Background(), nodes)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// drive runs until ctx ends, deciding each build (and rebuild): a server whose name
// starts with failPrefix has its node deleted out-of-band (through the
// simulator's admin API) as soon as the node deploys; any other server's
// deploy is released from its hold. It returns the nodes it deleted, by
// server.
func (s *stack) drive(ctx context.Context, failPrefix string) func() map[string][]string {
	var mu sync.Mutex
	deleted := map[string][]string{}
	go func() {
		for ctx.Err() == nil {
			s.driveOnce(ctx, failPrefix, func(server, node string) {
				mu.Lock()
				deleted[server] = append(deleted[server], node)
				mu.Unlock()
			})
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]string{}
		for k, v := range deleted {
			out[k] = append([]string(nil), v...)
		}
		return out
	}
}

// driveOnce is one round of drive; errors are left to the next round (the
// test checks outcomes, not the driver).
func (s *stack) driveOnce(ctx context.Context, failPrefix string, onDelete func(server, node string)) {
	nodes, err := s.simNodes(ctx)
	if err != nil {
		return
	}
	_ = s.holdFree(ctx, nodes)
	list, err := s.servers(ctx)
	if err != nil {
		return
	}
	for _, sv := range list {
		n, ok := nodes[sv.Node]
		if (sv.Status != "BUILD" && sv.Status != "REBUILD") || !ok {
			continue
		}
		deploying := n.ProvisionState == "deploying" || n.ProvisionState == "wait call-back"
		switch {
		case deploying && strings.HasPrefix(sv.Name, failPrefix):
			if code, err := s.call(ctx, "POST", s.simURL+"/_sim/nodes/"+n.UUID+"/delete", "", nil, nil); err == nil && code == http.StatusNoContent {
				onDelete(sv.Name, n.UUID)
			}
		case n.ProvisionState == "wait call-back":
			_, _ = s.call(ctx, "POST", s.simURL+"/_sim/nodes/"+n.UUID+"/release-deploy", "", nil, nil)
		}
	}
}
