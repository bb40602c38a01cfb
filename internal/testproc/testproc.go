// Package testproc holds what every test harness that runs another
// program needs (Ironic, Keystone, Neutron, Glance, Cinder): a free
// loopback port, the end of a log, whether a process has exited, and one
// JSON call with a token.
package testproc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{} // handed out by this test binary
)

// FreePort picks a loopback port no listener holds and this test binary
// has not handed out before (two services started side by side could
// otherwise be given the same one).
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !portsUsed[port] {
			portsUsed[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port after 100 tries")
}

// Tail returns the last n lines of a log file, leaving out the lines that
// hold any of drop (e.g. an access log's, which would bury the rest).
func Tail(path string, n int, drop ...string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if !containsAny(l, drop) {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Exited reports whether done (closed when a process ends) is closed.
func Exited(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Call does one JSON call with a Keystone token; a non-2xx answer is an
// error carrying the status and body.
func Call(hc *http.Client, token, method, url string, body, out any) error {
	return CallWith(hc, token, method, url, body, out, nil)
}

// CallWith is Call with extra headers (a microversion).
func CallWith(hc *http.Client, token, method, url string, body, out any, headers map[string]string) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, strings.TrimPrefix(url, "http://"), resp.Status, raw)
	}
	if out != nil && len(raw) > 0 {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// StopGroup ends the process group of pid: SIGTERM, then SIGKILL once
// grace has passed; it returns when done (closed at the process's exit)
// is. Idempotent once done is closed.
func StopGroup(pid int, done <-chan struct{}, grace time.Duration) {
	if Exited(done) {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
}
