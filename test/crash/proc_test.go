package crash

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bin is the ingot binary built with -tags crashpoints by TestMain.
var bin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ingot-crash-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "ingot")
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash suite: no go command to build ingot:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, "build", "-tags", "crashpoints", "-o", bin, "github.com/ingot-dev/ingot/cmd/ingot")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "crash suite: build ingot -tags crashpoints:", err)
		return 1
	}
	return m.Run()
}

// proc is one running `ingot serve`, in its own process group.
type proc struct {
	t    testing.TB
	cmd  *exec.Cmd
	log  string
	api  string // http://host:port
	done chan struct{}
	err  error // the exit status, once done is closed
}

var servingRe = regexp.MustCompile(`msg="ingot serving" api=(http://\S+)/v2\.1`)

// start runs ingot on the configuration with extra environment variables
// and waits until its API answers. It is killed when the test ends.
func start(t testing.TB, config, logPath string, env ...string) *proc {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", config, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start ingot: %v", err)
	}
	p := &proc{t: t, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(p.kill)
	deadline := time.Now().Add(30 * time.Second)
	for p.api == "" {
		if m := servingRe.FindStringSubmatch(readFile(logPath)); m != nil {
			p.api = m[1]
			break
		}
		select {
		case <-p.done:
			// It may have reached its crash point before we read the line:
			// the caller deals with a dead process.
			if m := servingRe.FindStringSubmatch(readFile(logPath)); m != nil {
				p.api = m[1]
				return p
			}
			t.Fatalf("ingot exited before serving (%v):\n%s", p.err, tail(logPath))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("ingot not serving after 30s:\n%s", tail(logPath))
		}
	}
	return p
}

// kill sends SIGKILL to the process group and waits for the exit.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// stop asks for a graceful shutdown (SIGTERM), then kills after 15 s.
func (p *proc) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.t.Errorf("ingot ignored SIGTERM for 15s; killing it")
		p.kill()
	}
}

// killedBy9 waits for the process to die of SIGKILL (its crash point).
func (p *proc) killedBy9(timeout time.Duration) bool {
	select {
	case <-p.done:
	case <-time.After(timeout):
		return false
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	p.t.Errorf("ingot exited with %v, not SIGKILL:\n%s", p.err, tail(p.log))
	return false
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func tail(path string) string {
	lines := strings.Split(strings.TrimRight(readFile(path), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// readLines returns the lines of a file (the crash-point log).
func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}
