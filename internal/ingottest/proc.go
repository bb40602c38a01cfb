package ingottest

import (
	"context"
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

	"github.com/ingot-dev/ingot/internal/poll"
)

const (
	// startTimeout bounds the wait for a process to serve (a cold start on
	// a busy machine, migrations on PostgreSQL).
	startTimeout = 60 * time.Second
	// stopGrace is how long a SIGTERM may take before the test says so
	// and kills.
	stopGrace = 30 * time.Second
	// tailLines is how much of a log a failure shows.
	tailLines = 40
)

var (
	servingRe = regexp.MustCompile(`msg="ingot serving" api=(http://\S+)/v2\.1`)
	simRe     = regexp.MustCompile(`msg="built-in simulated Ironic" url=(http://\S+)`)
)

// Options are how Start runs the binary.
type Options struct {
	Log string   // the log file, created or truncated (default: ingot.log in a new t.TempDir())
	Env []string // added to the test's environment, e.g. "INGOT_CRASH_AT=…"
}

// Proc is one running ingot process, in a process group of its own.
type Proc struct {
	t    testing.TB
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit status, once done is closed

	Log string // the path of its log (stdout and stderr)
	API string // http://host:port, once Serving
	Sim string // the built-in simulated Ironic's URL, once Serving (if it runs one)
}

// Start runs bin with args, without waiting for anything. The process is
// killed (with whatever it started) when the test ends, or when the test
// binary dies; the end of its log is shown if the test failed.
func Start(t testing.TB, bin string, o Options, args ...string) *Proc {
	t.Helper()
	if o.Log == "" {
		o.Log = filepath.Join(t.TempDir(), "ingot.log")
	}
	f, err := os.OpenFile(o.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatalf("ingottest: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("ingottest: start %s: %v", bin, err)
	}
	p := &Proc{t: t, cmd: cmd, Log: o.Log, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("ingot %s (%s), last lines of %s:\n%s", strings.Join(args, " "), p.status(), p.Log, p.Tail(tailLines))
		}
	})
	return p
}

// Serve starts `ingot serve --config config` on a free loopback port and
// waits until it serves.
func Serve(t testing.TB, bin, config string, o Options) *Proc {
	t.Helper()
	return Start(t, bin, o, "serve", "--config", config, "--listen", "127.0.0.1:0").Serving()
}

// Serving waits until the process logs that it serves, sets API (and Sim
// when it runs the built-in simulator), then waits until /readyz answers
// 200. A process that exits after it served is left to the caller (it may
// have reached a crash point); one that exits before fails the test.
func (p *Proc) Serving() *Proc {
	p.t.Helper()
	url := p.WaitLog(servingRe, startTimeout)
	p.API = url
	if m := simRe.FindStringSubmatch(p.Output()); m != nil {
		p.Sim = m[1]
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	err := poll.Wait(context.Background(), startTimeout, func() (bool, string, error) {
		if !p.Alive() {
			return true, "", nil
		}
		resp, err := hc.Get(p.API + "/readyz")
		if err != nil {
			return false, err.Error(), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	})
	if err != nil {
		p.t.Fatalf("ingottest: %s/readyz: %v\n%s", p.API, err, p.Tail(tailLines))
	}
	return p
}

// WaitLog waits until re matches the log and returns its first group. It
// fails the test after timeout, or when the process exits first.
func (p *Proc) WaitLog(re *regexp.Regexp, timeout time.Duration) string {
	p.t.Helper()
	var got string
	err := poll.Wait(context.Background(), timeout, func() (bool, string, error) {
		exited := !p.Alive() // before the read: the last lines are in by then
		if m := re.FindStringSubmatch(p.Output()); m != nil {
			got = m[1]
			return true, "", nil
		}
		if exited {
			return false, "", fmt.Errorf("exited (%s)", p.status())
		}
		return false, "not in the log yet", nil
	})
	if err != nil {
		p.t.Fatalf("ingottest: ingot %s: no %s: %v\n%s", strings.Join(p.cmd.Args[1:], " "), re, err, p.Tail(tailLines))
	}
	return got
}

// Signal sends sig to the process group and returns.
func (p *Proc) Signal(sig syscall.Signal) { _ = syscall.Kill(-p.cmd.Process.Pid, sig) }

// Pause stops the process group (SIGSTOP): a replica that hangs.
func (p *Proc) Pause() { p.Signal(syscall.SIGSTOP) }

// Resume continues a paused process group (SIGCONT).
func (p *Proc) Resume() { p.Signal(syscall.SIGCONT) }

// Stop asks for a graceful shutdown (SIGTERM) and waits for the exit; a
// process still running after 30 s is an error of the test, and killed.
// It does nothing to a process that has exited.
func (p *Proc) Stop() {
	if !p.Alive() {
		return
	}
	p.Signal(syscall.SIGTERM)
	if !p.Exited(stopGrace) {
		p.t.Errorf("ingottest: ingot ignored SIGTERM for %s; killing it", stopGrace)
		p.Kill()
	}
}

// Kill sends SIGKILL to the process group (and SIGCONT, should it be
// paused) and waits for the exit. It does nothing to a process that has
// exited.
func (p *Proc) Kill() {
	if !p.Alive() {
		return
	}
	p.Signal(syscall.SIGKILL)
	p.Signal(syscall.SIGCONT)
	<-p.done
}

// Exited waits up to timeout for the process to exit and reports whether
// it did.
func (p *Proc) Exited(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		return false
	}
}

// Done is closed once the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Alive reports whether the process has not exited yet.
func (p *Proc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pid is the process's id (its process group's too).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// ExitCode is the exit status of an exited process: -1 when a signal
// ended it.
func (p *Proc) ExitCode() int {
	<-p.done
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		return -1
	}
	return 0
}

// KilledBy is the signal that ended an exited process (0 if none did).
func (p *Proc) KilledBy() syscall.Signal {
	<-p.done
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

func (p *Proc) status() string {
	if p.Alive() {
		return "running"
	}
	if p.err == nil {
		return "exit 0"
	}
	return p.err.Error()
}

// Output is the log so far.
func (p *Proc) Output() string {
	b, _ := os.ReadFile(p.Log)
	return string(b)
}

// Tail is the log's last n lines.
func (p *Proc) Tail(n int) string { return Tail(p.Output(), n) }

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
