// Package sqlite is the embedded implementation of store.Store on SQLite
// (modernc.org/sqlite, pure Go, driver "sqlite").
//
// Connections. A Store holds two pools on one database file in WAL mode:
//   - a writer pool of exactly one connection whose transactions begin
//     IMMEDIATE, so writers of this process queue in Go (no SQLITE_BUSY, no
//     busy-handler sleeps) and take the write lock up front;
//   - a reader pool of several query-only connections for single-statement
//     reads, which WAL lets run beside the writer.
//
// Every write runs in one short transaction on the writer connection and
// uses only that transaction (a query on the writer pool from inside a
// write transaction would wait forever for the one connection). busy_timeout
// still covers other processes opening the same file.
//
// Ownership of the columns. CreateServer writes every field. SaveServer
// writes the lifecycle fields (phase, node, flags, excluded, attempts,
// fault, the lifecycle times) and never desired, delete_requested_at,
// delete_request_id, nor what is fixed at create (name, project, user,
// spec, created_at, create_request_id). RequestDelete writes desired,
// delete_requested_at, delete_request_id and updated_at. All three bump
// version and recompute needs_work from lifecycle.Server.NeedsWork.
// CreateServer also reserves the server's volumes (volumes.server_id) in
// its transaction; the Volumes methods own the rest of the volumes table.
//
// Leases and fences (leases.go): the leases and replicas tables are
// judged by the store's clock (WithClock; the wall clock by default). A
// write whose context carries a fence checks it first in its own
// transaction (write), and the single writer connection makes that check
// and the write one atomic step.
//
// needs_work is a stored copy of NeedsWork(): if that function's definition
// ever changes, existing rows keep the old answer until their next write,
// so such a change needs a migration (or a recompute at Open) with it.
//
// Most of the store is the code shared with PostgreSQL
// (internal/store/sqlstore, over backend.go); what stays here is SQLite's:
// the two pools and the pragmas, the file permissions (perm.go), the
// constraint-error decoding (constraint), SaveServer with its events, and
// the leases judged by the store's clock. SQLite-only SQL the shared code
// asks for: INDEXED BY (IndexHints), instr and json_each (the list filters),
// INTEGER PRIMARY KEY for the events and actions ids (the migration).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// Store is the SQLite store. Safe for concurrent use.
type Store struct {
	w *sql.DB // one connection, BEGIN IMMEDIATE
	r *sql.DB // query-only readers

	// Prepared statements: parsing costs as much as running a point query.
	// Writer statements are prepared at Open (preparing on the writer pool
	// inside a transaction would wait for its one connection forever);
	// reader statements on first use.
	wstmts map[string]*sql.Stmt
	rstmts sync.Map // query -> *sql.Stmt

	// now is the database's clock: lease expiry and fences are judged by
	// it (WithClock; default the wall clock).
	now func() time.Time

	// writes joins concurrent write transactions (batch.go); joined
	// counts the writes that rode in another's transaction.
	writes *store.Joiner[*writeJob]
	joined atomic.Int64

	*sqlstore.Store // the code shared with PostgreSQL, over backend.go
}

// Option tunes Open.
type Option func(*Store)

// WithClock makes c the store's clock for leases and fences (the
// deterministic simulation drives it by hand).
func WithClock(c clock.Clock) Option { return func(s *Store) { s.now = c.Now } }

// writerQueries are the statements write transactions run.
var writerQueries = []string{qSaveServer, qServerExists, qInsertEvent}

var _ store.Store = (*Store)(nil)

// writerParams follow docs/DESIGN.md §2.8: WAL, a busy
// timeout for other processes, synchronous=NORMAL (survives kill -9),
// foreign keys, immediate transactions.
const writerParams = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
	"&_pragma=foreign_keys(on)&_txlock=immediate"

// readerParams: the file is already in WAL mode (the writer opens first);
// query_only guards against a write slipping onto a reader.
const readerParams = "_pragma=busy_timeout(10000)&_pragma=query_only(1)"

// dsn builds a file: URI for path with the given parameters. '%', '?' and
// '#' in the path are escaped so they are not read as URI syntax.
func dsn(path, params string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + params
}

// Open opens (creating if needed) the database at path and applies the
// embedded migrations that are not yet applied. Safe to call on an
// existing database; two processes opening it at once serialize on the
// migration transaction.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: want a file path, got %q", path)
	}
	if err := ownerOnly(path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(path, writerParams))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: migrate %s: %w", path, err)
	}

	r, err := sql.Open("sqlite", dsn(path, readerParams))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n) // the default (2) would reopen connections under load
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	s := &Store{w: w, r: r, wstmts: map[string]*sql.Stmt{}, now: time.Now}
	s.writes = store.NewJoiner(s.runWrites)
	s.Store = &sqlstore.Store{B: backend{s}, Name: "sqlite", IndexHints: true, NameFilter: "instr(name, ?) > 0"}
	for _, o := range opts {
		o(s)
	}
	for _, q := range slices.Concat(writerQueries, s.Store.WriterQueries(), leaseWriterQueries) {
		stmt, err := w.PrepareContext(ctx, q)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlite: prepare %q: %w", q, err)
		}
		s.wstmts[q] = stmt
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes both pools. Safe to call more than once.
func (s *Store) Close() error {
	s.rstmts.Range(func(k, v any) bool {
		v.(*sql.Stmt).Close()
		s.rstmts.Delete(k)
		return true
	})
	for q, stmt := range s.wstmts {
		stmt.Close()
		delete(s.wstmts, q)
	}
	return errors.Join(s.r.Close(), s.w.Close())
}

// rstmt returns the reader statement for q, preparing it on first use.
func (s *Store) rstmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if v, ok := s.rstmts.Load(q); ok {
		return v.(*sql.Stmt), nil
	}
	stmt, err := s.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if v, loaded := s.rstmts.LoadOrStore(q, stmt); loaded {
		stmt.Close()
		return v.(*sql.Stmt), nil
	}
	return stmt, nil
}

// query runs a read on the reader pool through a cached statement. Only
// for queries drawn from a small fixed set (each distinct text is kept).
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	stmt, err := s.rstmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return stmt.QueryContext(ctx, args...)
}

// queryRow is query for one row.
func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	stmt, err := s.rstmt(ctx, q)
	if err != nil {
		return s.r.QueryRowContext(ctx, q, args...) // reports the same error
	}
	return stmt.QueryRowContext(ctx, args...)
}

// txn is a write transaction whose ExecContext and QueryRowContext use the
// writer's prepared statements when the query is one of writerQueries.
type txn struct {
	*sql.Tx
	st *Store
}

// txn's statements run to their end whatever their context: SQLite's
// interrupt of a statement in an explicit transaction rolls the whole
// transaction back, and it may carry other writes (batch.go).
func (t txn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx = context.WithoutCancel(ctx)
	if stmt, ok := t.st.wstmts[q]; ok {
		return t.StmtContext(ctx, stmt).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, q, args...)
}

func (t txn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx)
	if stmt, ok := t.st.wstmts[q]; ok {
		return t.StmtContext(ctx, stmt).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, q, args...)
}

// Ping checks the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.queryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Unavailable reports an error a retry may cure once the operator acts:
// the database's file system is full (SQLITE_FULL, the write's
// transaction rolled back, nothing half-written). The API answers it 503
// with Retry-After, as a PostgreSQL that is away.
func (s *Store) Unavailable(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_FULL
}

// constraint names which constraint a failed statement violated: the
// "table.col, table.col" list of a UNIQUE or PRIMARY KEY failure, "fk" for
// a foreign key, "" when err is no constraint violation.
func constraint(err error) string {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return ""
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		msg := e.Error()
		const marker = "constraint failed: "
		if i := strings.LastIndex(msg, marker); i >= 0 {
			msg = msg[i+len(marker):]
		}
		if i := strings.LastIndex(msg, " ("); i >= 0 { // trailing "(2067)"
			msg = msg[:i]
		}
		return strings.TrimSpace(msg)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return "fk"
	}
	return ""
}

// QueryContext uses the writer's prepared statement when q is one.
func (t txn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx = context.WithoutCancel(ctx)
	if stmt, ok := t.st.wstmts[q]; ok {
		return t.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, q, args...)
}
