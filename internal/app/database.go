package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/backend"
)

// openDatabase locks and opens the database (SQLite's leases judged by
// leaseClock; nil: the wall clock) and seeds the configured flavors; on
// error everything is released.
func (a *App) openDatabase(ctx context.Context, leaseClock clock.Clock) error {
	cfg := a.Config
	if err := a.lockDatabase(ctx); err != nil {
		return err
	}
	st, err := backend.Open(ctx, cfg.Database, backend.Options{MaxConns: cfg.DatabaseMaxConns, Clock: leaseClock})
	if err != nil {
		a.Close()
		return fmt.Errorf("database %s: %w", config.RedactDSN(cfg.Database), err)
	}
	a.Store = st
	a.closers = append(a.closers, func() { _ = st.Close() })
	if err := api.SeedFlavors(ctx, st, cfg.Catalog().Flavors); err != nil {
		a.Close()
		return fmt.Errorf("flavors: %w", err)
	}
	return nil
}

// lockDatabase makes this process the one owner of the database: a second
// ingot on the same database would run a second reconciler over the same
// servers (S25). The store's backend holds the lock (a lock file beside a
// SQLite database, an advisory lock in PostgreSQL), dropped when the
// process ends however it ends; Serve adds the listen address to its record.
func (a *App) lockDatabase(ctx context.Context) error {
	db := config.RedactDSN(a.Config.Database)
	o, err := backend.Acquire(ctx, a.Config.Database, a.Config.Host)
	if errors.Is(err, backend.ErrHeld) {
		return fmt.Errorf("database %s is in use by another ingot: %w; stop that one, or give this one another database (--database, or --data-dir with --dev)", db, err)
	}
	if err != nil {
		return fmt.Errorf("database %s: %w", db, err)
	}
	a.owner = o
	// Serve may take the ownership again after a lost session (reown.go).
	a.closers = append(a.closers, func() { _ = a.owner.Release() })
	return nil
}

// databaseNow is the database's clock when it has one every replica must
// agree with, else the host's.
func databaseNow(ctx context.Context, st store.Store, sys clock.Clock) (time.Time, error) {
	if c, ok := st.(store.Clocked); ok {
		return c.Now(ctx)
	}
	return sys.Now(), nil
}
