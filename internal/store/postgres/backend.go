package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// backend is the PostgreSQL side of the shared code (sqlstore.Backend),
// over database/sql on the store's pgxpool (pgx/v5/stdlib): statements
// rebound from ? to $n, fences read FOR KEY SHARE, read-check-writes under
// advisory locks, transactions retried on deadlocks and serialization
// failures.
type backend struct{ st *Store }

var _ sqlstore.Backend = backend{}

func (b backend) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return b.st.db.QueryContext(ctx, dialect.Rebind(q), args...)
}

func (b backend) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return b.st.db.QueryRowContext(ctx, dialect.Rebind(q), args...)
}

// Write is write over database/sql: one transaction, the fence checked
// first, re-run from the start on a deadlock or a serialization failure.
func (b backend) Write(ctx context.Context, fn func(sqlstore.Tx) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = b.once(ctx, fn)
		if err == nil || !retryable(err) || attempt == maxAttempts || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

func (b backend) once(ctx context.Context, fn func(sqlstore.Tx) error) error {
	tx, err := b.st.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	t := rebound{tx}
	if err := b.CheckFence(ctx, t); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := fn(t); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		if b.st.Unavailable(err) {
			// The server may have committed (a synchronous standby
			// promoted after it flushed, or crash recovery): only a read
			// can tell (store.ErrCommitUnknown).
			return fmt.Errorf("postgres: commit: %w: %w", store.ErrCommitUnknown, err)
		}
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}

// Exec runs one statement on the pool, or in a fenced transaction.
func (b backend) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if _, ok := store.FenceOf(ctx); !ok {
		return b.st.db.ExecContext(ctx, dialect.Rebind(q), args...)
	}
	var res sql.Result
	err := b.Write(ctx, func(tx sqlstore.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, q, args...)
		return err
	})
	return res, err
}

func (backend) Unique(err error) (string, bool) {
	code, name := constraint(err)
	return name, code == unique
}

func (backend) ForeignKey(err error) bool {
	code, _ := constraint(err)
	return code == foreignKey
}

func (backend) Lock(ctx context.Context, tx sqlstore.Tx, class int32, key string) error {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?, hashtext(?))", class, key); err != nil {
		return fmt.Errorf("postgres: lock %s: %w", key, err)
	}
	return nil
}

// rebound is a transaction taking statements written with ?.
type rebound struct{ tx *sql.Tx }

func (r rebound) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return r.tx.ExecContext(ctx, dialect.Rebind(q), args...)
}

func (r rebound) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return r.tx.QueryContext(ctx, dialect.Rebind(q), args...)
}

func (r rebound) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return r.tx.QueryRowContext(ctx, dialect.Rebind(q), args...)
}

// Snapshot runs fn in a read-only REPEATABLE READ transaction.
func (b backend) Snapshot(ctx context.Context, fn func(sqlstore.Tx) error) error {
	tx, err := b.st.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("postgres: begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	return fn(rebound{tx})
}

func (backend) LockRow(ctx context.Context, tx sqlstore.Tx, table string, id any) error {
	_, err := tx.ExecContext(ctx, "SELECT 1 FROM "+table+" WHERE id = ? FOR UPDATE", id)
	return err
}

// CheckFence reads the fence's lease row FOR KEY SHARE in tx: a move of the
// lease to a new epoch (which locks the row FOR UPDATE first) waits for tx
// to commit and follows it, or skips the row; a renewal does not wait.
func (backend) CheckFence(ctx context.Context, tx sqlstore.Tx) error {
	f, ok := store.FenceOf(ctx)
	if !ok {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, pqFence, f.Shard, f.Holder, f.Epoch).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("shard %d epoch %d of %s: %w", f.Shard, f.Epoch, f.Holder, store.ErrFenced)
	}
	if err != nil {
		return fmt.Errorf("postgres: fence: %w", err)
	}
	return nil
}

func (b backend) Save(ctx context.Context, tx sqlstore.Tx, s *lifecycle.Server, events []lifecycle.Event) error {
	return b.st.Noticed(ctx, tx, s, func() error { return saveServer(ctx, tx, s, events) })
}

// autocommit runs statements on the pool, each on its own (unfenced
// single-statement writes).
type autocommit struct{ db *sql.DB }

func (a autocommit) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return a.db.ExecContext(ctx, dialect.Rebind(q), args...)
}

func (a autocommit) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return a.db.QueryContext(ctx, dialect.Rebind(q), args...)
}

func (a autocommit) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return a.db.QueryRowContext(ctx, dialect.Rebind(q), args...)
}
