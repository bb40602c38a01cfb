package sqlstore

import (
	"context"
	"database/sql"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// qOverrides reads a project's quota overrides.
const qOverrides = "SELECT resource, hard_limit FROM quotas WHERE project_id = ?"

// qUsage counts a project's live servers (no delete requested, not
// deleted) by resource class: index-only on servers_project_usage.
func (st *Store) qUsage() string {
	return `SELECT resource_class, COUNT(*), COALESCE(SUM(vcpus), 0), COALESCE(SUM(ram_mb), 0)
		FROM ` + st.from("servers", "servers_project_usage") + `
		WHERE project_id = ? AND desired = 'active' AND phase <> 'deleted' GROUP BY resource_class`
}

// WriterQueries are the statements the shared code runs in write
// transactions, for a store that prepares them (SQLite).
func (st *Store) WriterQueries() []string {
	return []string{st.insertSQL(), qInsertAction, st.qUsage(), qOverrides, QInsertPort, QSetPortVIF, QBindPort, QDeletePort,
		st.qBefore(), qInsertNotice}
}

func (st *Store) usage(ctx context.Context, q Tx, projectID string) (store.Usage, error) {
	rows, err := q.QueryContext(ctx, st.qUsage(), projectID)
	if err != nil {
		return store.Usage{}, st.errorf("usage of %s: %w", projectID, err)
	}
	defer rows.Close()
	u := store.Usage{ByClass: map[string]int{}}
	for rows.Next() {
		var rc string
		var n, cores, ram int
		if err := rows.Scan(&rc, &n, &cores, &ram); err != nil {
			return store.Usage{}, st.errorf("usage of %s: %w", projectID, err)
		}
		u.Instances += n
		u.Cores += cores
		u.RAM += ram
		u.ByClass[rc] += n
	}
	return u, rows.Err()
}

func (st *Store) overrides(ctx context.Context, q Tx, projectID string) (store.Limits, error) {
	rows, err := q.QueryContext(ctx, qOverrides, projectID)
	if err != nil {
		return nil, st.errorf("quotas of %s: %w", projectID, err)
	}
	out, err := scanLimits(rows)
	if err != nil {
		return nil, st.errorf("quotas of %s: %w", projectID, err)
	}
	return out, nil
}

// scanLimits reads (resource, hard_limit) rows and closes them.
func scanLimits(rows *sql.Rows) (store.Limits, error) {
	defer rows.Close()
	out := store.Limits{}
	for rows.Next() {
		var res string
		var lim int
		if err := rows.Scan(&res, &lim); err != nil {
			return nil, err
		}
		out[res] = lim
	}
	return out, rows.Err()
}

// CreateServerWithin implements store.Quotas: CreateServersWithin of one.
func (st *Store) CreateServerWithin(ctx context.Context, s *lifecycle.Server, defaults store.Limits) error {
	_, err := st.CreateServersWithin(ctx, []*lifecycle.Server{s}, 1, defaults)
	return err
}

// CreateServersWithin implements store.Quotas: in one transaction it counts
// the project's usage once and inserts the first n servers, n the most from
// minCount up that fit. The count and the insert cannot interleave with
// another create of the project: SQLite runs one write at a time, and on
// PostgreSQL the project's advisory lock is taken first (Backend.Lock), so
// the usage counted is a fresh snapshot at READ COMMITTED, after the
// previous holder committed.
func (st *Store) CreateServersWithin(ctx context.Context, servers []*lifecycle.Server, minCount int, defaults store.Limits) (int, error) {
	if len(servers) == 0 {
		return 0, nil
	}
	return st.createServers(ctx, servers, func(tx Tx, cs []*lifecycle.Server) (int, error) {
		project := cs[0].ProjectID
		over, err := st.overrides(ctx, tx, project)
		if err != nil {
			return 0, err
		}
		limits := codec.Merge(defaults, over)
		locked := false
		lock := func() error {
			if locked {
				return nil
			}
			locked = true
			return st.B.Lock(ctx, tx, LockProjectQuota, project)
		}
		if cs[0].Spec.Group != nil { // the group's member count under the project's lock too
			if err := lock(); err != nil {
				return 0, err
			}
		}
		// The servers of one create share their group: as many as it takes.
		room, err := st.groupRoom(ctx, tx, cs[0], minCount, limits.Get(store.ResServerGroupMembers))
		if err != nil {
			return 0, err
		}
		if room >= 0 && room < len(cs) {
			cs = cs[:room]
		}
		if !codec.AnyLimit(limits) {
			return len(cs), nil // nothing to count against
		}
		if err := lock(); err != nil {
			return 0, err
		}
		u, err := st.usage(ctx, tx, project)
		if err != nil {
			return 0, err
		}
		return store.FitServers(u, limits, cs, minCount)
	})
}

// Usage implements store.Quotas.
func (st *Store) Usage(ctx context.Context, projectID string) (store.Usage, error) {
	return st.usage(ctx, reader{st.B}, projectID)
}

// QuotaOverrides implements store.Quotas.
func (st *Store) QuotaOverrides(ctx context.Context, projectID string) (store.Limits, error) {
	return st.overrides(ctx, reader{st.B}, projectID)
}

// SetQuotas implements store.Quotas (one transaction).
func (st *Store) SetQuotas(ctx context.Context, projectID string, limits store.Limits) error {
	return st.B.Write(ctx, func(tx Tx) error {
		for res, lim := range limits {
			if _, err := tx.ExecContext(ctx, `INSERT INTO quotas (project_id, resource, hard_limit) VALUES (?, ?, ?)
				ON CONFLICT (project_id, resource) DO UPDATE SET hard_limit = excluded.hard_limit`,
				projectID, res, lim); err != nil {
				return st.errorf("set quota %s of %s: %w", res, projectID, err)
			}
		}
		return nil
	})
}

// DeleteQuotas implements store.Quotas.
func (st *Store) DeleteQuotas(ctx context.Context, projectID string) error {
	if _, err := st.B.Exec(ctx, "DELETE FROM quotas WHERE project_id = ?", projectID); err != nil {
		return st.wrap("delete quotas of "+projectID, err)
	}
	return nil
}
