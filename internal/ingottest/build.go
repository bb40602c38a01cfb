// Package ingottest builds the ingot binary once per test binary and runs
// it as a user does (`ingot serve`, `ingot sim`): each process in its own
// process group with its output in a log file, waited for until it serves,
// stopped, killed or paused by signal, and killed when its test ends, the
// end of its log shown when the test failed.
//
// A suite that uses it calls Main from its TestMain, which removes the
// binaries once the tests have run.
package ingottest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const pkg = "github.com/ingot-dev/ingot/cmd/ingot"

// buildTimeout bounds one go build (a cold cache on a busy machine).
const buildTimeout = 5 * time.Minute

// builds is what this test binary built, one binary per set of tags.
var builds struct {
	mu   sync.Mutex
	dir  string // set by Main
	bins map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// Main runs the tests and then removes the binaries they built. Use it as
// `func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }`.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ingot-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingottest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	builds.mu.Lock()
	builds.dir = dir
	builds.mu.Unlock()
	return m.Run()
}

// Binary is the path of cmd/ingot built with tags (e.g. "crashpoints"),
// built at the first call in this test binary and shared after. It is
// built without the race detector, as users run it, whatever the tests
// run with.
func Binary(t testing.TB, tags ...string) string {
	t.Helper()
	return built(t, strings.Join(tags, ","), func(dir string) (string, error) { return goBuild(dir, tags) })
}

// built runs make once per key in this test binary (into Main's
// directory) and gives its path to every caller.
func built(t testing.TB, key string, make func(dir string) (string, error)) string {
	t.Helper()
	builds.mu.Lock()
	dir := builds.dir
	if builds.bins == nil {
		builds.bins = map[string]*build{}
	}
	b := builds.bins[key]
	if b == nil {
		b = &build{}
		builds.bins[key] = b
	}
	builds.mu.Unlock()
	if dir == "" {
		t.Fatal("ingottest: call ingottest.Main from the suite's TestMain")
	}
	b.once.Do(func() { b.path, b.err = make(dir) })
	if b.err != nil {
		t.Fatalf("ingottest: %v", b.err)
	}
	return b.path
}

func goBuild(dir string, tags []string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command to build ingot: %w", err)
	}
	name := "ingot"
	if len(tags) > 0 {
		name += "-" + strings.Join(tags, "-")
	}
	out := filepath.Join(dir, name)
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	// -race=false on the command line wins over a GOFLAGS=-race.
	cmd := exec.CommandContext(ctx, gobin, "build", "-race=false", "-tags", strings.Join(tags, ","), "-o", out, pkg)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s (tags %q): %w\n%s", pkg, tags, err, msg)
	}
	return out, nil
}
