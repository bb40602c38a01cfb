package sqlite

import (
	"context"
	"database/sql"
	"embed"

	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// Migrations are NNNN_name.sql files, applied once each in ascending NNNN
// by the loader both stores share (sqlstore.Migrate) and recorded in
// schema_migrations. A file is never edited once released: a schema change
// is a new file.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// dialect is SQLite's for the shared code: ? placeholders; the migration
// transaction takes the write lock, so it needs no lock of its own.
var dialect = sqlstore.Dialect{}

// migrate applies the pending migrations in one transaction. Idempotent.
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
