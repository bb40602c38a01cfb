package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// What the operator's commands (ingot db …) need of a SQLite database
// without opening it as a store: its schema's status, its migration, an
// online backup, and a plain connection for a copy.

// Dialect is SQLite's for the shared code.
func Dialect() sqlstore.Dialect { return dialect }

// Migrations are the schema's steps, in order.
func Migrations() ([]sqlstore.Migration, error) { return migrations() }

// Inspect reads the schema status of the database at path, changing
// nothing: a missing file is a fresh database.
func Inspect(ctx context.Context, path string) (sqlstore.Status, error) {
	ms, err := migrations()
	if err != nil {
		return sqlstore.Status{}, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return sqlstore.Status{Pending: ms}, nil
	}
	db, err := sql.Open("sqlite", dsn(path, readerParams))
	if err != nil {
		return sqlstore.Status{}, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer db.Close()
	return sqlstore.Inspect(ctx, db, dialect, ms)
}

// Migrate applies the pending migrations to the database at path (created,
// 0600, if missing) and returns them.
func Migrate(ctx context.Context, path string) ([]sqlstore.Migration, error) {
	db, err := OpenDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	return sqlstore.Apply(ctx, db, dialect, ms)
}

// OpenDB opens the database at path (created, 0600, if missing) on one
// writer connection with the store's pragmas, unmigrated.
func OpenDB(path string) (*sql.DB, error) {
	if err := ownerOnly(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path, writerParams))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// Backup writes a consistent copy of the database at path to dest, which
// must not exist, while other connections (a running ingot) read and
// write it: VACUUM INTO reads one snapshot (WAL lets writers go on) and
// writes a compact database, with no -wal beside it. dest is 0600, as the
// database is; a failed backup leaves no dest behind.
func Backup(ctx context.Context, path, dest string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	// VACUUM INTO accepts an existing empty file and keeps its mode; O_EXCL
	// refuses to overwrite anything.
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(path, "_pragma=busy_timeout(10000)"))
	if err != nil {
		os.Remove(dest)
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dest); err != nil {
		os.Remove(dest)
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	return nil
}
