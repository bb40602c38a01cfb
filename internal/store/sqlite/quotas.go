package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

const (
	// qUsage counts a project's live servers (no delete requested, not
	// deleted) by resource class: index-only on servers_project_usage.
	qUsage = `SELECT resource_class, COUNT(*), COALESCE(SUM(vcpus), 0), COALESCE(SUM(ram_mb), 0)
		FROM servers INDEXED BY servers_project_usage
		WHERE project_id = ? AND desired = 'active' AND phase <> 'deleted' GROUP BY resource_class`
	qOverrides = "SELECT resource, hard_limit FROM quotas WHERE project_id = ?"
)

// identityWriterQueries are prepared at Open: a create runs them in its
// transaction.
var identityWriterQueries = []string{qUsage, qOverrides}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// QueryContext uses the writer's prepared statement when q is one.
func (t txn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if stmt, ok := t.st.wstmts[q]; ok {
		return t.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, q, args...)
}

// readerQuerier runs reads through the store's cached reader statements.
type readerQuerier struct{ st *Store }

func (r readerQuerier) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return r.st.query(ctx, q, args...)
}

func usage(ctx context.Context, q querier, projectID string) (store.Usage, error) {
	rows, err := q.QueryContext(ctx, qUsage, projectID)
	if err != nil {
		return store.Usage{}, fmt.Errorf("sqlite: usage of %s: %w", projectID, err)
	}
	defer rows.Close()
	u := store.Usage{ByClass: map[string]int{}}
	for rows.Next() {
		var rc string
		var n, cores, ram int
		if err := rows.Scan(&rc, &n, &cores, &ram); err != nil {
			return store.Usage{}, fmt.Errorf("sqlite: usage of %s: %w", projectID, err)
		}
		u.Instances += n
		u.Cores += cores
		u.RAM += ram
		u.ByClass[rc] += n
	}
	return u, rows.Err()
}

func overrides(ctx context.Context, q querier, projectID string) (store.Limits, error) {
	rows, err := q.QueryContext(ctx, qOverrides, projectID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: quotas of %s: %w", projectID, err)
	}
	defer rows.Close()
	out := store.Limits{}
	for rows.Next() {
		var res string
		var lim int
		if err := rows.Scan(&res, &lim); err != nil {
			return nil, fmt.Errorf("sqlite: quotas of %s: %w", projectID, err)
		}
		out[res] = lim
	}
	return out, rows.Err()
}

// CreateServerWithin implements store.Quotas: the usage is counted inside
// the write transaction, which SQLite runs one at a time (BEGIN
// IMMEDIATE), so the count and the insert cannot interleave with another
// create. PostgreSQL needs a lock on the project for the same (e.g. a
// row in a projects table SELECTed FOR UPDATE).
func (st *Store) CreateServerWithin(ctx context.Context, s *lifecycle.Server, defaults store.Limits) error {
	_, err := st.CreateServersWithin(ctx, []*lifecycle.Server{s}, 1, defaults)
	return err
}

// CreateServersWithin implements store.Quotas, in one transaction as
// CreateServerWithin.
func (st *Store) CreateServersWithin(ctx context.Context, servers []*lifecycle.Server, minCount int, defaults store.Limits) (int, error) {
	if len(servers) == 0 {
		return 0, nil
	}
	return st.createServers(ctx, servers, func(tx txn, cs []*lifecycle.Server) (int, error) {
		limits := store.Limits{}
		for k, v := range defaults {
			limits[k] = v
		}
		over, err := overrides(ctx, tx, cs[0].ProjectID)
		if err != nil {
			return 0, err
		}
		for k, v := range over {
			limits[k] = v
		}
		// The servers of one create share their group: as many as it takes.
		room, err := groupRoom(ctx, tx, cs[0], minCount, limits.Get(store.ResServerGroupMembers))
		if err != nil {
			return 0, err
		}
		if room >= 0 && room < len(cs) {
			cs = cs[:room]
		}
		if !anyLimit(limits) {
			return len(cs), nil // nothing to count against
		}
		u, err := usage(ctx, tx, cs[0].ProjectID)
		if err != nil {
			return 0, err
		}
		return store.FitServers(u, limits, cs, minCount)
	})
}

// anyLimit reports whether a server could pass one of the limits.
func anyLimit(l store.Limits) bool {
	for res, v := range l {
		if v >= 0 && (res == store.ResInstances || res == store.ResCores || res == store.ResRAM ||
			strings.HasPrefix(res, store.ClassPrefix)) {
			return true
		}
	}
	return false
}

// Usage implements store.Quotas.
func (st *Store) Usage(ctx context.Context, projectID string) (store.Usage, error) {
	return usage(ctx, readerQuerier{st}, projectID)
}

// QuotaOverrides implements store.Quotas.
func (st *Store) QuotaOverrides(ctx context.Context, projectID string) (store.Limits, error) {
	return overrides(ctx, readerQuerier{st}, projectID)
}

// SetQuotas implements store.Quotas.
func (st *Store) SetQuotas(ctx context.Context, projectID string, limits store.Limits) error {
	return st.write(ctx, func(tx txn) error {
		for res, lim := range limits {
			if _, err := tx.ExecContext(ctx, `INSERT INTO quotas (project_id, resource, hard_limit) VALUES (?, ?, ?)
				ON CONFLICT (project_id, resource) DO UPDATE SET hard_limit = excluded.hard_limit`,
				projectID, res, lim); err != nil {
				return fmt.Errorf("sqlite: set quota %s of %s: %w", res, projectID, err)
			}
		}
		return nil
	})
}

// DeleteQuotas implements store.Quotas.
func (st *Store) DeleteQuotas(ctx context.Context, projectID string) error {
	return st.write(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM quotas WHERE project_id = ?", projectID); err != nil {
			return fmt.Errorf("sqlite: delete quotas of %s: %w", projectID, err)
		}
		return nil
	})
}
