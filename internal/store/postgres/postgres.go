// Package postgres is store.Store on PostgreSQL, for ingot deployments
// that outgrow the embedded SQLite store: the PostgreSQL side (backend.go)
// of the code both stores share (internal/store/sqlstore), plus what only
// PostgreSQL has — the one-statement SaveServer, the leases' SQL, the
// owner's session lock (owner.go) and LISTEN/NOTIFY kicks.
//
// Connections. One pgxpool (pgx v5), reached by the shared code through
// database/sql (pgx/v5/stdlib's OpenDBFromPool, statements rebound from ?
// to $n); every read is one statement, every write one short transaction
// (READ COMMITTED) or a single statement. pgx caches each statement's
// prepared form per connection. Context deadlines bound every call.
//
// Atomicity without SQLite's single writer: several writers (and several
// replicas) run at once, so every read-check-write locks what it checks.
// The shared code asks for it through the seam, and here it is:
//   - SaveServer is one UPDATE … WHERE version = $v (the compare-and-swap
//     itself; a concurrent writer's commit makes PostgreSQL re-check the
//     WHERE on the new row, so one of two saves wins); its events are
//     inserted by the same statement.
//   - RequestDelete and UpdateServer read the server FOR UPDATE
//     (sqlstore.Store.ForUpdate), as do the aggregate writes (LockRow).
//   - CreateServer's volume reservation locks the volume rows (FOR UPDATE,
//     in id order so two creates cannot deadlock), then checks and takes them.
//   - The quota-checked creates and CreateKeypair count what the quota
//     limits under a transaction-scoped advisory lock on the project (the
//     user, for keypairs; Lock): the count and the insert of two racing
//     creates cannot interleave, and no projects table is needed.
//
// SERIALIZABLE would give the same with fewer locks but turns every race
// into a retried transaction; explicit locks make the waits short and the
// outcome the same as SQLite's. Deadlocks (40P01) and serialization
// failures (40001), should any arise, are retried a few times (Write).
// Constraint violations (SQLSTATE 23505, 23503) become the typed store
// errors by constraint name (constraint).
//
// Leases and fences (leases.go): every write transaction first checks the
// fence its context may carry, reading the lease row FOR KEY SHARE, and the
// single-statement writes run in such a transaction when fenced, so a
// takeover waits for a fenced write in flight; API writes carry no fence
// and stay single statements. Kicks between replicas are NOTIFY ingot_kick.
//
// Schema: migrations/NNNN_name.sql, applied at Open by the shared loader
// under an advisory lock (migrate.go), so replicas starting together
// migrate once.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

const (
	defaultLimit = 1000
	maxLimit     = 1000
)

// Store is the PostgreSQL store. Safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	db   *sql.DB // the pool under database/sql, for the shared code (backend.go)
	*sqlstore.Store
}

var _ store.Store = (*Store)(nil)

// Options tune the connection pool.
type Options struct {
	// MaxConns bounds the pool (0: pgxpool's default, max(4, CPUs)).
	MaxConns int
}

// Open connects to the database of dsn (a postgres:// URL or a key=value
// string) and applies the embedded migrations that are not yet applied.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(min(opts.MaxConns, 1<<20))
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "ingot"
	// A transaction left idle this long belongs to a paused or stuck
	// process (ours run their statements back to back): PostgreSQL ends its
	// session, so the lease rows a fenced write holds FOR KEY SHARE cannot keep
	// a takeover from a replica stopped mid-write waiting for ever (the
	// takeover skips locked rows). Its write then fails when it resumes.
	cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = idleInTxTimeout
	defaultConnectTimeout(cfg.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, db: stdlib.OpenDBFromPool(pool)} // closing db leaves the pool open
	s.Store = &sqlstore.Store{B: backend{s}, Name: "postgres", ForUpdate: " FOR UPDATE", TagsColumn: true,
		NameFilter: "strpos(name, ?) > 0"}
	if err := migrate(ctx, s.db); err != nil {
		s.Close()
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pool. Safe to call more than once.
func (s *Store) Close() error {
	s.db.Close()
	s.pool.Close()
	return nil
}

// Ping checks the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Now is the database's clock (clock_timestamp()), the one its leases are
// judged by: every replica starts its own clock from it (app.New), so the
// replicas agree on deadlines whatever their hosts' clocks say.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.pool.QueryRow(ctx, pqNow).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("postgres: clock: %w", err)
	}
	return now, nil
}

// defaultConnectTimeout bounds a connection attempt the DSN gives no
// connect_timeout for: an unreachable server fails the start (or /readyz)
// in seconds, not after the kernel's minutes of SYN retries.
func defaultConnectTimeout(c *pgx.ConnConfig) {
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 10 * time.Second
	}
}

// idleInTxTimeout is well under the default lease_ttl (10 s), so a paused
// writer's shards are taken over within about one lease period.
const idleInTxTimeout = "5s"

// maxAttempts bounds the retries of a transaction that failed on a
// deadlock or a serialization failure.
const maxAttempts = 5

// retryable reports a deadlock or a serialization failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// Violation kinds of constraint.
const (
	unique     = "23505"
	foreignKey = "23503"
)

// constraint returns the SQLSTATE class (unique or foreignKey) and the
// constraint name of a constraint violation; "", "" for any other error.
func constraint(err error) (code, name string) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || (pe.Code != unique && pe.Code != foreignKey) {
		return "", ""
	}
	return pe.Code, pe.ConstraintName
}

// Unavailable reports an error of a server that is away rather than one
// that refused the statement: no connection (refused, reset, timed out,
// closed under the call), or the server's own connection and shutdown
// states (SQLSTATE class 08, 57P01–57P03, 53300), or its disk full
// (53100: the statement rolled back). A retry may succeed.
func (s *Store) Unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300" || pe.Code == "53100"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}
