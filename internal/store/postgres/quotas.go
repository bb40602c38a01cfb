package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// Advisory lock classes (the first key of pg_advisory_xact_lock(int, int);
// the second is hashtext of the project or user). A hash collision only
// makes two projects' creates queue behind each other.
const (
	lockProjectQuota int32 = 0x696e0001 // CreateServerWithin, per project
	lockUserKeypairs int32 = 0x696e0002 // CreateKeypair, per user
)

// lockFor takes the transaction-scoped advisory lock (class, key).
func lockFor(ctx context.Context, tx pgx.Tx, class int32, key string) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", class, key); err != nil {
		return fmt.Errorf("postgres: lock %s: %w", key, err)
	}
	return nil
}

type querier interface {
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
}

// qUsage counts a project's live servers (no delete requested, not
// deleted) by resource class: index-only on servers_project_usage.
const qUsage = `SELECT resource_class, COUNT(*), COALESCE(SUM(vcpus), 0), COALESCE(SUM(ram_mb), 0)
	FROM servers WHERE project_id = $1 AND desired = 'active' AND phase <> 'deleted' GROUP BY resource_class`

func usage(ctx context.Context, q querier, projectID string) (store.Usage, error) {
	rows, err := q.Query(ctx, qUsage, projectID)
	if err != nil {
		return store.Usage{}, fmt.Errorf("postgres: usage of %s: %w", projectID, err)
	}
	defer rows.Close()
	u := store.Usage{ByClass: map[string]int{}}
	for rows.Next() {
		var rc string
		var n, cores, ram int
		if err := rows.Scan(&rc, &n, &cores, &ram); err != nil {
			return store.Usage{}, fmt.Errorf("postgres: usage of %s: %w", projectID, err)
		}
		u.Instances += n
		u.Cores += cores
		u.RAM += ram
		u.ByClass[rc] += n
	}
	return u, rows.Err()
}

func overrides(ctx context.Context, q querier, projectID string) (store.Limits, error) {
	rows, err := q.Query(ctx, "SELECT resource, hard_limit FROM quotas WHERE project_id = $1", projectID)
	if err != nil {
		return nil, fmt.Errorf("postgres: quotas of %s: %w", projectID, err)
	}
	defer rows.Close()
	out := store.Limits{}
	for rows.Next() {
		var res string
		var lim int
		if err := rows.Scan(&res, &lim); err != nil {
			return nil, fmt.Errorf("postgres: quotas of %s: %w", projectID, err)
		}
		out[res] = lim
	}
	return out, rows.Err()
}

// CreateServerWithin implements store.Quotas: the project's advisory lock
// is taken first, so the usage counted (a fresh snapshot at READ COMMITTED,
// after the previous holder committed) and the insert are one step for
// every create of the project.
func (st *Store) CreateServerWithin(ctx context.Context, s *lifecycle.Server, defaults store.Limits) error {
	return st.createServer(ctx, s, func(tx pgx.Tx, c *lifecycle.Server) error {
		over, err := overrides(ctx, tx, c.ProjectID)
		if err != nil {
			return err
		}
		limits := codec.Merge(defaults, over)
		if c.Spec.Group != nil { // the group's member count under the project's lock too
			if err := lockFor(ctx, tx, lockProjectQuota, c.ProjectID); err != nil {
				return err
			}
		}
		if err := checkGroupMembers(ctx, tx, c, limits.Get(store.ResServerGroupMembers)); err != nil {
			return err
		}
		if !codec.AnyLimit(limits) {
			return nil // nothing to count against
		}
		if err := lockFor(ctx, tx, lockProjectQuota, c.ProjectID); err != nil {
			return err
		}
		u, err := usage(ctx, tx, c.ProjectID)
		if err != nil {
			return err
		}
		return store.CheckServer(u, limits, c.Spec.VCPUs, c.Spec.RAMMB, c.Spec.ResourceClass)
	})
}

// Usage implements store.Quotas.
func (st *Store) Usage(ctx context.Context, projectID string) (store.Usage, error) {
	return usage(ctx, st.pool, projectID)
}

// QuotaOverrides implements store.Quotas.
func (st *Store) QuotaOverrides(ctx context.Context, projectID string) (store.Limits, error) {
	return overrides(ctx, st.pool, projectID)
}

// SetQuotas implements store.Quotas (one transaction).
func (st *Store) SetQuotas(ctx context.Context, projectID string, limits store.Limits) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		for res, lim := range limits {
			if _, err := tx.Exec(ctx, `INSERT INTO quotas (project_id, resource, hard_limit) VALUES ($1, $2, $3)
				ON CONFLICT (project_id, resource) DO UPDATE SET hard_limit = excluded.hard_limit`,
				projectID, res, lim); err != nil {
				return fmt.Errorf("postgres: set quota %s of %s: %w", res, projectID, err)
			}
		}
		return nil
	})
}

// DeleteQuotas implements store.Quotas.
func (st *Store) DeleteQuotas(ctx context.Context, projectID string) error {
	return st.fenced(ctx, func(q executor) error {
		if _, err := q.Exec(ctx, "DELETE FROM quotas WHERE project_id = $1", projectID); err != nil {
			return fmt.Errorf("postgres: delete quotas of %s: %w", projectID, err)
		}
		return nil
	})
}

// CreateServersWithin implements store.MultiCreator: under the project's
// advisory lock, as CreateServerWithin, it counts the usage once and
// inserts the first n servers, n the most from minCount up that fit.
func (st *Store) CreateServersWithin(ctx context.Context, servers []*lifecycle.Server, minCount int, defaults store.Limits) (int, error) {
	rows := make([]*serverRow, 0, len(servers))
	cs := make([]*lifecycle.Server, 0, len(servers))
	for _, s := range servers {
		r, err := newServerRow(s)
		if err != nil {
			return 0, err
		}
		rows = append(rows, r)
		cs = append(cs, &r.c)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	n := 0
	err := st.write(ctx, func(tx pgx.Tx) error {
		n = len(rows)
		project := rows[0].c.ProjectID
		over, err := overrides(ctx, tx, project)
		if err != nil {
			return err
		}
		limits := codec.Merge(defaults, over)
		if rows[0].c.Spec.Group != nil {
			if err := lockFor(ctx, tx, lockProjectQuota, project); err != nil {
				return err
			}
		}
		// The servers of one create share their group: as many as it takes.
		room, err := groupRoom(ctx, tx, cs[0], minCount, limits.Get(store.ResServerGroupMembers))
		if err != nil {
			return err
		}
		if room >= 0 && room < n {
			n = room
		}
		if codec.AnyLimit(limits) {
			if err := lockFor(ctx, tx, lockProjectQuota, project); err != nil {
				return err
			}
			u, err := usage(ctx, tx, project)
			if err != nil {
				return err
			}
			if n, err = store.FitServers(u, limits, cs[:n], minCount); err != nil {
				return err
			}
		}
		for _, r := range rows[:n] {
			if err := r.insert(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for i, r := range rows[:n] {
		r.done(servers[i])
	}
	return n, nil
}
