package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const aggregateCols = "id, uuid, name, metadata, created_at, updated_at"

func scanAggregate(sc codec.Scanner) (store.Aggregate, error) {
	var a store.Aggregate
	var meta string
	var created, updated sql.NullString
	if err := sc.Scan(&a.ID, &a.UUID, &a.Name, &meta, &created, &updated); err != nil {
		return a, err
	}
	if err := json.Unmarshal([]byte(meta), &a.Metadata); err != nil {
		return a, fmt.Errorf("aggregate %d: metadata: %w", a.ID, err)
	}
	if a.Metadata == nil {
		a.Metadata = map[string]string{}
	}
	var err error
	if a.CreatedAt, err = codec.ParseTime(created); err != nil {
		return a, err
	}
	if updated.Valid {
		u, err := codec.ParseTime(updated)
		if err != nil {
			return a, err
		}
		a.UpdatedAt = &u
	}
	a.Hosts = []string{}
	return a, nil
}

// loadAggregate reads one aggregate with its hosts.
func (st *Store) loadAggregate(ctx context.Context, q Tx, id int64) (store.Aggregate, error) {
	a, err := scanAggregate(q.QueryRowContext(ctx, "SELECT "+aggregateCols+" FROM aggregates WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("aggregate %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return a, st.errorf("get aggregate %d: %w", id, err)
	}
	rows, err := q.QueryContext(ctx, "SELECT host FROM aggregate_hosts WHERE aggregate_id = ? ORDER BY host", id)
	if err != nil {
		return a, st.errorf("hosts of aggregate %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return a, st.errorf("hosts of aggregate %d: %w", id, err)
		}
		a.Hosts = append(a.Hosts, h)
	}
	return a, rows.Err()
}

func (st *Store) aggregateConflict(err error, name string) error {
	if c, _ := st.B.Unique(err); c == "aggregates.name" || c == "aggregates_name_key" {
		return fmt.Errorf("aggregate %s: %w", name, store.ErrExists)
	}
	return st.errorf("write aggregate %s: %w", name, err)
}

// CreateAggregate implements store.Aggregates.
func (st *Store) CreateAggregate(ctx context.Context, a store.Aggregate) (store.Aggregate, error) {
	meta := a.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return a, fmt.Errorf("aggregate %s: metadata: %w", a.Name, err)
	}
	if a.UUID == "" {
		a.UUID = uuid.NewString()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	var out store.Aggregate
	err = st.B.Write(ctx, func(tx Tx) error {
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO aggregates (uuid, name, metadata, created_at) VALUES (?, ?, ?, ?)
			RETURNING id`, a.UUID, a.Name, string(js), codec.TimeNN(a.CreatedAt)).Scan(&id); err != nil {
			return st.aggregateConflict(err, a.Name)
		}
		out, err = st.loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}

// GetAggregate implements store.Aggregates.
func (st *Store) GetAggregate(ctx context.Context, id int64) (store.Aggregate, error) {
	return st.loadAggregate(ctx, reader{st.B}, id)
}

// ListAggregates implements store.Aggregates: one snapshot, so the hosts
// are those of the listed aggregates.
func (st *Store) ListAggregates(ctx context.Context) ([]store.Aggregate, error) {
	out := []store.Aggregate{}
	err := st.B.Snapshot(ctx, func(tx Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, "SELECT "+aggregateCols+" FROM aggregates ORDER BY id")
		if err != nil {
			return st.errorf("list aggregates: %w", err)
		}
		all, err := collect(rows, scanAggregate)
		if err != nil {
			return st.errorf("list aggregates: %w", err)
		}
		at := map[int64]int{}
		for _, a := range all {
			at[a.ID] = len(out)
			out = append(out, a)
		}
		hosts, err := tx.QueryContext(ctx, "SELECT aggregate_id, host FROM aggregate_hosts ORDER BY aggregate_id, host")
		if err != nil {
			return st.errorf("list aggregate hosts: %w", err)
		}
		defer hosts.Close()
		for hosts.Next() {
			var id int64
			var h string
			if err := hosts.Scan(&id, &h); err != nil {
				return st.errorf("list aggregate hosts: %w", err)
			}
			if i, ok := at[id]; ok {
				out[i].Hosts = append(out[i].Hosts, h)
			}
		}
		return hosts.Err()
	})
	return out, err
}

// UpdateAggregate implements store.Aggregates.
func (st *Store) UpdateAggregate(ctx context.Context, id int64, name *string, meta map[string]*string, at time.Time) (store.Aggregate, error) {
	var out store.Aggregate
	err := st.B.Write(ctx, func(tx Tx) error {
		// Locked: two concurrent metadata merges must not lose one.
		if err := st.lockAggregate(ctx, tx, id); err != nil {
			return err
		}
		a, err := st.loadAggregate(ctx, tx, id)
		if err != nil {
			return err
		}
		if name != nil {
			a.Name = *name
		}
		merged := maps.Clone(a.Metadata)
		for k, v := range meta {
			if v == nil {
				delete(merged, k)
			} else {
				merged[k] = *v
			}
		}
		js, err := json.Marshal(merged)
		if err != nil {
			return fmt.Errorf("aggregate %d: metadata: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE aggregates SET name = ?, metadata = ?, updated_at = ? WHERE id = ?",
			a.Name, string(js), codec.TimeNN(at), id); err != nil {
			return st.aggregateConflict(err, a.Name)
		}
		out, err = st.loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteAggregate implements store.Aggregates. The aggregate row is
// locked first, so a concurrent add_host (whose update locks it too)
// cannot slip a host in between the check and the delete.
func (st *Store) DeleteAggregate(ctx context.Context, id int64) error {
	return st.B.Write(ctx, func(tx Tx) error {
		if err := st.lockAggregate(ctx, tx, id); err != nil {
			return err
		}
		a, err := st.loadAggregate(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(a.Hosts) > 0 {
			return fmt.Errorf("aggregate %d has hosts: %w", id, store.ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM aggregates WHERE id = ?", id); err != nil {
			return st.errorf("delete aggregate %d: %w", id, err)
		}
		return nil
	})
}

// lockAggregate locks the aggregate's row until tx ends, after the admin
// revision's row: every write to the aggregates takes that one first (the
// BEFORE triggers of migration 0017), so a lock taken on the aggregate
// before it would deadlock with a host change of the same aggregate.
func (st *Store) lockAggregate(ctx context.Context, tx Tx, id int64) error {
	if err := st.B.LockRow(ctx, tx, "admin_revision", 1); err != nil {
		return st.errorf("lock the admin revision: %w", err)
	}
	if err := st.B.LockRow(ctx, tx, "aggregates", id); err != nil {
		return st.errorf("lock aggregate %d: %w", id, err)
	}
	return nil
}

// AddAggregateHost implements store.Aggregates.
func (st *Store) AddAggregateHost(ctx context.Context, id int64, host string, at time.Time) (store.Aggregate, error) {
	return st.changeAggregateHost(ctx, id, at, "INSERT INTO aggregate_hosts (aggregate_id, host) VALUES (?, ?) ON CONFLICT DO NOTHING", host,
		fmt.Errorf("host %s in aggregate %d: %w", host, id, store.ErrExists))
}

// RemoveAggregateHost implements store.Aggregates.
func (st *Store) RemoveAggregateHost(ctx context.Context, id int64, host string, at time.Time) (store.Aggregate, error) {
	return st.changeAggregateHost(ctx, id, at, "DELETE FROM aggregate_hosts WHERE aggregate_id = ? AND host = ?", host,
		fmt.Errorf("host %s in aggregate %d: %w", host, id, store.ErrNotFound))
}

// changeAggregateHost runs q (which changes one row or none) on an
// existing aggregate, locked by the update of its time first, failing
// with none when it changed nothing.
func (st *Store) changeAggregateHost(ctx context.Context, id int64, at time.Time, q, host string, none error) (store.Aggregate, error) {
	var out store.Aggregate
	err := st.B.Write(ctx, func(tx Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE aggregates SET updated_at = ? WHERE id = ?", codec.TimeNN(at), id)
		if err != nil {
			return st.errorf("update aggregate %d: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return st.errorf("update aggregate %d: %w", id, err)
		} else if n == 0 {
			return fmt.Errorf("aggregate %d: %w", id, store.ErrNotFound)
		}
		if res, err = tx.ExecContext(ctx, q, id, host); err != nil {
			return st.errorf("host %s of aggregate %d: %w", host, id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return st.errorf("host %s of aggregate %d: %w", host, id, err)
		} else if n == 0 {
			return none
		}
		out, err = st.loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}
