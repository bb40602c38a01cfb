package crash

import (
	"bufio"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

// start runs ingot, built with -tags crashpoints, on the configuration
// with extra environment variables, and waits until it serves (or has
// reached its crash point after it served: the caller deals with a dead
// process). It is killed when the test ends.
func start(t testing.TB, config, logPath string, env ...string) *ingottest.Proc {
	t.Helper()
	return ingottest.Serve(t, ingottest.Binary(t, "crashpoints"), config, ingottest.Options{Log: logPath, Env: env})
}

// killedBy9 waits for the process to die of SIGKILL (its crash point).
// A process that did not reach its point within timeout is stopped: the
// run that follows needs the database it holds.
func killedBy9(t testing.TB, p *ingottest.Proc, timeout time.Duration) bool {
	t.Helper()
	if !p.Exited(timeout) {
		p.Stop()
		return false
	}
	if p.KilledBy() == syscall.SIGKILL {
		return true
	}
	t.Errorf("ingot exited with status %d, not by SIGKILL:\n%s", p.ExitCode(), p.Tail(30))
	return false
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
