package ironictest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"

	"github.com/ingot-dev/ingot/internal/poll"
)

// errPortShared: the port we picked is also served by another process.
var errPortShared = errors.New("port shared with another listener")

// realProc is one /usr/bin/ironic process (API and conductor), restartable on
// the same config, database and port.
type realProc struct {
	dir, conf, log, url string
	port                int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// start runs Ironic under setsid (its own process group) and waits until
// GET /v1 answers.
func (p *realProc) start() error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd)
	// NOTE: eventlet binds with SO_REUSEPORT, so a second Ironic on a busy
	// port starts "fine" and the kernel splits requests between the two
	// (docs/ironic.md §0). Check the port right before the start, and count
	// the listeners once it is up.
	if err := portFree(p.port); err != nil {
		return fmt.Errorf("%w: %v", errPortShared, err)
	}
	cmd := exec.Command(ironicBin, "--config-file", p.conf)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", ironicBin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()

	if err := p.waitUp(done); err != nil {
		p.kill(syscall.SIGKILL)
		if p.logSince(logStart, "Address already in use") {
			// Taken by a socket without SO_REUSEPORT since portFree.
			return fmt.Errorf("%w: 127.0.0.1:%d in use", errPortShared, p.port)
		}
		return fmt.Errorf("ironic on %s did not come up: %v (after %s); last lines of %s:\n%s",
			p.url, err, time.Since(begin).Round(time.Millisecond), p.log, testproc.Tail(p.log, logTailLines, "eventlet.wsgi.server"))
	}
	if n, err := listeners(p.port); err == nil && n != 1 {
		p.kill(syscall.SIGKILL)
		return fmt.Errorf("%w: %d listeners on 127.0.0.1:%d", errPortShared, n, p.port)
	}
	return nil
}

// logSince reports whether the log, from offset on, contains s.
func (p *realProc) logSince(offset int64, s string) bool {
	b, err := os.ReadFile(p.log)
	if err != nil || int64(len(b)) < offset {
		return false
	}
	return strings.Contains(string(b[offset:]), s)
}

func (p *realProc) waitUp(done <-chan struct{}) error {
	hc := &http.Client{Timeout: startupProbe}
	return poll.WaitPaced(context.Background(), startTimeout, startPoll, func() (bool, string, error) {
		if testproc.Exited(done) {
			return false, "", errors.New("process exited")
		}
		resp, err := hc.Get(p.url + "/v1")
		if err != nil {
			return false, err.Error(), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, "GET /v1: " + resp.Status, nil
	})
}

// kill sends sig to the process group and waits for the process to exit.
func (p *realProc) kill(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || testproc.Exited(done) {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	<-done
}

// stop: SIGTERM to the group, SIGKILL after termGrace. Idempotent.
func (p *realProc) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || testproc.Exited(done) {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(termGrace):
	}
	if !testproc.Exited(done) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// restart: SIGKILL, then start again on the same config, database and port.
func (p *realProc) restart() error {
	p.kill(syscall.SIGKILL)
	var err error
	// The freed port may take a moment to be seen free.
	for i := 0; i < 20; i++ {
		if err = p.start(); !errors.Is(err, errPortShared) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{} // handed out by this test binary
)

// portFree binds the port without SO_REUSEPORT: this fails if anyone,
// including an eventlet listener with SO_REUSEPORT, holds it.
func portFree(port int) error {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return l.Close()
}

// listeners counts the TCP sockets listening on 127.0.0.1:port (Linux
// /proc/net/tcp; an error elsewhere).
func listeners(port int) (int, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	want := fmt.Sprintf("0100007F:%04X", port)
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st ...; st 0A is LISTEN.
		if len(fields) > 3 && fields[1] == want && fields[3] == "0A" {
			n++
		}
	}
	return n, sc.Err()
}
