package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// The server reads (the creates: create.go; the API's updates: update.go;
// the listing: list.go; SaveServer is each store's own).

// from is table for a read that the named index serves: pinned with
// INDEXED BY on SQLite, whose planner would pick another; PostgreSQL's
// weighs the LIMIT and needs no hint.
func (st *Store) from(table, index string) string {
	if st.IndexHints {
		return table + " INDEXED BY " + index
	}
	return table
}

// CollectServers reads rows of codec.ServerCols, closing them.
func (st *Store) CollectServers(rows *sql.Rows, capHint int) ([]*lifecycle.Server, error) {
	return st.collectServers(rows, capHint, decodeRow)
}

// decodeRow decodes a row afresh: the server is the caller's to change.
func decodeRow(row *codec.ServerRow) (*lifecycle.Server, error) { return row.Decode(nil) }

// keptRow is the row's kept decode (rowCache): for reading only.
func (st *Store) keptRow(row *codec.ServerRow) (*lifecycle.Server, error) {
	return st.listed.server(row, st.specs.decode)
}

// collectServers is CollectServers with each row decoded by decode.
func (st *Store) collectServers(rows *sql.Rows, capHint int, decode func(*codec.ServerRow) (*lifecycle.Server, error)) ([]*lifecycle.Server, error) {
	defer rows.Close()
	out := make([]*lifecycle.Server, 0, capHint)
	for rows.Next() {
		var row codec.ServerRow
		if err := row.Scan(rows); err != nil {
			return nil, st.errorf("%w", err)
		}
		s, err := decode(&row)
		if err != nil {
			return nil, st.errorf("%w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, st.errorf("%w", err)
	}
	return out, nil
}

// queryServers runs a read of codec.ServerCols.
func (st *Store) queryServers(ctx context.Context, what string, capHint int, q string, args ...any) ([]*lifecycle.Server, error) {
	rows, err := st.B.Query(ctx, q, args...)
	if err != nil {
		return nil, st.errorf("%s: %w", what, err)
	}
	out, err := st.CollectServers(rows, capHint)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// GetServer returns the server, deleted or not. ErrNotFound when unknown.
func (st *Store) GetServer(ctx context.Context, id string) (*lifecycle.Server, error) {
	return st.getServer(ctx, id, decodeRow)
}

// ReadServer implements store.Store: GetServer through ListServers' kept
// decodes.
func (st *Store) ReadServer(ctx context.Context, id string) (*lifecycle.Server, error) {
	return st.getServer(ctx, id, st.keptRow)
}

func (st *Store) getServer(ctx context.Context, id string, decode func(*codec.ServerRow) (*lifecycle.Server, error)) (*lifecycle.Server, error) {
	var row codec.ServerRow
	err := row.Scan(st.B.QueryRow(ctx, "SELECT "+codec.ServerCols+" FROM servers WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("server %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, st.errorf("get server %s: %w", id, err)
	}
	s, err := decode(&row)
	if err != nil {
		return nil, st.errorf("get server %s: %w", id, err)
	}
	return s, nil
}

// ServersNeedingWork returns every server whose needs_work is set (partial
// index servers_needs_work), ordered by id.
func (st *Store) ServersNeedingWork(ctx context.Context) ([]*lifecycle.Server, error) {
	return st.queryServers(ctx, "servers needing work", 64,
		"SELECT "+codec.ServerCols+" FROM servers WHERE needs_work = TRUE ORDER BY id")
}

// NeedsWorkVersions lists (id, version) of the servers of shards needing
// work (store.WorkLister; partial index servers_work_shard, index only, no
// document decoded).
func (st *Store) NeedsWorkVersions(ctx context.Context, shards store.Shards) ([]store.IDVersion, error) {
	q := "SELECT id, version FROM " + st.from("servers", "servers_work_shard") + " WHERE needs_work = TRUE"
	cond, args := ShardCond(shards)
	if cond != "" {
		q += " AND " + cond
	}
	// SQLite caches one statement per count of held shards (at most the
	// shard count).
	rows, err := st.B.Query(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return nil, st.errorf("servers needing work: %w", err)
	}
	out, err := CollectIDVersions(rows)
	if err != nil {
		return nil, st.errorf("servers needing work: %w", err)
	}
	return out, nil
}

// ServersByID loads the servers with these ids, by id (store.WorkLister),
// InChunk per query.
func (st *Store) ServersByID(ctx context.Context, ids []string) ([]*lifecycle.Server, error) {
	var out []*lifecycle.Server
	for len(ids) > 0 {
		n := min(len(ids), InChunk)
		in, args := inList(ids[:n])
		rows, err := st.B.Query(ctx, "SELECT "+codec.ServerCols+" FROM servers WHERE id IN ("+in+")", args...)
		if err != nil {
			return nil, st.errorf("servers by id: %w", err)
		}
		got, err := st.CollectServers(rows, n)
		if err != nil {
			return nil, fmt.Errorf("servers by id: %w", err)
		}
		out = append(out, got...)
		ids = ids[n:]
	}
	slices.SortFunc(out, func(a, b *lifecycle.Server) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// ServersInPhase returns at most limit servers in phase with id > after,
// by ascending id (limit <= 0 means 1000).
func (st *Store) ServersInPhase(ctx context.Context, phase lifecycle.Phase, after string, limit int) ([]*lifecycle.Server, error) {
	if limit <= 0 {
		limit = defaultLimit
	}
	return st.queryServers(ctx, "servers in phase "+string(phase), min(limit, 64),
		"SELECT "+codec.ServerCols+" FROM servers WHERE phase = ? AND id > ? ORDER BY id LIMIT ?", string(phase), after, limit)
}

// CountByPhase counts servers per phase; phases with none are absent.
func (st *Store) CountByPhase(ctx context.Context) (map[lifecycle.Phase]int, error) {
	rows, err := st.B.Query(ctx, "SELECT phase, COUNT(*) FROM servers GROUP BY phase")
	if err != nil {
		return nil, st.errorf("count by phase: %w", err)
	}
	defer rows.Close()
	out := map[lifecycle.Phase]int{}
	for rows.Next() {
		var p string
		var n int
		if err := rows.Scan(&p, &n); err != nil {
			return nil, st.errorf("count by phase: %w", err)
		}
		out[lifecycle.Phase(p)] = n
	}
	return out, rows.Err()
}

// NodeHolders maps node id -> server id for every server holding a node
// (deleted servers still holding one included).
func (st *Store) NodeHolders(ctx context.Context) (map[string]string, error) {
	rows, err := st.B.Query(ctx, "SELECT node_id, id FROM servers WHERE node_id <> ''")
	if err != nil {
		return nil, st.errorf("node holders: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var node, id string
		if err := rows.Scan(&node, &id); err != nil {
			return nil, st.errorf("node holders: %w", err)
		}
		out[node] = id
	}
	return out, rows.Err()
}

// CountServers counts live servers by (desired, phase); the live indexes
// carry both columns, so the count reads no table row.
func (st *Store) CountServers(ctx context.Context, projectID string) ([]store.StatusCount, error) {
	q := "SELECT desired, phase, COUNT(*) FROM " + st.from("servers", "servers_live_created") +
		" WHERE phase <> 'deleted' GROUP BY desired, phase"
	var args []any
	if projectID != "" {
		q = "SELECT desired, phase, COUNT(*) FROM " + st.from("servers", "servers_project_live") +
			" WHERE phase <> 'deleted' AND project_id = ? GROUP BY desired, phase"
		args = append(args, projectID)
	}
	rows, err := st.B.Query(ctx, q, args...)
	if err != nil {
		return nil, st.errorf("count servers: %w", err)
	}
	defer rows.Close()
	var out []store.StatusCount
	for rows.Next() {
		var c store.StatusCount
		var desired, phase string
		if err := rows.Scan(&desired, &phase, &c.N); err != nil {
			return nil, st.errorf("count servers: %w", err)
		}
		c.Desired, c.Phase = lifecycle.Desired(desired), lifecycle.Phase(phase)
		out = append(out, c)
	}
	return out, rows.Err()
}

// RecentFaults lists live servers with a fault or a failed attempt, newest
// update first. It scans the live servers (no index holds faults): a few
// milliseconds per 10,000 servers, asked for by the console's fleet page.
func (st *Store) RecentFaults(ctx context.Context, projectID string, limit int) ([]*lifecycle.Server, error) {
	if limit <= 0 {
		limit = 10
	}
	where := "phase <> 'deleted' AND (fault IS NOT NULL OR attempts NOT IN ('null', '[]'))"
	args := []any{}
	if projectID != "" {
		where += " AND project_id = ?"
		args = append(args, projectID)
	}
	args = append(args, min(limit, maxLimit))
	return st.queryServers(ctx, "recent faults", min(limit, 64),
		"SELECT "+codec.ServerCols+" FROM servers WHERE "+where+" ORDER BY updated_at DESC NULLS LAST, id LIMIT ?", args...)
}
