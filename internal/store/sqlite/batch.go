package sqlite

import (
	"context"
	"fmt"

	"github.com/ingot-dev/ingot/internal/store"
)

// SaveServers carries many SaveServer calls in one transaction (one fsync
// instead of one per save), each under its own savepoint so that one
// conflict undoes only its own write (store.BatchSaver).
func (st *Store) SaveServers(ctx context.Context, saves []store.Save) []error {
	errs := make([]error, len(saves))
	err := st.write(ctx, func(tx txn) error {
		for i, sv := range saves {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT save_one"); err != nil {
				return fmt.Errorf("sqlite: savepoint: %w", err)
			}
			if sv.Fence != nil {
				errs[i] = st.checkFence(store.WithFence(ctx, *sv.Fence), tx)
			}
			if errs[i] == nil {
				errs[i] = saveServer(ctx, tx, sv.Server, sv.Events)
			}
			undo := "RELEASE save_one"
			if errs[i] != nil {
				undo = "ROLLBACK TO save_one"
			}
			if _, err := tx.ExecContext(ctx, undo); err != nil {
				return fmt.Errorf("sqlite: %s: %w", undo, err)
			}
			if errs[i] != nil {
				if _, err := tx.ExecContext(ctx, "RELEASE save_one"); err != nil {
					return fmt.Errorf("sqlite: release: %w", err)
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

// idChunk bounds the parameters of one IN list (SQLite allows 32,766).
const idChunk = 500
