package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"
)

// Cluster is a PostgreSQL server of one test's own (initdb in a temporary
// directory, on a free loopback port), for the tests that restart or stop
// the server: the machine's shared server cannot be restarted under the
// other suites running beside them. It is stopped when the test ends.
type Cluster struct {
	t    testing.TB
	dir  string
	bin  string
	port int
	// DSN is the cluster's postgres database (trust auth, user postgres).
	DSN string
}

// Private starts a Cluster, or skips the test (fails in CI) when Debian's
// PostgreSQL server binaries are not installed.
func Private(t testing.TB) *Cluster {
	t.Helper()
	bin, err := serverBin()
	if err != nil {
		if required() {
			t.Fatalf("pgtest: %v", err)
		}
		t.Skipf("pgtest: %v", err)
	}
	c := newCluster(t, bin)
	if out, err := c.as(filepath.Join(bin, "initdb"), "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	c.Start()
	return c
}

// newCluster is an empty cluster directory (owned by postgres when this
// process is root: initdb refuses to run as root) and a free port,
// stopped and removed when the test ends.
func newCluster(t testing.TB, bin string) *Cluster {
	t.Helper()
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "ingot-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, dir: dir, port: port, bin: bin,
		DSN: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	t.Cleanup(func() {
		_ = c.ctl(bin, "stop", "-m", "immediate")
		_ = os.RemoveAll(dir)
	})
	if err := c.ownByPostgres(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return c
}

// Start starts the server (again) and waits until it accepts connections.
func (c *Cluster) Start() {
	c.t.Helper()
	if err := c.ctl(c.bin, "start", "-w", "-t", "60", "-l", filepath.Join(c.dir, "log"),
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir)); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("pgtest: start: %v\n%s", err, log)
	}
}

// Stop stops the server (fast: sessions are ended, as a restart does).
func (c *Cluster) Stop() {
	c.t.Helper()
	if err := c.ctl(c.bin, "stop", "-w", "-m", "fast"); err != nil {
		c.t.Fatalf("pgtest: stop: %v", err)
	}
}

// Restart is Stop, then Start after down has passed.
func (c *Cluster) Restart(down time.Duration) {
	c.t.Helper()
	c.Stop()
	time.Sleep(down) // the outage being tested, not a wait for something
	c.Start()
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) ctl(bin string, args ...string) error {
	if bin == "" {
		return nil
	}
	out, err := c.as(filepath.Join(bin, "pg_ctl"), append([]string{"-D", c.data()}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %w\n%s", args, err, out)
	}
	return nil
}

// as runs a server binary as postgres when this process is root.
func (c *Cluster) as(name string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

func (c *Cluster) ownByPostgres() error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("no postgres user to own the cluster: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(c.dir, uid, gid)
}

// serverBin finds Debian's PostgreSQL server binaries (the newest).
func serverBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
}
