package postgres

import (
	"testing"

	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

// TestMigratesVersion9: a database at schema 0009 (main before the shard
// column: 0006_schema to 0009) holding servers opens, takes 0010, keeps its
// records and gets every server's shard hash. The 0009 state is made by
// undoing 0010 (and the later ones) on a database written by the store.
func TestMigratesVersion9(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	st, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m1", "m2", "m3", "m4"} {
		if err := st.CreateServer(ctx, storetest.FullServer(id)); err != nil {
			t.Fatal(err)
		}
	}
	want, err := st.ServersNeedingWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP INDEX servers_work_shard", "ALTER TABLE servers DROP COLUMN shard_hash",
		"ALTER TABLE ports DROP CONSTRAINT ports_server_network_slot, DROP COLUMN slot", // 0015
		"ALTER TABLE ports ADD CONSTRAINT ports_server_network UNIQUE (server_id, network_id)",
		"DROP INDEX ports_network_ip", "ALTER TABLE ports DROP COLUMN neutron_id, DROP COLUMN user_port", // 0011
		"ALTER TABLE ports ADD CONSTRAINT ports_network_ip UNIQUE (network_id, ip)",
		"ALTER TABLE volumes DROP COLUMN attachment_id", "ALTER TABLE volumes DROP COLUMN attachment_node", // 0012
		"ALTER TABLE volumes DROP COLUMN description", // 0014
		"ALTER TABLE volumes DROP COLUMN image_id",    // 0016
		"DELETE FROM schema_migrations WHERE version > 9"} {
		if _, err := st.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var top int
	if err := st.pool.QueryRow(ctx, "SELECT max(version) FROM schema_migrations").Scan(&top); err != nil || top != 9 {
		t.Fatalf("schema version %d (%v), want 9", top, err)
	}
	st.Close()

	st, err = Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.CheckMigrated(t, st, want, func(id string) (int64, error) {
		var h int64
		err := st.pool.QueryRow(ctx, "SELECT shard_hash FROM servers WHERE id = $1", id).Scan(&h)
		return h, err
	})
}
