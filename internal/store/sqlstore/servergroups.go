package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const groupCols = "id, name, project_id, user_id, policy, rules, created_at"

// LiveMember is the condition on servers (s) of a live group member.
const LiveMember = "s.desired = 'active' AND s.phase <> 'deleted'"

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
	return st.B.Write(ctx, func(tx Tx) error {
		if limit >= 0 {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM server_groups WHERE project_id = ?", g.ProjectID).Scan(&n); err != nil {
				return st.errorf("count server groups of %s: %w", g.ProjectID, err)
			}
			if n+1 > limit {
				return &store.QuotaExceededError{Resource: store.ResServerGroups, Requested: 1, Used: n, Limit: limit}
			}
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO server_groups ("+groupCols+") VALUES (?, ?, ?, ?, ?, ?, ?)",
			g.ID, g.Name, g.ProjectID, g.UserID, g.Policy, string(rules), codec.TimeNN(g.CreatedAt))
		if err != nil {
			if _, ok := st.B.Unique(err); ok {
				return fmt.Errorf("server group %s: %w", g.ID, store.ErrExists)
			}
			return st.errorf("create server group %s: %w", g.ID, err)
		}
		return nil
	})
}

// members maps group id -> live member ids, for the groups of ids ("" = every group).
func (st *Store) members(ctx context.Context, groupID string) (map[string][]string, error) {
	q := `SELECT m.group_id, m.server_id FROM server_group_members m JOIN servers s ON s.id = m.server_id
		WHERE ` + LiveMember
	args := []any{}
	if groupID != "" {
		q += " AND m.group_id = ?"
		args = append(args, groupID)
	}
	rows, err := st.B.Query(ctx, q+" ORDER BY m.group_id, s.created_at, s.id", args...)
	if err != nil {
		return nil, st.errorf("server group members: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var g, s string
		if err := rows.Scan(&g, &s); err != nil {
			return nil, st.errorf("server group members: %w", err)
		}
		out[g] = append(out[g], s)
	}
	return out, rows.Err()
}

// GetServerGroup implements store.ServerGroups.
func (st *Store) GetServerGroup(ctx context.Context, id string) (store.ServerGroup, error) {
	g, err := scanGroup(st.B.QueryRow(ctx, "SELECT "+groupCols+" FROM server_groups WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return g, fmt.Errorf("server group %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return g, st.errorf("get server group %s: %w", id, err)
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
		q += " WHERE project_id = ?"
		args = append(args, projectID)
	}
	rows, err := st.B.Query(ctx, q+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, st.errorf("list server groups: %w", err)
	}
	var out []store.ServerGroup
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			rows.Close()
			return nil, st.errorf("list server groups: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
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
	return st.B.Write(ctx, func(tx Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM server_group_members WHERE group_id = ?", id); err != nil {
			return st.errorf("delete server group %s: %w", id, err)
		}
		return st.deleteOne(ctx, tx, "DELETE FROM server_groups WHERE id = ?", id, "server group")
	})
}

// GroupMembers implements store.ServerGroups.
func (st *Store) GroupMembers(ctx context.Context, id string) ([]store.ServerGroupMember, error) {
	rows, err := st.B.Query(ctx, `SELECT s.id, s.node_id, s.phase, s.created_at FROM server_group_members m
		JOIN servers s ON s.id = m.server_id WHERE m.group_id = ? AND `+LiveMember+" ORDER BY s.created_at, s.id", id)
	if err != nil {
		return nil, st.errorf("members of server group %s: %w", id, err)
	}
	defer rows.Close()
	var out []store.ServerGroupMember
	for rows.Next() {
		var m store.ServerGroupMember
		var node, created sql.NullString
		var phase string
		if err := rows.Scan(&m.ServerID, &node, &phase, &created); err != nil {
			return nil, st.errorf("members of server group %s: %w", id, err)
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
	return st.texts(ctx, "groups of server "+serverID, "SELECT group_id FROM server_group_members WHERE server_id = ?", serverID)
}
