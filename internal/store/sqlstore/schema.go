package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// ErrNewer is matched (errors.Is) when a database records a schema version
// this binary does not know: a newer ingot migrated it, and running this
// one against it could write what the newer one cannot read.
var ErrNewer = errors.New("database written by a newer ingot")

// Status is where a database's schema stands against a binary's migrations.
type Status struct {
	// Applied are the versions the database records, ascending.
	Applied []int
	// Pending are the migrations it has not applied, in order.
	Pending []Migration
}

// Fresh reports a database with no schema at all (nothing applied): one
// that creating the schema cannot break.
func (s Status) Fresh() bool { return len(s.Applied) == 0 }

// Inspect reads which of ms db has applied, without changing it. A version
// db records that ms lacks is an error matching ErrNewer.
func Inspect(ctx context.Context, db *sql.DB, d Dialect, ms []Migration) (Status, error) {
	var st Status
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
	if d.Postgres {
		q = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'"
	}
	var n int
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return st, fmt.Errorf("schema: %w", err)
	}
	applied := map[int]bool{}
	if n > 0 {
		rows, err := db.QueryContext(ctx, "SELECT version FROM schema_migrations")
		if err != nil {
			return st, fmt.Errorf("schema: %w", err)
		}
		applied, err = scanVersions(rows)
		if err != nil {
			return st, fmt.Errorf("schema: %w", err)
		}
	}
	return status(applied, ms)
}

// status sorts ms into applied and pending, refusing a version ms lacks.
func status(applied map[int]bool, ms []Migration) (Status, error) {
	var st Status
	for v := range applied {
		if !slices.ContainsFunc(ms, func(m Migration) bool { return m.Version == v }) {
			return st, fmt.Errorf("%w: it has schema version %04d, this binary knows up to %04d; run the newer ingot (or restore a backup taken before it ran)",
				ErrNewer, v, latest(ms))
		}
		st.Applied = append(st.Applied, v)
	}
	slices.Sort(st.Applied)
	for _, m := range ms {
		if !applied[m.Version] {
			st.Pending = append(st.Pending, m)
		}
	}
	return st, nil
}

func latest(ms []Migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}
