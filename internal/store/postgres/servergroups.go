package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ingot-dev/ingot/internal/store/codec"
	"github.com/jackc/pgx/v5"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

const groupCols = "id, name, project_id, user_id, policy, rules, created_at"

// liveMember is the condition on servers (s) of a live group member.
const liveMember = "s.desired = 'active' AND s.phase <> 'deleted'"

type groupRules struct {
	MaxServerPerHost int `json:"max_server_per_host,omitempty"`
}

func scanGroup(sc codec.Scanner) (store.ServerGroup, error) {
	var g store.ServerGroup
	var rules string
	var created sql.NullString
	if err := sc.Scan(&g.ID, &g.Name, &g.ProjectID, &g.UserID, &g.Policy, &rules, &created); err != nil {
		return g, err
	}
	var r groupRules
	if err := json.Unmarshal([]byte(rules), &r); err != nil {
		return g, fmt.Errorf("server group %s: rules: %w", g.ID, err)
	}
	g.MaxServerPerHost = r.MaxServerPerHost
	var err error
	g.CreatedAt, err = codec.ParseTime(created)
	return g, err
}

// CreateServerGroup implements store.ServerGroups.
func (st *Store) CreateServerGroup(ctx context.Context, g store.ServerGroup, limit int) error {
	if g.CreatedAt.IsZero() {
		g.CreatedAt = time.Now()
	}
	rules, err := json.Marshal(groupRules{MaxServerPerHost: g.MaxServerPerHost})
	if err != nil {
		return err
	}
	return st.write(ctx, func(tx pgx.Tx) error {
		if limit >= 0 {
			var n int
			if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM server_groups WHERE project_id = $1", g.ProjectID).Scan(&n); err != nil {
				return fmt.Errorf("postgres: count server groups of %s: %w", g.ProjectID, err)
			}
			if n+1 > limit {
				return &store.QuotaExceededError{Resource: store.ResServerGroups, Requested: 1, Used: n, Limit: limit}
			}
		}
		_, err := tx.Exec(ctx, "INSERT INTO server_groups ("+groupCols+") VALUES ($1, $2, $3, $4, $5, $6, $7)",
			g.ID, g.Name, g.ProjectID, g.UserID, g.Policy, string(rules), codec.TimeNN(g.CreatedAt))
		if err != nil {
			if code, _ := constraint(err); code == unique {
				return fmt.Errorf("server group %s: %w", g.ID, store.ErrExists)
			}
			return fmt.Errorf("postgres: create server group %s: %w", g.ID, err)
		}
		return nil
	})
}

// members maps group id -> live member ids, for the groups of ids ("" = every group).
func (st *Store) members(ctx context.Context, groupID string) (map[string][]string, error) {
	q := `SELECT m.group_id, m.server_id FROM server_group_members m JOIN servers s ON s.id = m.server_id
		WHERE ` + liveMember
	args := []any{}
	if groupID != "" {
		q += " AND m.group_id = $1"
		args = append(args, groupID)
	}
	rows, err := st.pool.Query(ctx, q+" ORDER BY m.group_id, s.created_at, s.id", args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: server group members: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var g, s string
		if err := rows.Scan(&g, &s); err != nil {
			return nil, fmt.Errorf("postgres: server group members: %w", err)
		}
		out[g] = append(out[g], s)
	}
	return out, rows.Err()
}

// GetServerGroup implements store.ServerGroups.
func (st *Store) GetServerGroup(ctx context.Context, id string) (store.ServerGroup, error) {
	g, err := scanGroup(st.pool.QueryRow(ctx, "SELECT "+groupCols+" FROM server_groups WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return g, fmt.Errorf("server group %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return g, fmt.Errorf("postgres: get server group %s: %w", id, err)
	}
	m, err := st.members(ctx, id)
	if err != nil {
		return g, err
	}
	g.Members = orEmpty(m[id])
	return g, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ListServerGroups implements store.ServerGroups.
func (st *Store) ListServerGroups(ctx context.Context, projectID string) ([]store.ServerGroup, error) {
	q, args := "SELECT "+groupCols+" FROM server_groups", []any{}
	if projectID != "" {
		q += " WHERE project_id = $1"
		args = append(args, projectID)
	}
	rows, err := st.pool.Query(ctx, q+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list server groups: %w", err)
	}
	var out []store.ServerGroup
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: list server groups: %w", err)
		}
		out = append(out, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	m, err := st.members(ctx, "")
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Members = orEmpty(m[out[i].ID])
	}
	return out, nil
}

// DeleteServerGroup implements store.ServerGroups.
func (st *Store) DeleteServerGroup(ctx context.Context, id string) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM server_group_members WHERE group_id = $1", id); err != nil {
			return fmt.Errorf("postgres: delete server group %s: %w", id, err)
		}
		return deleteOne(ctx, tx, "DELETE FROM server_groups WHERE id = $1", id, "server group")
	})
}

// GroupMembers implements store.ServerGroups.
func (st *Store) GroupMembers(ctx context.Context, id string) ([]store.ServerGroupMember, error) {
	rows, err := st.pool.Query(ctx, `SELECT s.id, s.node_id, s.phase, s.created_at FROM server_group_members m
		JOIN servers s ON s.id = m.server_id WHERE m.group_id = $1 AND `+liveMember+" ORDER BY s.created_at, s.id", id)
	if err != nil {
		return nil, fmt.Errorf("postgres: members of server group %s: %w", id, err)
	}
	defer rows.Close()
	var out []store.ServerGroupMember
	for rows.Next() {
		var m store.ServerGroupMember
		var node, created sql.NullString
		var phase string
		if err := rows.Scan(&m.ServerID, &node, &phase, &created); err != nil {
			return nil, fmt.Errorf("postgres: members of server group %s: %w", id, err)
		}
		m.NodeID, m.Phase = node.String, lifecycle.Phase(phase)
		if m.CreatedAt, err = codec.ParseTime(created); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ServerGroupsOf implements store.ServerGroups.
func (st *Store) ServerGroupsOf(ctx context.Context, serverID string) ([]string, error) {
	rows, err := st.pool.Query(ctx, "SELECT group_id FROM server_group_members WHERE server_id = $1", serverID)
	if err != nil {
		return nil, fmt.Errorf("postgres: groups of server %s: %w", serverID, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, fmt.Errorf("postgres: groups of server %s: %w", serverID, err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// joinGroup records c's membership of its group in its create transaction.
func joinGroup(ctx context.Context, tx pgx.Tx, c *lifecycle.Server) error {
	if c.Spec.Group == nil {
		return nil
	}
	var one int
	err := tx.QueryRow(ctx, "SELECT 1 FROM server_groups WHERE id = $1", c.Spec.Group.ID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("server group %s: %w", c.Spec.Group.ID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: server group %s: %w", c.Spec.Group.ID, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO server_group_members (server_id, group_id) VALUES ($1, $2)",
		c.ID, c.Spec.Group.ID); err != nil {
		return fmt.Errorf("postgres: join server group %s: %w", c.Spec.Group.ID, err)
	}
	return nil
}

// checkGroupMembers refuses a create that would pass the group's member limit.
func checkGroupMembers(ctx context.Context, tx pgx.Tx, c *lifecycle.Server, limit int) error {
	_, err := groupRoom(ctx, tx, c, 1, limit)
	return err
}

// groupRoom is how many more members c's group takes (-1: no limit); a
// *store.QuotaExceededError when fewer than want.
func groupRoom(ctx context.Context, tx pgx.Tx, c *lifecycle.Server, want, limit int) (int, error) {
	if c.Spec.Group == nil || limit < 0 {
		return -1, nil
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM server_group_members m JOIN servers s ON s.id = m.server_id
		WHERE m.group_id = $1 AND `+liveMember, c.Spec.Group.ID).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count members of server group %s: %w", c.Spec.Group.ID, err)
	}
	if n+want > limit {
		return 0, &store.QuotaExceededError{Resource: store.ResServerGroupMembers, Requested: want, Used: n, Limit: limit}
	}
	return limit - n, nil
}
