package servicetest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"
)

// Timings of a service's process.
const (
	startTimeout = 90 * time.Second // Neutron answers 4–7 s after its start on an idle machine
	startPoll    = 100 * time.Millisecond
	termGrace    = 5 * time.Second
	logTail      = 30
)

// Command is one service to run.
type Command struct {
	// Name names the service in messages and its log file (Dir/Name.log).
	Name string
	Dir  string
	Argv []string
	// Env is the whole environment; PATH, HOME and LANG are added.
	Env []string
	// Port is the port the service listens on; Ready is the URL polled
	// until it answers below 500. A daemon that serves nothing (Nova's
	// conductor, scheduler and compute) has neither: Run returns once it
	// is started.
	Port  int
	Ready string
}

// Proc is one running service (a process group).
type Proc struct {
	// Log is the service's stdout and stderr.
	Log string
	// StartTime is from the exec to the first answer of Ready.
	StartTime time.Duration

	cmd  *exec.Cmd
	done chan struct{}
}

// Run starts c under setsid, waits until c.Ready answers and stops the
// service when the test ends (showing its log's tail if the test failed).
func Run(t testing.TB, c Command) *Proc {
	t.Helper()
	p, err := run(c)
	if p != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("servicetest: last lines of %s:\n%s", p.Log, testproc.Tail(p.Log, logTail))
			}
			p.Stop()
		})
	}
	if err != nil {
		t.Fatalf("servicetest: %s: %v", c.Name, err)
	}
	return p
}

func run(c Command) (*Proc, error) {
	if c.Port != 0 {
		if err := portFree(c.Port); err != nil {
			return nil, fmt.Errorf("port %d taken: %w", c.Port, err)
		}
	}
	p := &Proc{Log: filepath.Join(c.Dir, c.Name+".log"), done: make(chan struct{})}
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + c.Dir, "LANG=C.UTF-8"}, c.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	p.cmd = cmd
	go func() { _ = cmd.Wait(); close(p.done) }()
	if c.Ready == "" {
		p.StartTime = time.Since(begin)
		return p, nil
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-p.done:
			return p, fmt.Errorf("exited while starting; last lines of %s:\n%s", p.Log, testproc.Tail(p.Log, logTail))
		default:
		}
		if resp, err := hc.Get(c.Ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				p.StartTime = time.Since(begin)
				return p, nil
			}
		}
		if time.Since(begin) > startTimeout {
			return p, fmt.Errorf("%s not answering after %s; last lines of %s:\n%s", c.Ready, startTimeout, p.Log, testproc.Tail(p.Log, logTail))
		}
		time.Sleep(startPoll)
	}
}

// Stop: SIGTERM to the group, SIGKILL after termGrace. Idempotent.
func (p *Proc) Stop() {
	if p.cmd == nil {
		return
	}
	testproc.StopGroup(p.cmd.Process.Pid, p.done, termGrace)
}

// RSS sums the resident memory of the service's process group (Linux /proc)
// and counts its processes.
func (p *Proc) RSS() (bytes int64, procs int) {
	if p.cmd == nil {
		return 0, 0
	}
	for pid := range testproc.GroupStats(p.cmd.Process.Pid) {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
				bytes += n * 1024
				procs++
			}
		}
	}
	return bytes, procs
}

// Exec runs a one-off command (a db sync) in dir with env and returns its
// error with the output.
func Exec(dir string, env []string, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + dir, "LANG=C.UTF-8"}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, lastLines(string(out), logTail))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
