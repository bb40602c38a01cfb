package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const aggregateCols = "id, uuid, name, metadata, created_at, updated_at"

// rowQuerier is what both the pool and a transaction offer.
type rowQuerier interface {
	QueryRow(ctx context.Context, q string, args ...any) pgx.Row
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
}

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
func loadAggregate(ctx context.Context, q rowQuerier, id int64) (store.Aggregate, error) {
	a, err := scanAggregate(q.QueryRow(ctx, "SELECT "+aggregateCols+" FROM aggregates WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return a, fmt.Errorf("aggregate %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("postgres: get aggregate %d: %w", id, err)
	}
	rows, err := q.Query(ctx, "SELECT host FROM aggregate_hosts WHERE aggregate_id = $1 ORDER BY host", id)
	if err != nil {
		return a, fmt.Errorf("postgres: hosts of aggregate %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return a, fmt.Errorf("postgres: hosts of aggregate %d: %w", id, err)
		}
		a.Hosts = append(a.Hosts, h)
	}
	return a, rows.Err()
}

func aggregateConflict(err error, name string) error {
	if code, c := constraint(err); code == unique && c == "aggregates_name_key" {
		return fmt.Errorf("aggregate %s: %w", name, store.ErrExists)
	}
	return fmt.Errorf("postgres: write aggregate %s: %w", name, err)
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
	err = st.write(ctx, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO aggregates (uuid, name, metadata, created_at) VALUES ($1, $2, $3, $4)
			RETURNING id`, a.UUID, a.Name, string(js), codec.TimeNN(a.CreatedAt)).Scan(&id); err != nil {
			return aggregateConflict(err, a.Name)
		}
		out, err = loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}

// GetAggregate implements store.Aggregates.
func (st *Store) GetAggregate(ctx context.Context, id int64) (store.Aggregate, error) {
	return loadAggregate(ctx, st.pool, id)
}

// ListAggregates implements store.Aggregates: one transaction, so the
// hosts are those of the listed aggregates.
func (st *Store) ListAggregates(ctx context.Context) ([]store.Aggregate, error) {
	out := []store.Aggregate{}
	err := pgx.BeginTxFunc(ctx, st.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+aggregateCols+" FROM aggregates ORDER BY id")
		if err != nil {
			return fmt.Errorf("postgres: list aggregates: %w", err)
		}
		at := map[int64]int{}
		for rows.Next() {
			a, err := scanAggregate(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("postgres: list aggregates: %w", err)
			}
			at[a.ID] = len(out)
			out = append(out, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: list aggregates: %w", err)
		}
		hosts, err := tx.Query(ctx, "SELECT aggregate_id, host FROM aggregate_hosts ORDER BY aggregate_id, host")
		if err != nil {
			return fmt.Errorf("postgres: list aggregate hosts: %w", err)
		}
		defer hosts.Close()
		for hosts.Next() {
			var id int64
			var h string
			if err := hosts.Scan(&id, &h); err != nil {
				return fmt.Errorf("postgres: list aggregate hosts: %w", err)
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
	err := st.write(ctx, func(tx pgx.Tx) error {
		// FOR UPDATE: two concurrent metadata merges must not lose one.
		if _, err := tx.Exec(ctx, "SELECT id FROM aggregates WHERE id = $1 FOR UPDATE", id); err != nil {
			return fmt.Errorf("postgres: lock aggregate %d: %w", id, err)
		}
		a, err := loadAggregate(ctx, tx, id)
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
		if _, err := tx.Exec(ctx, "UPDATE aggregates SET name = $1, metadata = $2, updated_at = $3 WHERE id = $4",
			a.Name, string(js), codec.TimeNN(at), id); err != nil {
			return aggregateConflict(err, a.Name)
		}
		out, err = loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteAggregate implements store.Aggregates. The aggregate row is
// locked first, so a concurrent add_host (which locks it too) cannot slip
// a host in between the check and the delete.
func (st *Store) DeleteAggregate(ctx context.Context, id int64) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT id FROM aggregates WHERE id = $1 FOR UPDATE", id); err != nil {
			return fmt.Errorf("postgres: lock aggregate %d: %w", id, err)
		}
		a, err := loadAggregate(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(a.Hosts) > 0 {
			return fmt.Errorf("aggregate %d has hosts: %w", id, store.ErrConflict)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM aggregates WHERE id = $1", id); err != nil {
			return fmt.Errorf("postgres: delete aggregate %d: %w", id, err)
		}
		return nil
	})
}

// AddAggregateHost implements store.Aggregates.
func (st *Store) AddAggregateHost(ctx context.Context, id int64, host string, at time.Time) (store.Aggregate, error) {
	return st.changeAggregateHost(ctx, id, at, "INSERT INTO aggregate_hosts (aggregate_id, host) VALUES ($1, $2) ON CONFLICT DO NOTHING", host,
		fmt.Errorf("host %s in aggregate %d: %w", host, id, store.ErrExists))
}

// RemoveAggregateHost implements store.Aggregates.
func (st *Store) RemoveAggregateHost(ctx context.Context, id int64, host string, at time.Time) (store.Aggregate, error) {
	return st.changeAggregateHost(ctx, id, at, "DELETE FROM aggregate_hosts WHERE aggregate_id = $1 AND host = $2", host,
		fmt.Errorf("host %s in aggregate %d: %w", host, id, store.ErrNotFound))
}

// changeAggregateHost runs q (which changes one row or none) on an
// existing, locked aggregate, failing with none when it changed nothing.
func (st *Store) changeAggregateHost(ctx context.Context, id int64, at time.Time, q, host string, none error) (store.Aggregate, error) {
	var out store.Aggregate
	err := st.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE aggregates SET updated_at = $1 WHERE id = $2", codec.TimeNN(at), id)
		if err != nil {
			return fmt.Errorf("postgres: update aggregate %d: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("aggregate %d: %w", id, store.ErrNotFound)
		}
		res, err := tx.Exec(ctx, q, id, host)
		if err != nil {
			return fmt.Errorf("postgres: host %s of aggregate %d: %w", host, id, err)
		}
		if res.RowsAffected() == 0 {
			return none
		}
		out, err = loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}
