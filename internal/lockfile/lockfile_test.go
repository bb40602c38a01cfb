package lockfile

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSecondAcquireNamesTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ingot.db.lock")
	since := time.Date(2025, 6, 16, 10, 47, 0, 0, time.UTC)
	l, err := Acquire(path, Holder{PID: os.Getpid(), Since: since})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Update(Holder{PID: os.Getpid(), Listen: "http://127.0.0.1:8774", Since: since}); err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(path, Holder{PID: 1})
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("second Acquire: %v, want a HeldError", err)
	}
	want := "held by pid " + strconv.Itoa(os.Getpid()) + ", serving http://127.0.0.1:8774, since 2025-06-16T10:47:00Z (lock " + path + ")"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode: %v %v", fi.Mode(), err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(path, Holder{PID: os.Getpid()})
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

// TestKilledHolderReleases: a holder killed with SIGKILL leaves the lock
// free (the kernel drops it), while it lives the lock is refused.
func TestKilledHolderReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ingot.db.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKFILE_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("child: %q %v", line, err)
	}
	_, err = Acquire(path, Holder{PID: os.Getpid()})
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.PID != cmd.Process.Pid {
		t.Fatalf("Acquire while the child holds it: %v, want held by pid %d", err, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	l, err := Acquire(path, Holder{PID: os.Getpid()})
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	l.Release()
}

// TestMain doubles as the child of TestKilledHolderReleases: with
// LOCKFILE_HOLD set it takes that lock, says so and waits to be killed.
func TestMain(m *testing.M) {
	if path := os.Getenv("LOCKFILE_HOLD"); path != "" {
		if _, err := Acquire(path, Holder{PID: os.Getpid(), Since: time.Now()}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(10 * time.Minute) // killed by the test long before
	}
	os.Exit(m.Run())
}
