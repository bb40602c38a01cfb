package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ingot-dev/ingot/internal/store/codec"
)

// Migrations are NNNN_name.sql files, applied once each in ascending NNNN
// and recorded in schema_migrations. A file is never edited once released:
// a schema change is a new file. The numbers follow SQLite's
// (internal/store/sqlite/migrations): 0006_schema.sql is SQLite's 0001 to
// 0006 at once, and a later NNNN here is the PostgreSQL form of SQLite's NNNN.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := map[int]string{}
	for _, f := range files {
		base := strings.TrimSuffix(strings.TrimPrefix(f, "migrations/"), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", f)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, f, v)
		}
		seen[v] = f
		body, err := migrationFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrateLock is the advisory lock key every ingot takes to migrate
// ("ingot_mg"); PostgreSQL's DDL is transactional, so the migrations and
// their records commit, or not, together, and the lock is the
// transaction's (pg_advisory_xact_lock): released at commit or rollback,
// never left behind by a process that died mid-migration.
const migrateLock int64 = 0x696e676f745f6d67

// migrate applies the pending migrations in one transaction, under
// migrateLock: replicas starting together wait for the first, then find
// nothing to do. Idempotent. A database migrated by a newer binary (an
// applied version this binary does not know) is refused rather than run
// against an unknown schema.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at TEXT    NOT NULL)`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT version FROM schema_migrations")
		if err != nil {
			return err
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return err
		}
		applied := map[int]bool{}
		for _, v := range versions {
			applied[v] = true
		}
		known := map[int]bool{}
		for _, m := range ms {
			known[m.version] = true
		}
		for v := range applied {
			if !known[v] {
				return fmt.Errorf("database has schema version %d, unknown to this binary (newer ingot?)", v)
			}
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
				m.version, m.name, codec.TimeNN(time.Now())); err != nil {
				return err
			}
		}
		return nil
	})
}
