package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/store/backend"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

// run runs the ingot command line with args, bounded so a serve that
// should have refused cannot hang the test.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// olderDB is a SQLite database at the schema before this binary's last
// migration: the previous release's.
func olderDB(t *testing.T) (path string, last sqlstore.Migration) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "ingot.db")
	ms, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := sqlstore.Apply(t.Context(), db, sqlite.Dialect(), ms[:len(ms)-1]); err != nil {
		t.Fatal(err)
	}
	return path, ms[len(ms)-1]
}

func TestDBMigrateCheck(t *testing.T) {
	db, last := olderDB(t)
	name := last.Name
	out, err := run(t, "db", "migrate", "--check", "--database", db)
	if err == nil || !strings.Contains(out, "pending 00") || !strings.Contains(out, name) {
		t.Fatalf("check of an older database: %v\n%s", err, out)
	}
	// serve refuses it, naming the way out, unless told to migrate.
	_, err = run(t, "serve", "--database", db, "--listen", "127.0.0.1:0", "--ironic-url", "sim")
	if err == nil || !strings.Contains(err.Error(), "run ingot db migrate") || !strings.Contains(err.Error(), name) {
		t.Fatalf("serve on an older database: %v", err)
	}
	out, err = run(t, "db", "migrate", "--database", db)
	if err != nil || !strings.Contains(out, "applied ") || !strings.Contains(out, name) {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	out, err = run(t, "db", "migrate", "--check", "--database", db)
	if err != nil || !strings.Contains(out, "up to date") {
		t.Fatalf("check after migrate: %v\n%s", err, out)
	}
}

// A database a newer ingot wrote is refused by every command.
func TestNewerDatabaseRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ingot.db")
	raw, err := sqlite.OpenDB(db)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := sqlite.Migrations()
	if _, err := sqlstore.Apply(t.Context(), raw, sqlite.Dialect(), ms); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("INSERT INTO schema_migrations VALUES (9999, 'future', 'x')"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for _, args := range [][]string{
		{"serve", "--database", db, "--listen", "127.0.0.1:0", "--ironic-url", "sim"},
		{"serve", "--database", db, "--listen", "127.0.0.1:0", "--ironic-url", "sim", "--migrate"},
		{"db", "migrate", "--database", db},
		{"db", "migrate", "--check", "--database", db},
		{"db", "backup", "--database", db, filepath.Join(dir, "b.db")},
		{"db", "copy", "--database", db, "--to", filepath.Join(dir, "c.db")},
	} {
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "newer ingot") || !strings.Contains(err.Error(), "9999") {
			t.Errorf("%s: %v", strings.Join(args, " "), err)
		}
	}
}

// db backup and db copy find the database as serve does (--dev
// --data-dir), and copy says what it moved and that it verified it.
func TestDBBackupCopyCLI(t *testing.T) {
	dir := t.TempDir()
	st, err := backend.Open(t.Context(), filepath.Join(dir, "ingot.db"), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := st.CreateServer(t.Context(), storetest.FullServer(id)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	bak := filepath.Join(t.TempDir(), "backup.db")
	out, err := run(t, "db", "backup", "--dev", "--data-dir", dir, bak)
	if err != nil || !strings.Contains(out, "backed up") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if fi, err := os.Stat(bak); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", fi, err)
	}
	pg := pgtest.DSN(t)
	out, err = run(t, "db", "copy", "--dev", "--data-dir", dir, "--to", pg)
	if err != nil || !strings.Contains(out, "verified") || !strings.Contains(out, "servers                3") {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	// PostgreSQL's backup is pg_dump's: the command says so.
	_, err = run(t, "db", "backup", "--database", pg, filepath.Join(dir, "pg.dump"))
	if err == nil || !strings.Contains(err.Error(), "pg_dump --format=custom") {
		t.Fatalf("backup of PostgreSQL: %v", err)
	}
}

// idleServer is an ACTIVE server with nothing pending, which the
// reconciler of a restored ingot leaves as it is.
func idleServer(id string) *lifecycle.Server {
	s := storetest.FullServer(id)
	s.Phase, s.Fault, s.OpDone = lifecycle.PhaseActive, nil, s.OpGen
	s.DeleteRequestedAt, s.DeleteRequestID = time.Time{}, ""
	return s
}

// A backup restored as the README says (stop, copy back without -wal and
// -shm, start) is served by ingot serve: its API lists exactly the
// servers the backup had, not the ones created after it.
func TestRestoredBackupServes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ingot.db")
	st, err := backend.Open(t.Context(), db, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(ids ...string) {
		for _, id := range ids {
			if err := st.CreateServer(t.Context(), idleServer(id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	create("11111111-0000-0000-0000-000000000001", "11111111-0000-0000-0000-000000000002")
	bak := filepath.Join(t.TempDir(), "backup.db")
	if out, err := run(t, "db", "backup", "--dev", "--data-dir", dir, bak); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	create("11111111-0000-0000-0000-000000000003")
	st.Close()

	for _, p := range []string{db + "-wal", db + "-shm"} {
		_ = os.Remove(p)
	}
	data, err := os.ReadFile(bak)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}

	cfg, err := dbConfig(newServeCmd(), dbFlags{dev: true, dataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen = "127.0.0.1:0"
	a, err := app.New(t.Context(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+ln.Addr().String()+"/v2.1/servers", nil)
	req.Header.Set("X-Auth-Project-Id", "project-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Servers []struct{ ID string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2.1/servers: %d %v", resp.StatusCode, err)
	}
	var ids []string
	for _, s := range body.Servers {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	if want := []string{"11111111-0000-0000-0000-000000000001", "11111111-0000-0000-0000-000000000002"}; !slices.Equal(ids, want) {
		t.Errorf("restored ingot serves %v, want %v", ids, want)
	}
}
