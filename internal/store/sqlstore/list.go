package sqlstore

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

// The API's listing of servers.

// tagFilter holds when the server carries every one (all) or any one of
// tags: on PostgreSQL the tags column (JSONB, GIN index) with ?& and ?|;
// on SQLite one json_each probe of the spec per tag.
func (st *Store) tagFilter(tags []string, all bool) (string, []any) {
	if st.TagsColumn {
		if all {
			return "tags ?& ?::text[]", []any{tags}
		}
		return "tags ?| ?::text[]", []any{tags}
	}
	const hasTag = "EXISTS (SELECT 1 FROM json_each(servers.spec, '$.tags') WHERE json_each.value = ?)"
	join := " OR "
	if all {
		join = " AND "
	}
	c := make([]string, len(tags))
	args := make([]any, len(tags))
	for i, t := range tags {
		c[i], args[i] = hasTag, t
	}
	return "(" + strings.Join(c, join) + ")", args
}

// ListServers pages through servers by opts.Sort (default (created_at,
// id) ascending). Status is matched case-insensitively as StatusPhases
// says; an unknown status matches nothing (as Nova answers an empty list).
// A Marker may name any existing server, deleted ones included (a server
// deleted between two pages does not break paging); ErrNotFound when it
// names none.
//
// SQLite is pinned to the live (created_at, id, desired, phase) index:
// left to itself it picks servers_phase_id for a status filter and then
// sorts every server of that phase to return one page; with the pinned
// index a page costs an index-only scan up to the Limit-th match.
func (st *Store) ListServers(ctx context.Context, opts store.ListOptions) ([]*lifecycle.Server, error) {
	var where []string
	var args []any
	from := st.from("servers", "servers_live_created")
	if !opts.IncludeDeleted {
		where = append(where, "phase <> 'deleted'")
	}
	if opts.ProjectID != "" {
		where = append(where, "project_id = ?")
		args = append(args, opts.ProjectID)
		from = st.from("servers", "servers_project_live")
	}
	if opts.Status != "" {
		cond, ok := codec.StatusCond(strings.ToUpper(opts.Status))
		if !ok {
			return []*lifecycle.Server{}, nil
		}
		where = append(where, cond)
	}
	if opts.Name != "" {
		where = append(where, st.NameFilter)
		args = append(args, opts.Name)
	}
	if !opts.ChangesSince.IsZero() {
		where = append(where, "updated_at >= ?")
		args = append(args, codec.TimeNN(opts.ChangesSince))
	}
	if !opts.ChangesBefore.IsZero() {
		where = append(where, "updated_at <= ?")
		args = append(args, codec.TimeNN(opts.ChangesBefore))
	}
	for _, f := range []struct {
		tags     []string
		all, not bool
	}{{opts.Tags, true, false}, {opts.TagsAny, false, false}, {opts.NotTags, true, true}, {opts.NotTagsAny, false, true}} {
		if len(f.tags) == 0 {
			continue
		}
		cond, targs := st.tagFilter(f.tags, f.all)
		if f.not {
			cond = "NOT (" + cond + ")"
		}
		where, args = append(where, cond), append(args, targs...)
	}
	keys, err := codec.SortKeys(opts.Sort)
	if err != nil {
		return nil, st.errorf("%w", err)
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
	q := "SELECT " + codec.ServerCols + " FROM " + from
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := st.B.Query(ctx, q+" ORDER BY "+strings.Join(order, ", ")+" LIMIT ?", args...)
	if err != nil {
		return nil, st.errorf("list servers: %w", err)
	}
	out, err := st.collectServers(rows, min(limit, 64), st.keptRow)
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	return out, nil
}

// afterMarker is the condition "after the marker row" in the order keys:
// (k1 > m1) OR (k1 = m1 AND k2 > m2) OR …, with < for descending keys.
// Every sort expression is text (COLLATE "C" on PostgreSQL), so the
// marker's values bind back as text and compare as they sort.
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
	err := st.B.QueryRow(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM servers WHERE id = ?", marker).Scan(ptrs...)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, fmt.Errorf("marker %s: %w", marker, store.ErrNotFound)
	}
	if err != nil {
		return "", nil, st.errorf("list servers: marker: %w", err)
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
