package cindertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// termGrace is how long a daemon gets after SIGTERM (Cinder's take ~4 s).
const termGrace = 10 * time.Second

// daemon is one Cinder service in its own process group.
type daemon struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
}

// cleanEnv runs Debian's Python with nothing of the caller's Python setup;
// dir/py holds the fake driver.
func cleanEnv(dir string) []string {
	return []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "LANG=C.UTF-8",
		"PYTHONPATH=" + filepath.Join(dir, "py")}
}

// run runs a one-shot command (cinder-manage) and returns its error with output.
func run(ctx context.Context, dir, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, cleanEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return nil
}

// startDaemon starts bin with the directory's cinder.conf, logging to
// dir/<name>.log.
func startDaemon(dir, bin string) (*daemon, error) {
	name := filepath.Base(bin)
	d := &daemon{name: name, log: filepath.Join(dir, name+".log")}
	out, err := os.OpenFile(filepath.Join(dir, name+".out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(bin, "--config-file", filepath.Join(dir, "cinder.conf"), "--log-file", d.log)
	cmd.Dir, cmd.Env = dir, cleanEnv(dir)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d.cmd, d.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(d.done) }()
	return d, nil
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// stop: SIGTERM to the group, SIGKILL after termGrace.
func (d *daemon) stop() {
	if d == nil || d.exited() {
		return
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(termGrace):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
}

// rss sums VmRSS (KiB) over the daemon's process group (cinder-api forks
// its worker).
func (d *daemon) rss() int64 {
	if d == nil || d.exited() {
		return 0
	}
	pgid := d.cmd.Process.Pid
	entries, _ := os.ReadDir("/proc")
	var total int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += kb
			}
		}
	}
	return total
}
