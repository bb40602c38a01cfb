package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

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
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var old []sqlstore.Migration
	for _, m := range ms {
		if m.Version <= 9 {
			old = append(old, m)
		}
	}
	db, err := sql.Open("sqlite", dsn(path, writerParams))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := sqlstore.Migrate(ctx, db, dialect, old); err != nil {
		t.Fatal(err)
	}
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
