package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"

	"github.com/ingot-dev/ingot/internal/store"
)

// ShardCond is the condition selecting the servers of sh (on the
// servers.shard_hash column), written with ? placeholders, and its
// arguments; "" when sh selects every server.
func ShardCond(sh store.Shards) (string, []any) {
	if sh.All() {
		return "", nil
	}
	if len(sh.Held) == 0 {
		return "1 = 0", nil
	}
	args := []any{int64(sh.N)}
	for _, h := range sh.Held {
		args = append(args, int64(h))
	}
	return "shard_hash % ? IN (?" + strings.Repeat(", ?", len(sh.Held)-1) + ")", args
}

// Schema is the migrations of a store's migrations/*.sql in fsys, with the
// Go steps both stores' schemas take at the same versions.
func Schema(fsys fs.FS) ([]Migration, error) {
	return Load(fsys, "migrations", map[int]func(context.Context, *sql.Tx, Dialect) error{
		10: FillShardHash,
	})
}

// FillShardHash writes servers.shard_hash of every existing server: the
// Go step of the migration that adds the column (SQL has no FNV-1a).
func FillShardHash(ctx context.Context, tx *sql.Tx, d Dialect) error {
	rows, err := tx.QueryContext(ctx, "SELECT id FROM servers")
	if err != nil {
		return fmt.Errorf("shard hash: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("shard hash: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("shard hash: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, d.Rebind("UPDATE servers SET shard_hash = ? WHERE id = ?"))
	if err != nil {
		return fmt.Errorf("shard hash: %w", err)
	}
	defer stmt.Close()
	for _, id := range ids {
		if _, err := stmt.ExecContext(ctx, int64(store.ShardHash(id)), id); err != nil {
			return fmt.Errorf("shard hash of %s: %w", id, err)
		}
	}
	return nil
}

// CollectIDVersions reads (id, version) rows, closing them.
func CollectIDVersions(rows *sql.Rows) ([]store.IDVersion, error) {
	defer rows.Close()
	var out []store.IDVersion
	for rows.Next() {
		var v store.IDVersion
		if err := rows.Scan(&v.ID, &v.Version); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
