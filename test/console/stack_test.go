package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// bin is the ingot binary, built once by TestMain as a user builds it.
var bin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ingot-console-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "ingot")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/ingot-dev/ingot/cmd/ingot")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "console suite: build ingot:", err)
		return 1
	}
	return m.Run()
}

// stack is one `ingot serve` with its simulator on a port we chose.
type stack struct {
	t      *testing.T
	url    string // http://127.0.0.1:PORT
	simURL string
	log    string
	hc     *http.Client
	token  string // X-Auth-Token of API calls ("" in noauth)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startIngot runs `ingot serve --config` with extra configuration appended.
func startIngot(t *testing.T, nodes int, deploy time.Duration, extra string) *stack {
	t.Helper()
	dir := t.TempDir()
	port, simPort := freePort(t), freePort(t)
	cfg := fmt.Sprintf(`listen: 127.0.0.1:%d
database: %s
poll_interval: 100ms
max_attempts: 3
build_timeout: 2m
log_level: info
ironic:
  url: sim
  sim: {nodes: %d, resource_class: baremetal, deploy_time: %s, undeploy_time: 200ms, listen: "127.0.0.1:%d"}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2"}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
%s`, port, filepath.Join(dir, "ingot.db"), nodes, deploy, simPort, extra)
	path := filepath.Join(dir, "ingot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port), simURL: fmt.Sprintf("http://127.0.0.1:%d", simPort),
		log: filepath.Join(dir, "ingot.log"), hc: &http.Client{Timeout: 10 * time.Second}}
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(s.log)
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("ingot log (tail):\n%s", b)
		}
	})
	waitFor(t, 30*time.Second, "ingot ready", func() (bool, string) {
		select {
		case <-done:
			b, _ := os.ReadFile(s.log)
			t.Fatalf("ingot exited:\n%s", b)
		default:
		}
		resp, err := s.hc.Get(s.url + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	return s
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
	waitFor(s.t, within, id+" "+status, func() (bool, string) {
		var code int
		got, code = s.get(id)
		if got.Status == "ERROR" && status != "ERROR" {
			s.t.Fatalf("server %s went ERROR", id)
		}
		return got.Status == status, fmt.Sprintf("%d %s/%s", code, got.Status, got.Phase)
	})
	return got
}

// waitFor polls cond every 50 ms until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, within, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
