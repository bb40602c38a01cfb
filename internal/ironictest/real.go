package ironictest

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"
)

// Paths of Debian's Ironic (ironic-common). /usr/bin/ironic runs the API and
// the conductor in one process.
const (
	ironicBin = "/usr/bin/ironic"
	dbsyncBin = "/usr/bin/ironic-dbsync"
)

// Timings of the real Ironic's process management.
const (
	startTimeout = 60 * time.Second       // cold start measured at 7–9 s, warm 3–4 s
	startPoll    = 50 * time.Millisecond  // GET /v1 while starting
	termGrace    = 5 * time.Second        // SIGTERM, then SIGKILL
	portAttempts = 3                      // a port found shared is tried again
	logTailLines = 20                     // shown when start fails or the test failed
	startupProbe = 500 * time.Millisecond // per-request timeout while starting
)

// RealOptions configures a real Ironic (see Options for the fields).
type RealOptions Options

// StartReal starts a real Ironic on a free loopback port with a fresh SQLite
// database and stops it when the test ends. It skips the test when
// /usr/bin/ironic is missing and INGOT_TEST_IRONIC is not set, and fails it
// when INGOT_TEST_IRONIC=1 and Ironic cannot run, or when it is installed
// but does not start. Costs 3–4 s (first start on a machine: up to 9 s).
func StartReal(t testing.TB, opts RealOptions) *Env {
	t.Helper()
	return StartRealMany(t, opts)[0]
}

// StartRealMany starts one real Ironic per options value, concurrently (a
// start is mostly Python imports: two run in about the time of one and a half).
// Same skip and failure rules as StartReal.
func StartRealMany(t testing.TB, opts ...RealOptions) []*Env {
	t.Helper()
	skipUnlessInstalled(t)
	envs := make([]*Env, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			envs[i], errs[i] = startReal(t, o)
		}()
	}
	wg.Wait()
	// One cleanup stops them all at once (a SIGTERM'd Ironic takes 0.7 s
	// to exit, longer while a deploy is in flight). It runs before the
	// TempDirs are removed, so a failed test still shows the logs.
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, e := range envs {
			if e == nil {
				continue
			}
			if t.Failed() {
				t.Logf("ironictest: last lines of %s:\n%s", e.proc.log, testproc.Tail(e.proc.log, logTailLines, "eventlet.wsgi.server"))
			}
			wg.Add(1)
			go func() { defer wg.Done(); e.proc.stop() }()
		}
		wg.Wait()
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("ironictest: start real Ironic: %v", err)
	}
	return envs
}

// RealInstalled reports whether Debian's Ironic is installed here.
func RealInstalled() bool {
	for _, bin := range []string{ironicBin, dbsyncBin} {
		if _, err := os.Stat(bin); err != nil {
			return false
		}
	}
	return true
}

func skipUnlessInstalled(t testing.TB) {
	t.Helper()
	for _, bin := range []string{ironicBin, dbsyncBin} {
		if _, err := os.Stat(bin); err != nil {
			if RealWanted() {
				t.Fatalf("ironictest: %s=1 but %s is missing (run .ci/install-ironic.sh)", EnvVar, bin)
			}
			t.Skipf("real Ironic not installed (%s missing; run .ci/install-ironic.sh, or set %s=1 to make this a failure)", bin, EnvVar)
		}
	}
}

// startReal never calls t.Fatal (it runs on other goroutines); it uses t only
// for TempDir, which is safe there. The caller stops the process.
func startReal(t testing.TB, opts RealOptions) (*Env, error) {
	if opts.CallbackTimeout <= 0 {
		opts.CallbackTimeout = DefaultCallbackTimeout
	}
	cb := ceilSeconds(opts.CallbackTimeout)
	delay := 0
	if opts.DeployDelay > 0 {
		delay = ceilSeconds(opts.DeployDelay)
	}
	schema, err := schemaTemplate()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "ironic.sqlite")
	if err := copyFile(schema, db); err != nil {
		return nil, err
	}
	p := &realProc{dir: dir, log: filepath.Join(dir, "ironic.log")}
	var lastErr error
	for range portAttempts {
		port, err := testproc.FreePort()
		if err != nil {
			return nil, err
		}
		p.port = port
		p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
		p.conf = filepath.Join(dir, "ironic.conf")
		params := configParams{
			Port: port, DB: db, LockDir: dir,
			CallbackTimeout: cb, DeployDelay: delay, Keystone: opts.Keystone,
			NotifyURL: opts.Notifications, Neutron: opts.Neutron, Glance: opts.Glance, Cinder: opts.Cinder,
		}
		if opts.ShowInstanceSecrets {
			params.PolicyFile = filepath.Join(dir, "policy.yaml")
			if err := os.WriteFile(params.PolicyFile, []byte(`"show_instance_secrets": "@"`+"\n"), 0o600); err != nil {
				return nil, err
			}
		}
		cfg := renderConfig(params)
		if err := os.WriteFile(p.conf, []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		lastErr = p.start()
		if lastErr == nil {
			break
		}
		if !errors.Is(lastErr, errPortShared) {
			return nil, lastErr
		}
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return &Env{
		URL:             p.url,
		Real:            true,
		CallbackTimeout: time.Duration(cb) * time.Second,
		DeployDelay:     time.Duration(delay) * time.Second,
		proc:            p,
		hc:              newHTTPClient(),
	}, nil
}

func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

func newHTTPClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second}
}
