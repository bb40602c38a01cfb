package sqlstore

import (
	"context"
	"errors"

	"github.com/ingot-dev/ingot/internal/store"
)

// SaveServers carries many SaveServer calls in one transaction (one commit
// instead of one per save), each under its own savepoint so that one
// conflict undoes only its own write (store.BatchSaver). A save with a
// fence checks it first, as a fenced SaveServer does (on PostgreSQL
// reading its lease row FOR KEY SHARE).
//
// Saves rarely fail, so the batch first runs without savepoints (two
// statements fewer per save); the first failure undoes that transaction
// whole, and the batch runs again the careful way.
func (st *Store) SaveServers(ctx context.Context, saves []store.Save) []error {
	err := st.B.Write(ctx, func(tx Tx) error {
		for _, sv := range saves {
			if err := st.saveOne(ctx, tx, sv); err != nil {
				return saveFailed{err}
			}
		}
		return nil
	})
	if err == nil {
		for _, sv := range saves {
			sv.Server.Version++
		}
		return make([]error, len(saves))
	}
	if !errors.As(err, new(saveFailed)) {
		return repeat(err, len(saves))
	}
	return st.saveEach(ctx, saves)
}

// saveFailed is the error of one save of an optimistic batch.
type saveFailed struct{ err error }

func (e saveFailed) Error() string { return e.err.Error() }
func (e saveFailed) Unwrap() error { return e.err }

// saveOne is one save of a batch in tx: its fence, then its write.
func (st *Store) saveOne(ctx context.Context, tx Tx, sv store.Save) error {
	if sv.Fence != nil {
		if err := st.B.CheckFence(store.WithFence(ctx, *sv.Fence), tx); err != nil {
			return err
		}
	}
	return st.B.Save(ctx, tx, sv.Server, sv.Events)
}

// repeat is n copies of err.
func repeat(err error, n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// saveEach is SaveServers with a savepoint around each save.
func (st *Store) saveEach(ctx context.Context, saves []store.Save) []error {
	errs := make([]error, len(saves))
	err := st.B.Write(ctx, func(tx Tx) error {
		clear(errs) // PostgreSQL may run this again
		for i, sv := range saves {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT save_one"); err != nil {
				return st.errorf("savepoint: %w", err)
			}
			errs[i] = st.saveOne(ctx, tx, sv)
			undo := "RELEASE SAVEPOINT save_one"
			if errs[i] != nil {
				undo = "ROLLBACK TO SAVEPOINT save_one"
			}
			if _, err := tx.ExecContext(ctx, undo); err != nil {
				return st.errorf("%s: %w", undo, err)
			}
			if errs[i] != nil {
				if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT save_one"); err != nil {
					return st.errorf("release savepoint: %w", err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return repeat(err, len(saves))
	}
	for i, sv := range saves {
		if errs[i] == nil {
			sv.Server.Version++
		}
	}
	return errs
}
