package ironic_test

// Development harness: a real Ironic started by this package's tests until
// internal/ironictest builds. Replace with ironictest.Start once it does.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

type harness struct {
	URL string
	hc  *http.Client
}

func startHarness(t *testing.T, deployDelay int) *harness {
	t.Helper()
	if _, err := os.Stat("/usr/bin/ironic"); err != nil {
		t.Skip("real Ironic not installed")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := fmt.Sprintf(`[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = localhost
enabled_hardware_types = fake-hardware
enabled_boot_interfaces = fake
enabled_deploy_interfaces = fake
enabled_management_interfaces = fake
enabled_power_interfaces = fake
enabled_network_interfaces = noop
enabled_storage_interfaces = noop,external,fake
[api]
host_ip = 127.0.0.1
port = %d
[database]
connection = sqlite:///%s/ironic.sqlite
[dhcp]
dhcp_provider = none
[conductor]
automated_clean = false
node_locked_retry_attempts = 1
[nova]
send_power_notifications = false
[fake]
deploy_delay = %d
[oslo_concurrency]
lock_path = %s
`, port, dir, deployDelay, dir)
	cf := filepath.Join(dir, "ironic.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("/usr/bin/ironic-dbsync", "--config-file", cf, "create_schema").CombinedOutput(); err != nil {
		t.Fatalf("dbsync: %v\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "ironic.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/ironic", "--config-file", cf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	h := &harness{URL: fmt.Sprintf("http://127.0.0.1:%d", port), hc: &http.Client{Timeout: 10 * time.Second}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := h.hc.Get(h.URL + "/v1")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ironic did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return h
}

// raw sends one call at 1.78 and returns status and body.
func (h *harness) raw(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	return h.rawVersion(t, "1.78", method, path, body)
}

func (h *harness) rawVersion(t *testing.T, version, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.URL+path, rd)
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// enroll creates an available fake node (POST at 1.10 creates it available,
// ironic-facts.md §2) and sets its resource class; returns its UUID.
func (h *harness) enroll(t *testing.T, name, rc string) string {
	t.Helper()
	st, b := h.rawVersion(t, "1.10", "POST", "/v1/nodes", map[string]any{"name": name, "driver": "fake-hardware"})
	if st != 201 {
		t.Fatalf("enroll %s: %d %s", name, st, b)
	}
	var n struct {
		UUID string `json:"uuid"`
	}
	_ = json.Unmarshal(b, &n)
	if rc != "" {
		st, b = h.raw(t, "PATCH", "/v1/nodes/"+n.UUID, []map[string]any{{"op": "add", "path": "/resource_class", "value": rc}})
		if st != 200 {
			t.Fatalf("resource class %s: %d %s", name, st, b)
		}
	}
	return n.UUID
}

// deleteNode deletes a node out of band (maintenance first).
func (h *harness) deleteNode(t *testing.T, id string) {
	t.Helper()
	if st, b := h.raw(t, "PUT", "/v1/nodes/"+id+"/maintenance", map[string]any{"reason": "test"}); st != 202 {
		t.Fatalf("maintenance: %d %s", st, b)
	}
	if st, b := h.raw(t, "DELETE", "/v1/nodes/"+id, nil); st != 204 {
		t.Fatalf("delete: %d %s", st, b)
	}
}

func (h *harness) setMaintenance(t *testing.T, id string) {
	t.Helper()
	if st, b := h.raw(t, "PUT", "/v1/nodes/"+id+"/maintenance", map[string]any{"reason": "test"}); st != 202 {
		t.Fatalf("maintenance: %d %s", st, b)
	}
}

func (h *harness) instanceInfo(t *testing.T, id string) map[string]any {
	t.Helper()
	st, b := h.raw(t, "GET", "/v1/nodes/"+id+"?fields=instance_info", nil)
	if st != 200 {
		t.Fatalf("get: %d %s", st, b)
	}
	var n struct {
		InstanceInfo map[string]any `json:"instance_info"`
	}
	_ = json.Unmarshal(b, &n)
	return n.InstanceInfo
}

var _ = strings.Contains
