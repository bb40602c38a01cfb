package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bin is the ingot binary, built once by TestMain as a user builds it.
var bin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ingot-serve-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "ingot")
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve suite: no go command to build ingot:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", bin, "github.com/ingot-dev/ingot/cmd/ingot")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "serve suite: build ingot:", err)
		return 1
	}
	return m.Run()
}

// proc is one running `ingot serve`, in its own process group.
type proc struct {
	t    testing.TB
	cmd  *exec.Cmd
	log  string
	api  string // http://host:port, once serving
	sim  string // the built-in simulator's URL, once serving
	done chan struct{}
	err  error // the exit status, once done is closed
}

var (
	servingRe = regexp.MustCompile(`msg="ingot serving" api=(http://\S+)/v2\.1`)
	simRe     = regexp.MustCompile(`msg="built-in simulated Ironic" url=(http://\S+)`)
)

// launch starts `ingot args...` with its output in logPath, without waiting.
// It is killed when the test ends.
func launch(t testing.TB, logPath string, args ...string) *proc {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start ingot: %v", err)
	}
	p := &proc{t: t, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() { p.signal(syscall.SIGKILL) })
	return p
}

// serving waits until the process says it serves, or fails the test when it
// exits first or takes more than 30 s.
func (p *proc) serving() *proc {
	p.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		out := readFile(p.log)
		if m := servingRe.FindStringSubmatch(out); m != nil {
			p.api = m[1]
			if m := simRe.FindStringSubmatch(out); m != nil {
				p.sim = m[1]
			}
			return p
		}
		select {
		case <-p.done:
			p.t.Fatalf("ingot exited before serving (%v):\n%s", p.err, readFile(p.log))
		case <-deadline:
			p.t.Fatalf("ingot not serving after 30s:\n%s", readFile(p.log))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signal sends sig to the process group and waits for the exit.
func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.t.Errorf("ingot ignored %v for 15s; killing it", sig)
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// exitCode is the process's exit status (-1 when killed by a signal).
func (p *proc) exitCode() int {
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		return -1
	}
	return 0
}

var hc = &http.Client{Timeout: 10 * time.Second}

// getJSON GETs url (Ironic's microversion 1.78 header set) into out.
func getJSON(t testing.TB, url string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
