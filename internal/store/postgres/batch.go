package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/store"
)

var (
	_ store.BatchSaver = (*Store)(nil)
	_ store.WorkLister = (*Store)(nil)
)

// SaveServers carries many SaveServer calls in one transaction (one commit
// instead of one per save), each under its own savepoint so that one
// conflict undoes only its own write (store.BatchSaver). A save with a
// fence reads its lease row FOR SHARE first, as a fenced SaveServer does.
func (st *Store) SaveServers(ctx context.Context, saves []store.Save) []error {
	errs := make([]error, len(saves))
	err := st.write(ctx, func(tx pgx.Tx) error {
		clear(errs) // write may run fn again
		for i, sv := range saves {
			sp, err := tx.Begin(ctx) // a savepoint
			if err != nil {
				return fmt.Errorf("postgres: savepoint: %w", err)
			}
			if sv.Fence != nil {
				errs[i] = checkFence(store.WithFence(ctx, *sv.Fence), sp)
			}
			if errs[i] == nil {
				errs[i] = saveServer(ctx, sp, sv.Server, sv.Events)
			}
			if errs[i] != nil {
				err = sp.Rollback(ctx)
			} else {
				err = sp.Commit(ctx)
			}
			if err != nil {
				return fmt.Errorf("postgres: savepoint: %w", err)
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
