package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/poll"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

// stack is one `ingot serve` with its built-in simulator.
type stack struct {
	t      *testing.T
	url    string // http://127.0.0.1:PORT
	simURL string
	hc     *http.Client
	token  string // X-Auth-Token of API calls ("" in noauth)
}

// startIngot runs `ingot serve --config` with extra configuration appended.
func startIngot(t *testing.T, nodes int, deploy time.Duration, extra string) *stack {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`database: %s
poll_interval: 100ms
max_attempts: 3
build_timeout: 2m
log_level: info
ironic:
  url: sim
  sim: {nodes: %d, resource_class: baremetal, deploy_time: %s, undeploy_time: 200ms}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2"}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
%s`, filepath.Join(dir, "ingot.db"), nodes, deploy, extra)
	path := filepath.Join(dir, "ingot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := ingottest.Serve(t, ingottest.Binary(t), path, ingottest.Options{})
	return &stack{t: t, url: p.API, simURL: p.Sim, hc: &http.Client{Timeout: 10 * time.Second}}
}

// call sends a JSON request (compute 2.90) and decodes a 2xx answer.
func (s *stack) call(method, url string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("OpenStack-API-Version", "compute 2.90")
	req.Header.Set("X-Ingot-Extensions", "true")
	if s.token != "" {
		req.Header.Set("X-Auth-Token", s.token)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, url, err, raw)
		}
	}
	return resp.StatusCode
}

type server struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Phase    string `json:"ingot:phase"`
	Node     string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Attempts []struct {
		Node, Reason string
	} `json:"ingot:attempts"`
}

func (s *stack) create(name string) string {
	s.t.Helper()
	var out struct{ Server server }
	body := map[string]any{"server": map[string]any{"name": name, "imageRef": "debian-12", "flavorRef": "1", "networks": "auto"}}
	if code := s.call("POST", s.url+"/v2.1/servers", body, &out); code != http.StatusAccepted {
		s.t.Fatalf("create %s: %d", name, code)
	}
	return out.Server.ID
}

func (s *stack) get(id string) (server, int) {
	s.t.Helper()
	var out struct{ Server server }
	code := s.call("GET", s.url+"/v2.1/servers/"+id, nil, &out)
	return out.Server, code
}

func (s *stack) waitStatus(id, status string, within time.Duration) server {
	s.t.Helper()
	var got server
	poll.Until(s.t, within, id+" "+status, func() (bool, string) {
		var code int
		got, code = s.get(id)
		if got.Status == "ERROR" && status != "ERROR" {
			s.t.Fatalf("server %s went ERROR", id)
		}
		return got.Status == status, fmt.Sprintf("%d %s/%s", code, got.Status, got.Phase)
	})
	return got
}
