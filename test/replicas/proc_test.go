package replicas

import (
	"bufio"
	"context"
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

// bin is the ingot binary, built once by TestMain as a user builds it.
var bin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ingot-replicas-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "ingot")
	gobin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicas suite: no go command to build ingot:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", bin, "github.com/ingot-dev/ingot/cmd/ingot")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "replicas suite: build ingot:", err)
		return 1
	}
	return m.Run()
}

// proc is one running process of the binary, in its own process group.
type proc struct {
	t    testing.TB
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // the exit status, once done is closed
}

// launch starts the binary with args, its output in logPath; it is killed
// when the test ends.
func launch(t testing.TB, logPath string, args ...string) *proc {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start ingot %v: %v", args, err)
	}
	p := &proc{t: t, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(p.kill)
	return p
}

// wait waits for the first match of re in the log (its first group).
func (p *proc) wait(re *regexp.Regexp, timeout time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindStringSubmatch(readFile(p.log)); m != nil {
			return m[1]
		}
		select {
		case <-p.done:
			p.t.Fatalf("%s exited (%v) before %s:\n%s", p.cmd.Args[1], p.err, re, tail(p.log))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %s after %s:\n%s", re, timeout, tail(p.log))
		}
	}
}

func (p *proc) signal(sig syscall.Signal) { _ = syscall.Kill(-p.cmd.Process.Pid, sig) }

// kill sends SIGKILL (SIGCONT first, for a stopped one) and waits.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.signal(syscall.SIGKILL)
	p.signal(syscall.SIGCONT)
	<-p.done
}

// stop asks for a graceful shutdown and waits for it.
func (p *proc) stop() {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Errorf("ingot ignored SIGTERM for 30s:\n%s", tail(p.log))
		p.kill()
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func tail(path string) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(readFile(path)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
