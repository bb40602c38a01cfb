package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// Actions lists a server's actions, newest first (ties: latest recorded
// first). ErrNotFound when the server is unknown.
func (st *Store) Actions(ctx context.Context, serverID string) ([]store.ActionRecord, error) {
	rows, err := st.B.Query(ctx, `SELECT server_id, request_id, action, start_time, message, project_id, user_id
		FROM actions WHERE server_id = ? ORDER BY start_time DESC, id DESC`, serverID)
	if err != nil {
		return nil, st.errorf("actions of %s: %w", serverID, err)
	}
	defer rows.Close()
	var out []store.ActionRecord
	for rows.Next() {
		var a store.ActionRecord
		var start sql.NullString
		if err := rows.Scan(&a.ServerID, &a.RequestID, &a.Action, &start, &a.Message, &a.ProjectID, &a.UserID); err != nil {
			return nil, st.errorf("actions of %s: %w", serverID, err)
		}
		if a.StartTime, err = codec.ParseTime(start); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, st.errorf("actions of %s: %w", serverID, err)
	}
	if len(out) == 0 {
		// Every server has its create action: none means no such server.
		if err := st.exists(ctx, "SELECT 1 FROM servers WHERE id = ?", serverID); err != nil {
			return nil, fmt.Errorf("server %s: %w", serverID, err)
		}
	}
	return out, nil
}

// Events lists the events of one action, in the order they were recorded.
// ErrNotFound when the server has no such action.
func (st *Store) Events(ctx context.Context, serverID, requestID string) ([]lifecycle.Event, error) {
	out, err := st.events(ctx, "server_id = ? AND request_id = ?", serverID, requestID)
	if err != nil || len(out) > 0 {
		return out, err
	}
	if err := st.exists(ctx, "SELECT 1 FROM actions WHERE server_id = ? AND request_id = ?", serverID, requestID); err != nil {
		return nil, fmt.Errorf("action %s of server %s: %w", requestID, serverID, err)
	}
	return out, nil
}

// AllEvents lists every event of a server in the order they were recorded.
// ErrNotFound when the server is unknown.
func (st *Store) AllEvents(ctx context.Context, serverID string) ([]lifecycle.Event, error) {
	out, err := st.events(ctx, "server_id = ?", serverID)
	if err != nil || len(out) > 0 {
		return out, err
	}
	if err := st.exists(ctx, "SELECT 1 FROM servers WHERE id = ?", serverID); err != nil {
		return nil, fmt.Errorf("server %s: %w", serverID, err)
	}
	return out, nil
}

func (st *Store) events(ctx context.Context, where string, args ...any) ([]lifecycle.Event, error) {
	rows, err := st.B.Query(ctx, `SELECT server_id, request_id, action, name, node, result, details, start, finish
		FROM events WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, st.errorf("events: %w", err)
	}
	defer rows.Close()
	out := []lifecycle.Event{}
	for rows.Next() {
		var e lifecycle.Event
		var start, finish sql.NullString
		if err := rows.Scan(&e.ServerID, &e.RequestID, &e.Action, &e.Name, &e.Node, &e.Result, &e.Details,
			&start, &finish); err != nil {
			return nil, st.errorf("events: %w", err)
		}
		if e.Start, err = codec.ParseTime(start); err != nil {
			return nil, err
		}
		if e.Finish, err = codec.ParseTime(finish); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, st.errorf("events: %w", err)
	}
	return out, nil
}

// exists returns nil when query yields a row, ErrNotFound when it yields none.
func (st *Store) exists(ctx context.Context, query string, args ...any) error {
	var one int
	err := st.B.QueryRow(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return st.errorf("%w", err)
	}
	return nil
}
