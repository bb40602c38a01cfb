package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// The API's and the console's listings.

// ListServers pages through servers by opts.Sort (default (created_at,
// id) ascending), with the SQLite store's semantics (store.ListOptions).
func (st *Store) ListServers(ctx context.Context, opts store.ListOptions) ([]*lifecycle.Server, error) {
	var where []string
	var a argList
	if !opts.IncludeDeleted {
		where = append(where, "phase <> 'deleted'")
	}
	if opts.ProjectID != "" {
		where = append(where, "project_id = "+a.add(opts.ProjectID))
	}
	if opts.Status != "" {
		cond, ok := codec.StatusCond(strings.ToUpper(opts.Status))
		if !ok {
			return []*lifecycle.Server{}, nil
		}
		where = append(where, cond)
	}
	if opts.Name != "" {
		where = append(where, "strpos(name, "+a.add(opts.Name)+") > 0")
	}
	if !opts.ChangesSince.IsZero() {
		where = append(where, "updated_at >= "+a.add(codec.TimeNN(opts.ChangesSince)))
	}
	if !opts.ChangesBefore.IsZero() {
		where = append(where, "updated_at <= "+a.add(codec.TimeNN(opts.ChangesBefore)))
	}
	// The tags column is a JSONB array: ?& holds every one, ?| any one.
	if len(opts.Tags) > 0 {
		where = append(where, "tags ?& "+a.add(opts.Tags)+"::text[]")
	}
	if len(opts.TagsAny) > 0 {
		where = append(where, "tags ?| "+a.add(opts.TagsAny)+"::text[]")
	}
	if len(opts.NotTags) > 0 {
		where = append(where, "NOT (tags ?& "+a.add(opts.NotTags)+"::text[])")
	}
	if len(opts.NotTagsAny) > 0 {
		where = append(where, "NOT (tags ?| "+a.add(opts.NotTagsAny)+"::text[])")
	}
	keys, err := codec.SortKeys(opts.Sort)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if opts.Marker != "" {
		cond, err := st.afterMarker(ctx, opts.Marker, keys, &a)
		if err != nil {
			return nil, err
		}
		where = append(where, cond)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	order := make([]string, len(keys))
	for i, k := range keys {
		order[i] = codec.SortExpr[k.Field] + codec.Dir(k.Desc)
	}
	q := "SELECT " + codec.ServerCols + " FROM servers"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + strings.Join(order, ", ") + " LIMIT " + a.add(limit)
	return st.queryServers(ctx, "list servers", min(limit, 64), q, a...)
}

// afterMarker is the condition "after the marker row" in the order keys:
// (k1 > m1) OR (k1 = m1 AND k2 > m2) OR …, with < for descending keys.
func (st *Store) afterMarker(ctx context.Context, marker string, keys []store.SortKey, a *argList) (string, error) {
	exprs := make([]string, len(keys))
	for i, k := range keys {
		exprs[i] = codec.SortExpr[k.Field]
	}
	// Every sort expression is text (COLLATE "C"), so the marker's values
	// bind back as text and compare as they sort.
	vals := make([]string, len(keys))
	ptrs := make([]any, len(keys))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err := st.pool.QueryRow(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM servers WHERE id = $1", marker).Scan(ptrs...)
	if nf := notFound(err, "marker "+marker); nf != nil {
		return "", nf
	}
	if err != nil {
		return "", fmt.Errorf("postgres: list servers: marker: %w", err)
	}
	if len(keys) == 2 && keys[0].Field == store.SortCreatedAt && !keys[0].Desc && !keys[1].Desc {
		// The default order: a row-value comparison the index serves.
		return "(created_at, id) > (" + a.add(vals[0]) + ", " + a.add(vals[1]) + ")", nil
	}
	var ors []string
	for i, k := range keys {
		var ands []string
		for j := 0; j < i; j++ {
			ands = append(ands, exprs[j]+" = "+a.add(vals[j]))
		}
		op := " > "
		if k.Desc {
			op = " < "
		}
		ands = append(ands, exprs[i]+op+a.add(vals[i]))
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")", nil
}
