package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

// TestMigratesVersion9: a database made by the migrations up to 0009 (main
// before the shard column) holding servers opens, takes 0010, keeps its
// records and gets every server's shard hash.
func TestMigratesVersion9(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	// The servers, as written by the store (every column).
	src, err := Open(ctx, filepath.Join(dir, "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m1", "m2", "m3", "m4"} {
		if err := src.CreateServer(ctx, storetest.FullServer(id)); err != nil {
			t.Fatal(err)
		}
	}
	want, err := src.ServersNeedingWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src.Close()

	// A database at schema 0009, the servers copied in without shard_hash.
	path := filepath.Join(dir, "ingot.db")
	db := migratedTo(t, path, 9)
	var cols []string
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info('servers')")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	if strings.Contains(strings.Join(cols, ","), "shard_hash") {
		t.Fatal("schema 0009 has shard_hash")
	}
	list := strings.Join(cols, ", ")
	for _, q := range []string{"ATTACH DATABASE '" + filepath.Join(dir, "src.db") + "' AS src",
		"INSERT INTO servers (" + list + ") SELECT " + list + " FROM src.servers", "DETACH DATABASE src"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.CheckMigrated(t, st, want, func(id string) (int64, error) {
		var h int64
		err := st.r.QueryRowContext(ctx, "SELECT shard_hash FROM servers WHERE id = ?", id).Scan(&h)
		return h, err
	})
}

// TestMigratesVersion17: 0018 rebuilds aggregates, aggregate_hosts and
// services; their rows, the hosts and the revision triggers survive it, and
// the ids after it are past every kept one.
func TestMigratesVersion17(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ingot.db")
	db := migratedTo(t, path, 17)
	for _, q := range []string{
		"INSERT INTO aggregates (id, uuid, name, created_at) VALUES (1, 'u1', 'a1', '2026-01-01T00:00:00.000000000Z'), (5, 'u5', 'a5', '2026-01-01T00:00:00.000000000Z')",
		"INSERT INTO aggregate_hosts (aggregate_id, host) VALUES (5, 'h1'), (5, 'h2')",
		"INSERT INTO services (id, uuid, host, binary_name, created_at, updated_at) VALUES (3, 's3', 'h1', 'nova-compute', '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:00.000000000Z')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.ListAggregates(ctx)
	if err != nil || len(all) != 2 || all[1].ID != 5 || strings.Join(all[1].Hosts, ",") != "h1,h2" {
		t.Fatalf("aggregates after 0018: %+v %v", all, err)
	}
	rev, err := st.AdminRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.CreateAggregate(ctx, store.Aggregate{Name: "new", CreatedAt: storetest.T0})
	if err != nil || a.ID != 6 {
		t.Fatalf("created %+v %v", a, err)
	}
	if after, _ := st.AdminRevision(ctx); after == rev {
		t.Fatal("an aggregate create after 0018 did not move the admin revision")
	}
	svc, err := st.RegisterService(ctx, "h2", store.BinaryCompute, storetest.T0)
	if err != nil || svc.ID != 4 {
		t.Fatalf("service %+v %v", svc, err)
	}
}

// migratedTo opens a database at path made by the migrations up to
// version, on one writer connection (closed with the test).
func migratedTo(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var old []sqlstore.Migration
	for _, m := range ms {
		if m.Version <= version {
			old = append(old, m)
		}
	}
	db, err := sql.Open("sqlite", dsn(path, writerParams))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if err := sqlstore.Migrate(t.Context(), db, dialect, old); err != nil {
		t.Fatal(err)
	}
	return db
}
