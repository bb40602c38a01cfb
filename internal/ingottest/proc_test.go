package ingottest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
)

// The processes here are shell scripts that log as ingot does: what Proc
// does with a process does not depend on which binary it is.

func sh(t *testing.T, script string) *Proc {
	t.Helper()
	return Start(t, "/bin/sh", Options{}, "-c", script)
}

// readyz answers 503 to the first n probes, then 200.
func readyz(t *testing.T, n int32) (*httptest.Server, *atomic.Int32) {
	var probes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || probes.Add(1) <= n {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &probes
}

func servingLine(api string) string {
	return fmt.Sprintf(`echo 'level=INFO msg="built-in simulated Ironic" url=http://127.0.0.1:6385 nodes=4'; `+
		`echo 'level=INFO msg="ingot serving" api=%s/v2.1 console=%s/ui/'`, api, api)
}

func TestServingWaitsForTheLineThenReadyz(t *testing.T) {
	srv, probes := readyz(t, 2)
	p := sh(t, "sleep 0.2; "+servingLine(srv.URL)+"; exec sleep 60").Serving()
	if p.API != srv.URL || p.Sim != "http://127.0.0.1:6385" {
		t.Fatalf("API %q, Sim %q; want %q and the simulator's", p.API, p.Sim, srv.URL)
	}
	if n := probes.Load(); n != 3 {
		t.Fatalf("/readyz probed %d times, want until its first 200 (3)", n)
	}
	if !p.Alive() {
		t.Fatal("the process exited")
	}
}

func TestServingLeavesAProcessThatExitedAfterTheLine(t *testing.T) {
	srv, _ := readyz(t, 1000)
	p := sh(t, servingLine(srv.URL)+"; exit 3").Serving()
	if p.API != srv.URL || p.ExitCode() != 3 {
		t.Fatalf("API %q, exit %d; want %q, 3", p.API, p.ExitCode(), srv.URL)
	}
}

// fatalTB is the test's TB whose Fatalf records and ends the goroutine.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestWaitLogFailsWhenTheProcessExitsFirst(t *testing.T) {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		Start(tb, "/bin/sh", Options{}, "-c", "echo starting; echo boom >&2; exit 2").WaitLog(regexp.MustCompile(`never (x)`), time.Minute)
		tb.msg = "returned"
	}()
	<-done
	if !strings.Contains(tb.msg, "exit status 2") || !strings.Contains(tb.msg, "boom") {
		t.Fatalf("WaitLog on an exited process: %q, want its exit and its log", tb.msg)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("WaitLog took %s to see the exit", took)
	}
}

func TestWaitLogReturnsTheFirstGroup(t *testing.T) {
	p := sh(t, "echo 'ironic simulator listening on http://127.0.0.1:4242 (…)'; exec sleep 60")
	if got := p.WaitLog(regexp.MustCompile(`listening on (http://\S+)`), time.Minute); got != "http://127.0.0.1:4242" {
		t.Fatalf("WaitLog: %q", got)
	}
}

// groupGone reports whether no process of the group is left.
func groupGone(pgid int) bool { return syscall.Kill(-pgid, 0) == syscall.ESRCH }

func TestKillEndsTheWholeGroup(t *testing.T) {
	p := sh(t, "sleep 60 & echo started; wait")
	p.WaitLog(regexp.MustCompile(`(started)`), time.Minute)
	p.Pause() // a paused process is killed as well
	p.Kill()
	if sig := p.KilledBy(); sig != syscall.SIGKILL {
		t.Fatalf("killed by %v, want SIGKILL", sig)
	}
	poll.Until(t, 10*time.Second, "the child sleep gone", func() (bool, string) { return groupGone(p.Pid()), "still there" })
}

func TestStopIsGraceful(t *testing.T) {
	p := sh(t, "trap 'echo bye; exit 0' TERM; echo up; while :; do sleep 0.05; done")
	p.WaitLog(regexp.MustCompile(`(up)`), time.Minute)
	p.Stop()
	if p.ExitCode() != 0 || p.KilledBy() != 0 || !strings.Contains(p.Output(), "bye") {
		t.Fatalf("after Stop: exit %d, signal %v, log %q; want a clean exit by its trap", p.ExitCode(), p.KilledBy(), p.Output())
	}
}

// state is the process's state letter in /proc (T: stopped).
func state(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return err.Error()
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return rest[:1]
}

func TestPauseAndResume(t *testing.T) {
	p := sh(t, "echo up; exec sleep 60")
	p.WaitLog(regexp.MustCompile(`(up)`), time.Minute)
	p.Pause()
	poll.Until(t, 10*time.Second, "stopped", func() (bool, string) { s := state(p.Pid()); return s == "T", s })
	p.Resume()
	poll.Until(t, 10*time.Second, "running again", func() (bool, string) { s := state(p.Pid()); return s != "T", s })
}

func TestBinaryWantsMain(t *testing.T) {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); Binary(tb); tb.msg = "built without Main" }()
	<-done
	if !strings.Contains(tb.msg, "ingottest.Main") {
		t.Fatalf("Binary without Main: %q", tb.msg)
	}
}
