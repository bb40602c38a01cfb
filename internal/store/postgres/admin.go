package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// What the operator's commands (ingot db …) need of a PostgreSQL database
// without opening it as a store: its schema's status, its migration and a
// plain connection for a copy.

// Dialect is PostgreSQL's for the shared code.
func Dialect() sqlstore.Dialect { return dialect }

// OpenDB connects to dsn through database/sql (pgx), unmigrated.
func OpenDB(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "ingot db"
	defaultConnectTimeout(cfg)
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return db, nil
}

// Inspect reads the schema status of dsn's database, changing nothing.
func Inspect(ctx context.Context, dsn string) (sqlstore.Status, error) {
	ms, err := migrations()
	if err != nil {
		return sqlstore.Status{}, err
	}
	db, err := OpenDB(ctx, dsn)
	if err != nil {
		return sqlstore.Status{}, err
	}
	defer db.Close()
	return sqlstore.Inspect(ctx, db, dialect, ms)
}

// Migrate applies the pending migrations to dsn's database (under the
// migration lock) and returns them.
func Migrate(ctx context.Context, dsn string) ([]sqlstore.Migration, error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	db, err := OpenDB(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return sqlstore.Apply(ctx, db, dialect, ms)
}
