package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/store/postgres"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// Inspect reads the schema status of dsn's database, changing nothing; a
// database a newer ingot wrote is an error matching sqlstore.ErrNewer.
func Inspect(ctx context.Context, dsn string) (sqlstore.Status, error) {
	if config.IsPostgres(dsn) {
		return postgres.Inspect(ctx, dsn)
	}
	return sqlite.Inspect(ctx, dsn)
}

// Migrate applies dsn's pending migrations and returns them.
func Migrate(ctx context.Context, dsn string) ([]sqlstore.Migration, error) {
	if config.IsPostgres(dsn) {
		return postgres.Migrate(ctx, dsn)
	}
	return sqlite.Migrate(ctx, dsn)
}

// ErrNoOnlineBackup is matched by Backup on a PostgreSQL database, whose
// own tools make its backups (the error gives the pg_dump command).
var ErrNoOnlineBackup = errors.New("ingot makes no backup of a PostgreSQL database")

// Backup writes a consistent copy of dsn's SQLite database to dest (which
// must not exist) while it is served.
func Backup(ctx context.Context, dsn, dest string) error {
	if config.IsPostgres(dsn) {
		return fmt.Errorf("%w: run pg_dump --format=custom --file=%s '%s' (restore: pg_restore --dbname=URL-of-an-empty-database %s)",
			ErrNoOnlineBackup, dest, config.RedactDSN(dsn), dest)
	}
	return sqlite.Backup(ctx, dsn, dest)
}

// openDB opens dsn's database unmigrated, for a copy.
func openDB(ctx context.Context, dsn string) (sqlstore.DB, error) {
	if config.IsPostgres(dsn) {
		db, err := postgres.OpenDB(ctx, dsn)
		return sqlstore.DB{DB: db, Dialect: postgres.Dialect()}, err
	}
	db, err := sqlite.OpenDB(dsn)
	return sqlstore.DB{DB: db, Dialect: sqlite.Dialect()}, err
}

// CopyResult is what a verified copy moved.
type CopyResult struct {
	Counts   sqlstore.Counts
	Copy     time.Duration // the copy's transaction
	Verified time.Duration // the diff of every table after it
}

// Copy moves every table of the database from to the database to, which
// Copy migrates and which must be empty, then diffs every table of both.
// Both are owned as replica host meanwhile (a running ingot on either
// makes it fail with ErrHeld), and a source whose shards a replica of
// another host still leases is refused: nothing writes the source during
// the copy.
func Copy(ctx context.Context, from, to, host string) (CopyResult, error) {
	var res CopyResult
	st, err := Inspect(ctx, from)
	if err != nil {
		return res, fmt.Errorf("source: %w", err)
	}
	if st.Fresh() || len(st.Pending) > 0 {
		return res, fmt.Errorf("source %s is not at this binary's schema (%d migrations pending): run ingot db migrate on it first",
			config.RedactDSN(from), len(st.Pending))
	}
	for _, dsn := range []string{from, to} {
		o, err := Acquire(ctx, dsn, host)
		if err != nil {
			return res, fmt.Errorf("%s: %w", config.RedactDSN(dsn), err)
		}
		defer o.Release() //nolint:errcheck // released at exit anyway
	}
	if _, err := Migrate(ctx, to); err != nil {
		return res, fmt.Errorf("target: migrate: %w", err)
	}
	src, err := openDB(ctx, from)
	if err != nil {
		return res, fmt.Errorf("source: %w", err)
	}
	defer src.Close()
	dst, err := openDB(ctx, to)
	if err != nil {
		return res, fmt.Errorf("target: %w", err)
	}
	defer dst.Close()
	if src.Dialect.Postgres { // SQLite's one process holds the lock file
		if err := liveLeases(ctx, src); err != nil {
			return res, err
		}
	}
	if err := sqlstore.CheckEmpty(ctx, dst); err != nil {
		return res, err
	}
	t0 := time.Now()
	copied, err := sqlstore.Copy(ctx, src, dst)
	if err != nil {
		return res, err
	}
	t1 := time.Now()
	res.Counts, err = sqlstore.Verify(ctx, src, dst)
	if err != nil {
		return res, err
	}
	res.Copy, res.Verified = t1.Sub(t0), time.Since(t1)
	for t, n := range copied {
		if res.Counts[t] != n {
			return res, fmt.Errorf("verify %s: copied %d rows, the target has %d", t, n, res.Counts[t])
		}
	}
	return res, nil
}

// liveLeases refuses a PostgreSQL source some replica still serves: a
// lease not yet expired by the database's clock, which judges them.
func liveLeases(ctx context.Context, db sqlstore.DB) error {
	var n int
	q := "SELECT count(*) FROM leases WHERE holder <> '' AND expires_at > now()"
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return fmt.Errorf("source: leases: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("source is being served: %d shard leases are held; stop every ingot on it first", n)
	}
	return nil
}
