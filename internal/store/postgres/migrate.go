package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// Migrations are NNNN_name.sql files, applied once each in ascending NNNN
// by the loader both stores share (sqlstore.Migrate) and recorded in
// schema_migrations. A file is never edited once released: a schema change
// is a new file. The numbers follow SQLite's
// (internal/store/sqlite/migrations): 0006_schema.sql is SQLite's 0001 to
// 0006 at once, and a later NNNN here is the PostgreSQL form of SQLite's NNNN.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLock is the advisory lock key every ingot takes to migrate
// ("ingot_mg"); PostgreSQL's DDL is transactional, so the migrations and
// their records commit, or not, together, and the lock is the
// transaction's (pg_advisory_xact_lock): released at commit or rollback,
// never left behind by a process that died mid-migration.
const migrateLock int64 = 0x696e676f745f6d67

// dialect is PostgreSQL's for the shared code.
var dialect = sqlstore.Dialect{Postgres: true, Lock: fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrateLock)}

// migrate applies the pending migrations in one transaction, under
// migrateLock: replicas starting together wait for the first, then find
// nothing to do. Idempotent.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return sqlstore.Migrate(ctx, db, dialect, ms)
}

// migrations are the schema's steps (migrations/*.sql), with their Go parts.
func migrations() ([]sqlstore.Migration, error) {
	return sqlstore.Schema(migrationFS)
}
