// Package backend opens the store a configuration's database setting
// names — a SQLite path (internal/store/sqlite) or a postgres:// URL
// (internal/store/postgres) — so that nothing above the store knows the
// dialect.
package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/lockfile"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/postgres"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

// Options tune the store.
type Options struct {
	// MaxConns bounds a PostgreSQL connection pool (0: the driver's default).
	MaxConns int
	// Clock judges SQLite's leases and fences (nil: the wall clock);
	// PostgreSQL judges them by its own.
	Clock clock.Clock
}

// Open opens (and migrates) the store of dsn.
func Open(ctx context.Context, dsn string, opts Options) (store.Store, error) {
	if config.IsPostgres(dsn) {
		return postgres.Open(ctx, dsn, postgres.Options{MaxConns: opts.MaxConns})
	}
	if opts.Clock != nil {
		return sqlite.Open(ctx, dsn, sqlite.WithClock(opts.Clock))
	}
	return sqlite.Open(ctx, dsn)
}

// Owner is this process's ownership of a database: one ingot per database,
// so one reconciler acts on its servers.
type Owner interface {
	// SetListen records where the owner serves, for the message a refused
	// second process shows.
	SetListen(ctx context.Context, listen string) error
	// Lost is closed if the ownership is lost while held (a PostgreSQL
	// session that ended); the process must then stop acting on the
	// database. nil (never closed) for a lock file, which the kernel holds.
	Lost() <-chan struct{}
	Release() error
}

// ErrHeld is matched (errors.Is) when another process owns the database.
var ErrHeld = errors.New("database held by another process")

// Acquire makes this process the owner of dsn's database as replica host,
// without waiting: for SQLite (one process) an exclusive lock on
// <path>.lock, for PostgreSQL a session advisory lock per host (replicas of
// other hosts share the work by leases). An error matching ErrHeld names
// the holder.
func Acquire(ctx context.Context, dsn, host string) (Owner, error) {
	if config.IsPostgres(dsn) {
		o, err := postgres.AcquireOwner(ctx, dsn, host)
		if errors.Is(err, postgres.ErrOwnerHeld) {
			return nil, heldError{err}
		}
		return o, err
	}
	l, err := lockfile.Acquire(dsn+".lock", lockfile.Holder{PID: os.Getpid(), Since: time.Now().UTC().Truncate(time.Second)})
	if errors.Is(err, lockfile.ErrHeld) {
		return nil, heldError{err}
	}
	if err != nil {
		return nil, err
	}
	return fileOwner{l}, nil
}

// heldError is the holder's message, matching ErrHeld.
type heldError struct{ error }

func (e heldError) Unwrap() error        { return e.error }
func (e heldError) Is(target error) bool { return target == ErrHeld }

type fileOwner struct{ l *lockfile.Lock }

func (f fileOwner) SetListen(_ context.Context, listen string) error {
	h := f.l.Holder()
	h.Listen = listen
	if err := f.l.Update(h); err != nil {
		return fmt.Errorf("lock record: %w", err)
	}
	return nil
}

func (f fileOwner) Lost() <-chan struct{} { return nil }

func (f fileOwner) Release() error { return f.l.Release() }
