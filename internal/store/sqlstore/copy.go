package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// CopyTables are the tables a copy moves, parents before the tables whose
// foreign keys point at them.
var CopyTables = []string{
	"servers", "actions", "events", "ports", "volumes", "keypairs", "quotas",
	"flavors", "flavor_access", "server_groups", "server_group_members",
	"services", "aggregates", "aggregate_hosts", "quota_classes", "outbox",
}

// transientTables are not copied: leases and replicas are the running
// replicas' (a replica claims its shards afresh at start, the epochs
// starting over on a database no replica has served), each database
// records its own dialect's migrations, and admin_revision only has to
// move when the copied services and aggregates are written (their
// triggers bump it).
var transientTables = []string{"leases", "replicas", "schema_migrations", "outbox_drainer", "admin_revision"}

// derived are columns one dialect has and the other computes from another
// column: PostgreSQL's servers.tags is the spec's tags (TagsColumn).
var derived = map[string]bool{"servers.tags": true}

// DB is a database and its dialect.
type DB struct {
	*sql.DB
	Dialect Dialect
}

// Counts are rows per table.
type Counts map[string]int

// CheckEmpty refuses a target holding any row in a table a copy fills.
func CheckEmpty(ctx context.Context, db DB) error {
	for _, t := range CopyTables {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return fmt.Errorf("count %s: %w", t, err)
		}
		if n > 0 {
			return fmt.Errorf("target is not empty: %s has %d rows (copy into a new, empty database)", t, n)
		}
	}
	return nil
}

// Copy moves every row of CopyTables from src to dst, both at the same
// schema version, in one transaction on dst (a failed copy leaves dst as
// it was) from one snapshot of src. dst must be empty (CheckEmpty).
func Copy(ctx context.Context, src, dst DB) (Counts, error) {
	if err := sameTables(ctx, src, dst); err != nil {
		return nil, err
	}
	stx, err := src.BeginTx(ctx, snapshotOpts(src.Dialect))
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	defer stx.Rollback() //nolint:errcheck // read only
	dtx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	defer dtx.Rollback() //nolint:errcheck // no-op after Commit
	counts := Counts{}
	for _, t := range CopyTables {
		n, err := copyTable(ctx, stx, src.Dialect, dtx, dst, t)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", t, err)
		}
		counts[t] = n
	}
	if err := dtx.Commit(); err != nil {
		return nil, fmt.Errorf("target: commit: %w", err)
	}
	return counts, nil
}

// snapshotOpts reads src on one snapshot: a SQLite read transaction is one
// (WAL); PostgreSQL needs REPEATABLE READ.
func snapshotOpts(d Dialect) *sql.TxOptions {
	if d.Postgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return nil
}

// sameTables refuses databases whose tables differ beyond what a copy knows.
func sameTables(ctx context.Context, src, dst DB) error {
	for _, db := range []DB{src, dst} {
		ts, err := tables(ctx, db)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if !slices.Contains(CopyTables, t) && !slices.Contains(transientTables, t) {
				return fmt.Errorf("table %s is unknown to the copy (a newer schema?)", t)
			}
		}
	}
	return nil
}

func tables(ctx context.Context, db DB) ([]string, error) {
	q := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	if db.Dialect.Postgres {
		q = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// column is one column of a table as a copy sees it.
type column struct {
	name     string
	boolean  bool // PostgreSQL BOOLEAN (SQLite: INTEGER 0/1)
	jsonb    bool // PostgreSQL JSONB: read as text
	identity bool // PostgreSQL identity: inserted OVERRIDING SYSTEM VALUE, sequence reset after
}

func columns(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, d Dialect, table string) ([]column, error) {
	var rows *sql.Rows
	var err error
	if d.Postgres {
		rows, err = q.QueryContext(ctx, `SELECT column_name, data_type, is_identity FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	} else {
		rows, err = q.QueryContext(ctx, "SELECT name, type, '' FROM pragma_table_info(?) ORDER BY cid", table)
	}
	if err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var name, typ, ident string
		if err := rows.Scan(&name, &typ, &ident); err != nil {
			return nil, err
		}
		out = append(out, column{name: name, boolean: typ == "boolean", jsonb: typ == "jsonb", identity: ident == "YES"})
	}
	if len(out) == 0 && rows.Err() == nil {
		return nil, fmt.Errorf("no table %s", table)
	}
	return out, rows.Err()
}

// plan is how one table's rows go from src to dst: the columns both have,
// in src's form and dst's, and dst's derived columns.
type plan struct {
	table    string
	src, dst []column
	derive   []string // dst columns computed from the row (derived)
}

func planTable(ctx context.Context, stx *sql.Tx, sd Dialect, dtx *sql.Tx, dd Dialect, table string) (plan, error) {
	p := plan{table: table}
	sc, err := columns(ctx, stx, sd, table)
	if err != nil {
		return p, fmt.Errorf("source %w", err)
	}
	dc, err := columns(ctx, dtx, dd, table)
	if err != nil {
		return p, fmt.Errorf("target %w", err)
	}
	for _, c := range sc {
		i := slices.IndexFunc(dc, func(d column) bool { return d.name == c.name })
		switch {
		case i >= 0:
			p.src, p.dst = append(p.src, c), append(p.dst, dc[i])
		case !derived[table+"."+c.name]:
			return p, fmt.Errorf("column %s.%s is missing from the target", table, c.name)
		}
	}
	for _, c := range dc {
		if !slices.ContainsFunc(sc, func(s column) bool { return s.name == c.name }) {
			if !derived[table+"."+c.name] {
				return p, fmt.Errorf("column %s.%s is missing from the source", table, c.name)
			}
			p.derive = append(p.derive, c.name)
		}
	}
	return p, nil
}

// selectAll reads every row of p's source columns.
func (p plan) selectAll(ctx context.Context, tx *sql.Tx) (*sql.Rows, error) {
	names := make([]string, len(p.src))
	for i, c := range p.src {
		names[i] = c.name
		if c.jsonb {
			names[i] += "::text"
		}
	}
	return tx.QueryContext(ctx, "SELECT "+strings.Join(names, ", ")+" FROM "+p.table)
}

// copyBatch bounds the rows of one INSERT (PostgreSQL takes 65,535
// parameters, SQLite 32,766).
const copyBatch = 200

func copyTable(ctx context.Context, stx *sql.Tx, sd Dialect, dtx *sql.Tx, dst DB, table string) (int, error) {
	p, err := planTable(ctx, stx, sd, dtx, dst.Dialect, table)
	if err != nil {
		return 0, err
	}
	rows, err := p.selectAll(ctx, stx)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var batch [][]any
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := p.insert(ctx, dtx, dst.Dialect, batch)
		n += len(batch)
		batch = batch[:0]
		return err
	}
	for rows.Next() {
		vals := make([]any, len(p.src))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		row, err := p.convert(vals)
		if err != nil {
			return n, err
		}
		if batch = append(batch, row); len(batch) == copyBatch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	if err := flush(); err != nil {
		return n, err
	}
	return n, p.resetIdentity(ctx, dtx)
}

// convert turns a source row into the target's values: booleans to and
// from SQLite's 0/1, then the derived columns.
func (p plan) convert(vals []any) ([]any, error) {
	row := make([]any, 0, len(vals)+len(p.derive))
	for i, v := range vals {
		row = append(row, toTarget(v, p.dst[i].boolean))
	}
	for _, c := range p.derive {
		v, err := p.derive1(c, vals)
		if err != nil {
			return nil, err
		}
		row = append(row, v)
	}
	return row, nil
}

func toTarget(v any, boolean bool) any {
	switch x := v.(type) {
	case int64:
		if boolean {
			return x != 0
		}
	case bool:
		if !boolean {
			if x {
				return int64(1)
			}
			return int64(0)
		}
	case []byte:
		return string(x)
	}
	return v
}

// derive1 computes derived column c of a row (only servers.tags).
func (p plan) derive1(c string, vals []any) (any, error) {
	i := slices.IndexFunc(p.src, func(s column) bool { return s.name == "spec" })
	if c != "tags" || i < 0 {
		return nil, fmt.Errorf("cannot compute %s.%s", p.table, c)
	}
	return tagsOfSpec(vals[i])
}

func tagsOfSpec(v any) (string, error) {
	var sp lifecycle.Spec
	s, _ := toTarget(v, false).(string)
	if err := json.Unmarshal([]byte(s), &sp); err != nil {
		return "", fmt.Errorf("spec: %w", err)
	}
	return tagsOf(sp)
}

func (p plan) insert(ctx context.Context, tx *sql.Tx, d Dialect, batch [][]any) error {
	names := make([]string, 0, len(p.dst)+len(p.derive))
	for _, c := range p.dst {
		names = append(names, c.name)
	}
	names = append(names, p.derive...)
	override := ""
	if slices.ContainsFunc(p.dst, func(c column) bool { return c.identity }) {
		override = " OVERRIDING SYSTEM VALUE"
	}
	one := "(" + marks(len(names)) + ")"
	args := make([]any, 0, len(batch)*len(names))
	for _, r := range batch {
		args = append(args, r...)
	}
	q := "INSERT INTO " + p.table + " (" + strings.Join(names, ", ") + ")" + override +
		" VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", len(batch)), ", ")
	_, err := tx.ExecContext(ctx, d.Rebind(q), args...)
	return err
}

// resetIdentity moves a PostgreSQL identity's sequence past the copied ids.
func (p plan) resetIdentity(ctx context.Context, tx *sql.Tx) error {
	for _, c := range p.dst {
		if !c.identity {
			continue
		}
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', '%s'), COALESCE(MAX(%s), 0) + 1, false) FROM %s",
			p.table, c.name, c.name, p.table)
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("identity %s.%s: %w", p.table, c.name, err)
		}
	}
	return nil
}
