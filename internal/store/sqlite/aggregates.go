package sqlite

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
)

const aggregateCols = "id, uuid, name, metadata, created_at, updated_at"

// rowQuerier is what both the reader pool and a write transaction offer.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func scanAggregate(sc scanner) (store.Aggregate, error) {
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
	if a.CreatedAt, err = decTime(created); err != nil {
		return a, err
	}
	if updated.Valid {
		u, err := decTime(updated)
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
	a, err := scanAggregate(q.QueryRowContext(ctx, "SELECT "+aggregateCols+" FROM aggregates WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("aggregate %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("sqlite: get aggregate %d: %w", id, err)
	}
	rows, err := q.QueryContext(ctx, "SELECT host FROM aggregate_hosts WHERE aggregate_id = ? ORDER BY host", id)
	if err != nil {
		return a, fmt.Errorf("sqlite: hosts of aggregate %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return a, fmt.Errorf("sqlite: hosts of aggregate %d: %w", id, err)
		}
		a.Hosts = append(a.Hosts, h)
	}
	return a, rows.Err()
}

func aggregateConflict(err error, name string) error {
	if constraint(err) == "aggregates.name" {
		return fmt.Errorf("aggregate %s: %w", name, store.ErrExists)
	}
	return fmt.Errorf("sqlite: write aggregate %s: %w", name, err)
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
	err = st.write(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO aggregates (uuid, name, metadata, created_at) VALUES (?, ?, ?, ?)",
			a.UUID, a.Name, string(js), encTimeNN(a.CreatedAt))
		if err != nil {
			return aggregateConflict(err, a.Name)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("sqlite: create aggregate %s: %w", a.Name, err)
		}
		out, err = loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}

// GetAggregate implements store.Aggregates.
func (st *Store) GetAggregate(ctx context.Context, id int64) (store.Aggregate, error) {
	return loadAggregate(ctx, st.r, id)
}

// ListAggregates implements store.Aggregates.
func (st *Store) ListAggregates(ctx context.Context) ([]store.Aggregate, error) {
	rows, err := st.r.QueryContext(ctx, "SELECT "+aggregateCols+" FROM aggregates ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("sqlite: list aggregates: %w", err)
	}
	defer rows.Close()
	out := []store.Aggregate{}
	at := map[int64]int{}
	for rows.Next() {
		a, err := scanAggregate(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list aggregates: %w", err)
		}
		at[a.ID] = len(out)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list aggregates: %w", err)
	}
	hosts, err := st.r.QueryContext(ctx, "SELECT aggregate_id, host FROM aggregate_hosts ORDER BY aggregate_id, host")
	if err != nil {
		return nil, fmt.Errorf("sqlite: list aggregate hosts: %w", err)
	}
	defer hosts.Close()
	for hosts.Next() {
		var id int64
		var h string
		if err := hosts.Scan(&id, &h); err != nil {
			return nil, fmt.Errorf("sqlite: list aggregate hosts: %w", err)
		}
		if i, ok := at[id]; ok { // an aggregate created between the two reads is not listed
			out[i].Hosts = append(out[i].Hosts, h)
		}
	}
	return out, hosts.Err()
}

// UpdateAggregate implements store.Aggregates.
func (st *Store) UpdateAggregate(ctx context.Context, id int64, name *string, meta map[string]*string, at time.Time) (store.Aggregate, error) {
	var out store.Aggregate
	err := st.write(ctx, func(tx txn) error {
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
		if _, err := tx.ExecContext(ctx, "UPDATE aggregates SET name = ?, metadata = ?, updated_at = ? WHERE id = ?",
			a.Name, string(js), encTimeNN(at), id); err != nil {
			return aggregateConflict(err, a.Name)
		}
		out, err = loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteAggregate implements store.Aggregates.
func (st *Store) DeleteAggregate(ctx context.Context, id int64) error {
	return st.write(ctx, func(tx txn) error {
		a, err := loadAggregate(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(a.Hosts) > 0 {
			return fmt.Errorf("aggregate %d has hosts: %w", id, store.ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM aggregates WHERE id = ?", id); err != nil {
			return fmt.Errorf("sqlite: delete aggregate %d: %w", id, err)
		}
		return nil
	})
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
// existing aggregate, failing with none when it changed nothing.
func (st *Store) changeAggregateHost(ctx context.Context, id int64, at time.Time, q, host string, none error) (store.Aggregate, error) {
	var out store.Aggregate
	err := st.write(ctx, func(tx txn) error {
		if _, err := loadAggregate(ctx, tx, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, q, id, host)
		if err != nil {
			return fmt.Errorf("sqlite: host %s of aggregate %d: %w", host, id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: host %s of aggregate %d: %w", host, id, err)
		} else if n == 0 {
			return none
		}
		if _, err := tx.ExecContext(ctx, "UPDATE aggregates SET updated_at = ? WHERE id = ?", encTimeNN(at), id); err != nil {
			return fmt.Errorf("sqlite: update aggregate %d: %w", id, err)
		}
		out, err = loadAggregate(ctx, tx, id)
		return err
	})
	return out, err
}
