package serve

import (
	"context"
	"hash/fnv"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// TestServeOnPostgres: `ingot serve --config` with database: postgres://…
// migrates a fresh PostgreSQL database, builds a server on the built-in
// simulator to ACTIVE, refuses a second serve on the same database naming
// the first (S25, by PostgreSQL's advisory lock), and after a restart still
// shows the server ACTIVE (it was in PostgreSQL, not in a file); when its
// owner session ends under it, it takes the lock again and goes on, unless
// another session took it first.
func TestServeOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	yaml := "database: " + dsn + "\nhost: " + pgHost + "\n" +
		"poll_interval: 100ms\ndrift_interval: " + driftInterval.String() + "\n" +
		"ironic: {url: sim, sim: {nodes: 4, deploy_time: 1s, undeploy_time: 200ms, state: " + filepath.Join(dir, "sim.json") + "}}\n" +
		"flavors: [{name: bm.small, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}]\n" +
		"images: [{name: debian-12, url: http://images.example/debian-12.qcow2}]\n" +
		"networks: [{name: provisioning, cidr: 10.0.0.0/24}]\n"
	cfgPath := filepath.Join(dir, "ingot.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	start := func() *ingottest.Proc { return launch(t, "serve", "--config", cfgPath, "--listen", "127.0.0.1:0") }
	first := start().Serving()
	c := apitest.New(t, first.API)
	id := c.Create(map[string]any{"name": "pg1", "flavorRef": "bm.small", "imageRef": cfg.Images[0].ID,
		"networks": []map[string]string{{"uuid": cfg.Networks[0].ID}}})
	c.WaitStatus(id, "ACTIVE", 60*time.Second)
	if nodes := nodesOf(t, first, id); len(nodes) != 1 || nodes[0].ProvisionState != "active" {
		t.Fatalf("the simulator's node for %s: %+v", id, nodes)
	}

	second := start()
	if !second.Exited(30 * time.Second) {
		t.Fatalf("a second serve on the same PostgreSQL database still runs after 30s:\n%s", second.Tail(20))
	}
	out := second.Output()
	if second.ExitCode() == 0 || strings.Contains(out, "ingot serving") {
		t.Fatalf("second serve: exit %d, want non-zero before serving:\n%s", second.ExitCode(), out)
	}
	for _, want := range []string{"is in use by another ingot", "pid " + strconv.Itoa(first.Pid()), "serving " + first.API} {
		if !strings.Contains(out, want) {
			t.Errorf("second serve's message lacks %q:\n%s", want, out)
		}
	}

	first.Stop()
	again := start().Serving()
	c = apitest.New(t, again.API)
	if s, _ := c.Get(id); s.Status != "ACTIVE" {
		t.Fatalf("after a restart on PostgreSQL, %s is %q, want ACTIVE", id, s.Status)
	}
	if out := again.Output(); strings.Contains(out, "password") {
		t.Errorf("the log names a password:\n%s", out)
	}

	// The owner's session ends under it (a PostgreSQL restart, a broken
	// connection, an admin): acting pauses, the lock is taken again, and
	// serve goes on — a build after it completes.
	terminateOwner(t, dsn)
	again.WaitLog(regexp.MustCompile(`(database ownership taken again)`), time.Minute)
	id2 := c.Create(map[string]any{"name": "pg2", "flavorRef": "bm.small", "imageRef": cfg.Images[0].ID,
		"networks": []map[string]string{{"uuid": cfg.Networks[0].ID}}})
	c.WaitStatus(id2, "ACTIVE", 60*time.Second)

	// Ended again, and another process takes the lock first: that one is
	// this host now, so serve stops rather than act beside it.
	terminateOwner(t, dsn)
	holdOwnerLock(t, dsn, pgHost)
	if !again.Exited(time.Minute) {
		t.Fatalf("serve still runs a minute after another session took its owner lock:\n%s", again.Tail(20))
	}
	if out := again.Output(); again.ExitCode() == 0 || !strings.Contains(out, "taken by another ingot") {
		t.Fatalf("serve after losing its owner lock to another session: exit %d:\n%s", again.ExitCode(), ingottest.Tail(out, 20))
	}
}

// pgHost is the replica host of TestServeOnPostgres's serve.
const pgHost = "pg-serve"

// holdOwnerLock takes host's owner lock on dsn's database in a session of
// the test's, held until the test ends (the key as the store computes it).
func holdOwnerLock(t *testing.T, dsn, host string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	h := fnv.New64a()
	h.Write([]byte("ingot owner " + host))
	if _, err := conn.Exec(t.Context(), "SELECT pg_advisory_lock($1)", int64(h.Sum64())); err != nil {
		t.Fatal(err)
	}
}

// terminateOwner ends the session holding dsn's owner lock.
func terminateOwner(t *testing.T, dsn string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = $1 AND application_name LIKE 'ingot pid % serving %'`, strings.TrimPrefix(u.Path, "/")).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d owner sessions terminated, want 1", n)
	}
}
