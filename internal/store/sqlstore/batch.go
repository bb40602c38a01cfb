package sqlstore

import (
	"context"

	"github.com/ingot-dev/ingot/internal/store"
)

// SaveServers carries many SaveServer calls in one transaction (one commit
// instead of one per save), each under its own savepoint so that one
// conflict undoes only its own write (store.BatchSaver). A save with a
// fence checks it first, as a fenced SaveServer does (on PostgreSQL
// reading its lease row FOR KEY SHARE).
func (st *Store) SaveServers(ctx context.Context, saves []store.Save) []error {
	errs := make([]error, len(saves))
	err := st.B.Write(ctx, func(tx Tx) error {
		clear(errs) // PostgreSQL may run this again
		for i, sv := range saves {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT save_one"); err != nil {
				return st.errorf("savepoint: %w", err)
			}
			if sv.Fence != nil {
				errs[i] = st.B.CheckFence(store.WithFence(ctx, *sv.Fence), tx)
			}
			if errs[i] == nil {
				errs[i] = st.B.Save(ctx, tx, sv.Server, sv.Events)
			}
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
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i, sv := range saves {
		if errs[i] == nil {
			sv.Server.Version++
		}
	}
	return errs
}
