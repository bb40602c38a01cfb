package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const (
	defaultLimit = 1000
	maxLimit     = 1000
)

// Statements of the write transactions (prepared at Open, see writerQueries).
const (
	// qSaveServer: desired is never written; needs_work is picked for the
	// stored desired (see needsWork).
	qServerExists = "SELECT 1 FROM servers WHERE id = ?"
	qSaveServer   = `UPDATE servers SET phase = ?, node_id = ?, ext = ?,
		deploy_requested = ?, ports_allocated = ?, volumes_on_node = ?, volumes_released = ?,
		excluded = ?, attempts = ?, fault = ?,
		maintenance_since = ?, updated_at = ?, phase_since = ?, deadline = ?, launched_at = ?,
		version = version + 1,
		needs_work = CASE WHEN desired = 'deleted' THEN ? ELSE ? END
		WHERE id = ? AND version = ?`
)

// statusCond is a Nova status as an SQL condition on (desired, phase),
// from store.StatusPhases; rows in phase deleted are excluded before these
// apply (unless the listing includes deleted servers: DELETED covers them).
// listFrom pins ListServers to the live (created_at, id, desired, phase)
// index: left to itself SQLite picks servers_phase_id for a status filter
// and then sorts every server of that phase to return one page. With the
// pinned index a page costs an index-only scan up to the Limit-th match.
// PostgreSQL: plain "servers" (its planner weighs the LIMIT).
const listFrom = "servers INDEXED BY servers_live_created"

// listProjectFrom is listFrom for one project's servers.
const listProjectFrom = "servers INDEXED BY servers_project_live"

// nameFilter is a case-sensitive literal substring match (no wildcards).
// PostgreSQL: strpos(name, $n) > 0.
const nameFilter = "instr(name, ?) > 0"

// hasTag is true when the server's Spec carries tag ?. PostgreSQL (spec
// as jsonb): spec->'tags' ? $n.
const hasTag = "EXISTS (SELECT 1 FROM json_each(servers.spec, '$.tags') WHERE json_each.value = ?)"

// ListServers pages through servers by opts.Sort (default (created_at,
// id) ascending). Status is matched case-insensitively as StatusPhases
// says; an unknown status matches nothing (as Nova answers an empty list).
// A Marker may name any existing server, deleted ones included (a server
// deleted between two pages does not break paging); ErrNotFound when it
// names none.
func (st *Store) ListServers(ctx context.Context, opts store.ListOptions) ([]*lifecycle.Server, error) {
	var where []string
	var args []any
	from := listFrom
	if !opts.IncludeDeleted {
		where = append(where, "phase <> 'deleted'")
	}
	if opts.ProjectID != "" {
		where = append(where, "project_id = ?")
		args = append(args, opts.ProjectID)
		from = listProjectFrom
	}
	if opts.Status != "" {
		cond, ok := codec.StatusCond(strings.ToUpper(opts.Status))
		if !ok {
			return []*lifecycle.Server{}, nil
		}
		where = append(where, cond)
	}
	if opts.Name != "" {
		where = append(where, nameFilter)
		args = append(args, opts.Name)
	}
	if !opts.ChangesSince.IsZero() {
		where = append(where, "updated_at >= ?")
		args = append(args, encTimeNN(opts.ChangesSince))
	}
	if !opts.ChangesBefore.IsZero() {
		where = append(where, "updated_at <= ?")
		args = append(args, encTimeNN(opts.ChangesBefore))
	}
	tagConds := func(tags []string, join string) string {
		c := make([]string, len(tags))
		for i, t := range tags {
			c[i] = hasTag
			args = append(args, t)
		}
		return "(" + strings.Join(c, join) + ")"
	}
	if len(opts.Tags) > 0 {
		where = append(where, tagConds(opts.Tags, " AND "))
	}
	if len(opts.TagsAny) > 0 {
		where = append(where, tagConds(opts.TagsAny, " OR "))
	}
	if len(opts.NotTags) > 0 {
		where = append(where, "NOT "+tagConds(opts.NotTags, " AND "))
	}
	if len(opts.NotTagsAny) > 0 {
		where = append(where, "NOT "+tagConds(opts.NotTagsAny, " OR "))
	}
	keys, err := codec.SortKeys(opts.Sort)
	if err != nil {
		return nil, err
	}
	if opts.IncludeDeleted || opts.Sort != nil {
		// The pinned indexes hold live servers in creation order only.
		from = "servers"
	}
	if opts.Marker != "" {
		cond, margs, err := st.afterMarker(ctx, opts.Marker, keys)
		if err != nil {
			return nil, err
		}
		where = append(where, cond)
		args = append(args, margs...)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	args = append(args, limit)
	order := make([]string, len(keys))
	for i, k := range keys {
		order[i] = codec.SortExpr[k.Field] + codec.Dir(k.Desc)
	}
	q := "SELECT " + serverCols + " FROM " + from
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := st.query(ctx, q+" ORDER BY "+strings.Join(order, ", ")+" LIMIT ?", args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list servers: %w", err)
	}
	return st.CollectServers(rows, min(limit, 64))
}

// afterMarker is the condition "after the marker row" in the order keys:
// (k1 > m1) OR (k1 = m1 AND k2 > m2) OR …, with < for descending keys.
func (st *Store) afterMarker(ctx context.Context, marker string, keys []store.SortKey) (string, []any, error) {
	exprs := make([]string, len(keys))
	for i, k := range keys {
		exprs[i] = codec.SortExpr[k.Field]
	}
	vals := make([]any, len(keys))
	ptrs := make([]any, len(keys))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err := st.queryRow(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM servers WHERE id = ?", marker).Scan(ptrs...)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, fmt.Errorf("marker %s: %w", marker, store.ErrNotFound)
	}
	if err != nil {
		return "", nil, fmt.Errorf("sqlite: list servers: marker: %w", err)
	}
	if len(keys) == 2 && keys[0].Field == store.SortCreatedAt && !keys[0].Desc && !keys[1].Desc {
		// The default order: a row-value comparison the index serves.
		return "(created_at, id) > (?, ?)", vals, nil
	}
	var ors []string
	var args []any
	for i, k := range keys {
		var ands []string
		for j := 0; j < i; j++ {
			ands = append(ands, exprs[j]+" = ?")
			args = append(args, vals[j])
		}
		op := " > ?"
		if k.Desc {
			op = " < ?"
		}
		ands = append(ands, exprs[i]+op)
		args = append(args, vals[i])
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")", args, nil
}

// SaveServer writes the lifecycle fields of s if s.Version matches the
// stored version, records events in the same transaction, and on success
// increments s.Version. ErrConflict on a version mismatch, ErrNotFound for
// an unknown id, ErrNodeTaken when s.NodeID is held by another server; on
// any error nothing is written and s is unchanged.
func (st *Store) SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error {
	if err := st.write(ctx, func(tx txn) error { return saveServer(ctx, tx, s, events) }); err != nil {
		return err
	}
	s.Version++
	return nil
}

// saveServer is SaveServer's write inside tx; s.Version is left to the caller.
func saveServer(ctx context.Context, tx txn, s *lifecycle.Server, events []lifecycle.Event) error {
	if s.ID == "" {
		return errors.New("sqlite: save server without id")
	}
	if !s.Phase.Valid() {
		return fmt.Errorf("sqlite: save server %s: invalid phase %q", s.ID, s.Phase)
	}
	docs, err := encodeDocs(s)
	if err != nil {
		return fmt.Errorf("sqlite: server %s: %w", s.ID, err)
	}
	ifDeleted, ifActive := codec.NeedsWork(s)
	res, err := tx.ExecContext(ctx, qSaveServer,
		string(s.Phase), s.NodeID, docs.ext, s.DeployRequested, s.PortsAllocated,
		s.VolumesOnNode, s.VolumesReleased, docs.excluded, docs.attempts, docs.fault,
		encTime(s.MaintenanceSince), encTime(s.UpdatedAt), encTime(s.PhaseSince), encTime(s.Deadline),
		encTime(s.LaunchedAt), ifDeleted, ifActive, s.ID, s.Version)
	if err != nil {
		if constraint(err) == "servers.node_id" {
			return fmt.Errorf("server %s, node %s: %w", s.ID, s.NodeID, store.ErrNodeTaken)
		}
		return fmt.Errorf("sqlite: save server %s: %w", s.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: save server %s: %w", s.ID, err)
	}
	if n == 0 {
		var one int
		err := tx.QueryRowContext(ctx, qServerExists, s.ID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("server %s: %w", s.ID, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sqlite: save server %s: %w", s.ID, err)
		}
		return fmt.Errorf("server %s at version %d: %w", s.ID, s.Version, store.ErrConflict)
	}
	return insertEvents(ctx, tx, s.ID, events)
}
