package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// Tx is a write transaction as the shared code sees it: statements are
// written once with ? placeholders (the PostgreSQL backend rebinds them).
type Tx interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// Backend is what differs between the databases under the shared code.
type Backend interface {
	// Query and QueryRow run a single-statement read (SQLite: on the
	// reader pool, through a cached statement).
	Query(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, q string, args ...any) *sql.Row
	// Write runs fn in one write transaction, after checking the fence
	// ctx may carry (store.WithFence) in it; PostgreSQL re-runs fn on a
	// deadlock or a serialization failure, so fn must be safe to re-run.
	Write(ctx context.Context, fn func(Tx) error) error
	// Save is SaveServer's write of s and its events in tx (each store's
	// own statements: PostgreSQL's is one statement), s.Version unchanged.
	Save(ctx context.Context, tx Tx, s *lifecycle.Server, events []lifecycle.Event) error
	// CheckFence checks, in tx, the fence ctx may carry (nil without one).
	CheckFence(ctx context.Context, tx Tx) error
	// Exec runs a write that is one statement: on its own, or, when ctx
	// carries a fence, in a transaction that checks the fence first.
	Exec(ctx context.Context, q string, args ...any) (sql.Result, error)
	// Unique reports whether err is a unique or primary-key violation, and
	// names what it violated (SQLite: "table.col, …"; PostgreSQL: the
	// constraint, e.g. "flavors_pkey", "flavors_name_key").
	Unique(err error) (name string, ok bool)
	// ForeignKey reports whether err is a foreign-key violation.
	ForeignKey(err error) bool
	// Snapshot runs fn, which only reads, on one consistent snapshot.
	Snapshot(ctx context.Context, fn func(Tx) error) error
	// LockRow locks the row of table with id until tx ends (PostgreSQL:
	// SELECT … FOR UPDATE; SQLite: nothing, its single writer serializes).
	LockRow(ctx context.Context, tx Tx, table string, id any) error
	// Lock serializes, until tx ends, the transactions that lock the same
	// (class, key): PostgreSQL's read-check-writes need it (an advisory
	// lock); SQLite's single writer already serializes them (no-op).
	Lock(ctx context.Context, tx Tx, class int32, key string) error
}

// Advisory lock classes of Backend.Lock.
const (
	LockProjectQuota int32 = 0x696e0001 // a create under quota, per project
	LockUserKeypairs int32 = 0x696e0002 // a keypair under its quota, per user
)

// Store is the code the SQL stores share, over a Backend. Its methods
// implement parts of store.Store; the stores embed it.
type Store struct {
	B    Backend
	Name string // "sqlite", "postgres": what errors start with
	// ForUpdate ends a read inside a write transaction that locks the rows
	// it reads: " FOR UPDATE" on PostgreSQL, "" under SQLite's single writer.
	ForUpdate string
	// IndexHints pins reads to their index (SQLite's INDEXED BY).
	IndexHints bool
	// NameFilter is the case-sensitive literal substring match of a
	// server's name on one ? (no wildcards): instr on SQLite, strpos on
	// PostgreSQL.
	NameFilter string
	// TagsColumn: servers.tags holds a copy of the spec's tags (PostgreSQL,
	// JSONB with a GIN index for the tag filters); SQLite reads the spec.
	TagsColumn bool

	notify store.Notifier // SetNotifier (outbox.go)
	specs  specCache      // ListServers' decoded specs (specs.go)
	listed rowCache       // ListServers' and ReadServer's decoded rows (specs.go)
}

// errorf is fmt.Errorf with the store's name in front.
func (s *Store) errorf(format string, args ...any) error {
	return fmt.Errorf(s.Name+": "+format, args...)
}

// noRows reports sql.ErrNoRows.
func noRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// ExecOne runs one write statement that must touch one row: ErrNotFound
// (wrapped with what) when it touched none.
func (s *Store) ExecOne(ctx context.Context, what, q string, args ...any) error {
	res, err := s.B.Exec(ctx, q, args...)
	if err != nil {
		return s.wrap(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// wrap names the store in front of a database error; a store error (one
// of the store's sentinels, ErrFenced included) is returned as is.
func (s *Store) wrap(what string, err error) error {
	for _, e := range []error{store.ErrFenced, store.ErrNotFound, store.ErrConflict, store.ErrExists} {
		if errors.Is(err, e) {
			return err
		}
	}
	return s.errorf("%s: %w", what, err)
}

// reader is the Backend's reads as a Tx (for code shared by reads and
// writes; it must not write).
type reader struct{ b Backend }

func (r reader) ExecContext(context.Context, string, ...any) (sql.Result, error) {
	return nil, errors.New("write outside a transaction")
}

func (r reader) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return r.b.Query(ctx, q, args...)
}

func (r reader) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return r.b.QueryRow(ctx, q, args...)
}

// marks is n comma-separated placeholders, for an IN list.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// inList is the placeholders and arguments of an IN list of ids (at most
// InChunk), padded with the last id to the next power of two or InChunk:
// a repeated member changes no IN, and a handful of statement texts then
// serve every count, each prepared once and kept (Query) rather than
// parsed again for every call.
func inList(ids []string) (string, []any) {
	if len(ids) == 0 {
		return "NULL", nil // matches nothing
	}
	n := 1
	for n < len(ids) {
		n *= 2
	}
	n = min(n, max(InChunk, len(ids)))
	args := make([]any, n)
	for i := range args {
		args[i] = ids[min(i, len(ids)-1)]
	}
	return marks(n), args
}

// texts runs a read of one text column; never nil.
func (st *Store) texts(ctx context.Context, what, q string, args ...any) ([]string, error) {
	rows, err := st.B.Query(ctx, q, args...)
	if err != nil {
		return nil, st.errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, st.errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
