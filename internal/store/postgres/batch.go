package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
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

// NeedsWorkVersions lists (id, version) of the servers of shards needing
// work (partial index servers_work_shard, index only; no document is
// decoded).
func (st *Store) NeedsWorkVersions(ctx context.Context, shards store.Shards) ([]store.IDVersion, error) {
	q := "SELECT id, version FROM servers WHERE needs_work"
	cond, args := sqlstore.ShardCond(shards)
	if cond != "" {
		q += " AND " + cond
	}
	rows, err := st.pool.Query(ctx, dialect.Rebind(q+" ORDER BY id"), args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: servers needing work: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.IDVersion, error) {
		var v store.IDVersion
		return v, r.Scan(&v.ID, &v.Version)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: servers needing work: %w", err)
	}
	return out, nil
}

// ServersByID loads the servers with these ids, by id, in one query.
func (st *Store) ServersByID(ctx context.Context, ids []string) ([]*lifecycle.Server, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := st.queryServers(ctx, "servers by id", len(ids),
		"SELECT "+codec.ServerCols+" FROM servers WHERE id = ANY($1)", ids)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *lifecycle.Server) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
