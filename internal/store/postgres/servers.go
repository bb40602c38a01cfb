package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

const (
	// saveSet is what SaveServer writes: desired is never written;
	// needs_work is picked for the stored desired (codec.NeedsWork).
	saveSet = `phase = $1, node_id = $2, ext = $3,
		deploy_requested = $4, ports_allocated = $5, volumes_on_node = $6, volumes_released = $7,
		excluded = $8, attempts = $9, fault = $10,
		maintenance_since = $11, updated_at = $12, phase_since = $13, deadline = $14, launched_at = $15,
		version = version + 1,
		needs_work = CASE WHEN desired = 'deleted' THEN $16::boolean ELSE $17::boolean END
		WHERE id = $18 AND version = $19`
	qSaveServer = "UPDATE servers SET " + saveSet
	// qSaveServerEvents is qSaveServer and the insert of its events in one
	// statement (one round trip, atomic): the events are inserted only when
	// the update matched, and the statement returns how many rows it updated.
	qSaveServerEvents = `WITH u AS (UPDATE servers SET ` + saveSet + ` RETURNING id),
		e AS (INSERT INTO events (server_id, request_id, action, name, node, result, details, start, finish)
			SELECT CASE WHEN x.sid = '' THEN u.id ELSE x.sid END, x.rid, x.act, x.name, x.node, x.res, x.det,
				NULLIF(x.st, ''), NULLIF(x.fin, '')
			FROM u, unnest($20::text[], $21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::text[],
				$27::text[], $28::text[]) WITH ORDINALITY AS x(sid, rid, act, name, node, res, det, st, fin, n)
			ORDER BY x.n)
		SELECT COUNT(*) FROM u`
)

// SaveServer writes the lifecycle fields of s if s.Version matches the
// stored version, records events in the same statement, and on success
// increments s.Version. ErrConflict on a version mismatch, ErrNotFound for
// an unknown id (or an event of an unknown server), ErrNodeTaken when
// s.NodeID is held by another server; on any error nothing is written and s
// is unchanged.
func (st *Store) SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error {
	var err error
	if _, fenced := store.FenceOf(ctx); fenced || st.Notifying() {
		// The notices need the record before the write, read in its
		// transaction (sqlstore.Noticed).
		err = st.Store.B.Write(ctx, func(tx sqlstore.Tx) error {
			return st.Noticed(ctx, tx, s, func() error { return saveServer(ctx, tx, s, events) })
		})
	} else {
		err = saveServer(ctx, autocommit{st.db}, s, events) // one statement, one round trip
	}
	if err != nil {
		return err
	}
	s.Version++
	return nil
}

// saveServer is SaveServer's statement on q, s.Version left as it is.
func saveServer(ctx context.Context, q sqlstore.Tx, s *lifecycle.Server, events []lifecycle.Event) error {
	if s.ID == "" {
		return errors.New("postgres: save server without id")
	}
	if !s.Phase.Valid() {
		return fmt.Errorf("postgres: save server %s: invalid phase %q", s.ID, s.Phase)
	}
	docs, err := codec.EncodeDocs(s)
	if err != nil {
		return fmt.Errorf("postgres: server %s: %w", s.ID, err)
	}
	ifDeleted, ifActive := codec.NeedsWork(s)
	args := []any{string(s.Phase), s.NodeID, docs.Ext, s.DeployRequested, s.PortsAllocated,
		s.VolumesOnNode, s.VolumesReleased, docs.Excluded, docs.Attempts, docs.Fault,
		codec.Time(s.MaintenanceSince), codec.Time(s.UpdatedAt), codec.Time(s.PhaseSince), codec.Time(s.Deadline),
		codec.Time(s.LaunchedAt), ifDeleted, ifActive, s.ID, s.Version}
	var n int64
	if len(events) == 0 {
		var res sql.Result
		if res, err = q.ExecContext(ctx, qSaveServer, args...); err == nil {
			n, err = res.RowsAffected()
		}
	} else {
		err = q.QueryRowContext(ctx, qSaveServerEvents, append(args, eventColumns(events)...)...).Scan(&n)
	}
	if err != nil {
		switch code, name := constraint(err); {
		case code == unique && name == "servers_node_id":
			return fmt.Errorf("server %s, node %s: %w", s.ID, s.NodeID, store.ErrNodeTaken)
		case code == foreignKey:
			return fmt.Errorf("event of server %s: %w", s.ID, store.ErrNotFound)
		}
		return fmt.Errorf("postgres: save server %s: %w", s.ID, err)
	}
	if n == 0 {
		var one int
		err := q.QueryRowContext(ctx, "SELECT 1 FROM servers WHERE id = $1", s.ID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("server %s: %w", s.ID, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: save server %s: %w", s.ID, err)
		}
		return fmt.Errorf("server %s at version %d: %w", s.ID, s.Version, store.ErrConflict)
	}
	return nil
}

// eventColumns are the nine text arrays qSaveServerEvents unnests ("" for
// a zero time, a server id "" for the saved server's).
func eventColumns(events []lifecycle.Event) []any {
	cols := make([][]string, 9)
	for i := range cols {
		cols[i] = make([]string, len(events))
	}
	for i, e := range events {
		start, _ := codec.Time(e.Start).(string)
		finish, _ := codec.Time(e.Finish).(string)
		for j, v := range []string{e.ServerID, e.RequestID, e.Action, e.Name, e.Node, e.Result, e.Details, start, finish} {
			cols[j][i] = v
		}
	}
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = c
	}
	return out
}
