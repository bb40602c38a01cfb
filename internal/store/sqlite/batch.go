package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
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

// NeedsWorkVersions lists (id, version) of the servers of shards needing
// work (partial index servers_work_shard, index only; no document is
// decoded).
func (st *Store) NeedsWorkVersions(ctx context.Context, shards store.Shards) ([]store.IDVersion, error) {
	q := "SELECT id, version FROM servers INDEXED BY servers_work_shard WHERE needs_work = TRUE"
	cond, args := sqlstore.ShardCond(shards)
	if cond != "" {
		q += " AND " + cond
	}
	// One cached text per count of held shards (at most the shard count).
	rows, err := st.query(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: servers needing work: %w", err)
	}
	out, err := sqlstore.CollectIDVersions(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: servers needing work: %w", err)
	}
	return out, nil
}

// idChunk bounds the parameters of one IN list (SQLite allows 32,766).
const idChunk = 500

// ServersByID loads the servers with these ids, by id, idChunk per query.
func (st *Store) ServersByID(ctx context.Context, ids []string) ([]*lifecycle.Server, error) {
	var out []*lifecycle.Server
	for len(ids) > 0 {
		n := min(len(ids), idChunk)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		q := "SELECT " + serverCols + " FROM servers WHERE id IN (?" + strings.Repeat(", ?", n-1) + ") ORDER BY id"
		rows, err := st.r.QueryContext(ctx, q, args...) // not cached: the text varies with n
		if err != nil {
			return nil, fmt.Errorf("sqlite: servers by id: %w", err)
		}
		got, err := collectServers(rows, n)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		ids = ids[n:]
	}
	slices.SortFunc(out, func(a, b *lifecycle.Server) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
