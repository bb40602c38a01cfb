// Package sqlstore is the code both SQL stores (internal/store/sqlite,
// internal/store/postgres) share over database/sql: written once, with ?
// placeholders, behind a small seam (Backend, and the dialect fields of
// Store) that each store implements — reads and fenced write transactions,
// unique and foreign-key violations, row and advisory locks, snapshots,
// SaveServer's own statement, index hints, the name and tag filters. It
// holds the server reads, creates (quotas, volume reservations, groups),
// the API's updates, the listing, the batch saver and the changed-records
// lister, ports, volumes, keypairs, flavors, server groups, services,
// aggregates, quotas and quota classes, events and actions, the one
// migration loader with the schema's status (schema.go), and the copy of
// every table between two databases with its diff (copy.go, verify.go).
// Each store keeps its schema files (the column types differ), its
// connections and its leases.
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/store/codec"
)

// Migration is one schema step: a NNNN_name.sql file, and optionally Go
// run right after it in the same transaction (a backfill SQL cannot
// compute, such as the shard hash).
type Migration struct {
	Version int
	Name    string
	SQL     string
	After   func(ctx context.Context, tx *sql.Tx, d Dialect) error
}

// Dialect is what the loader needs to know of a database.
type Dialect struct {
	// Postgres selects $n placeholders (Rebind); SQLite takes ? as written.
	Postgres bool
	// Lock, when not "", is run first in the migration transaction
	// (PostgreSQL: a transaction-scoped advisory lock, so replicas starting
	// together migrate once). SQLite's write lock does the same by itself.
	Lock string
}

// Rebind is q for the dialect: written with ? placeholders, turned into
// $1, $2, … for PostgreSQL. A ? inside a quoted literal is kept, and so
// are JSONB's ?& and ?| operators.
func (d Dialect) Rebind(q string) string {
	if !d.Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n, quoted := 0, false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted && !(i+1 < len(q) && (q[i+1] == '&' || q[i+1] == '|')):
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Load reads the migrations of dir in fsys (NNNN_name.sql, NNNN > 0, no
// two sharing a version), attaches after[NNNN] to its file, and returns
// them in ascending version.
func Load(fsys fs.FS, dir string, after map[int]func(context.Context, *sql.Tx, Dialect) error) ([]Migration, error) {
	files, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var ms []Migration
	seen := map[int]string{}
	for _, f := range files {
		base := strings.TrimSuffix(path.Base(f), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", f)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, f, v)
		}
		seen[v] = f
		body, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body), After: after[v]})
	}
	for v := range after {
		if _, ok := seen[v]; !ok {
			return nil, fmt.Errorf("migration step for version %d has no file", v)
		}
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	return ms, nil
}

// Migrate applies the migrations not yet recorded in schema_migrations, in
// one transaction, recording each (version, name, applied_at). Idempotent.
// A database migrated by a newer binary (an applied version this binary
// does not know) is refused (ErrNewer) rather than run against an unknown
// schema.
func Migrate(ctx context.Context, db *sql.DB, d Dialect, ms []Migration) error {
	_, err := Apply(ctx, db, d, ms)
	return err
}

// Apply is Migrate returning the migrations it applied (none when the
// database was up to date).
func Apply(ctx context.Context, db *sql.DB, d Dialect, ms []Migration) ([]Migration, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if d.Lock != "" {
		if _, err := tx.ExecContext(ctx, d.Lock); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at TEXT    NOT NULL)`); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, err
	}
	applied, err := scanVersions(rows)
	if err != nil {
		return nil, err
	}
	st, err := status(applied, ms)
	if err != nil {
		return nil, err
	}
	for _, m := range st.Pending {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if m.After != nil {
			if err := m.After(ctx, tx, d); err != nil {
				return nil, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, d.Rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
			m.Version, m.Name, codec.TimeNN(time.Now())); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return st.Pending, nil
}

// scanVersions reads a column of versions, closing rows.
func scanVersions(rows *sql.Rows) (map[int]bool, error) {
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}
