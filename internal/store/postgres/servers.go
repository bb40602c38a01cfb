package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const (
	// qInsertServer does nothing on a duplicate id (ErrExists then), so a
	// node index violation always means the node is taken.
	qInsertServer = `INSERT INTO servers (` + codec.ServerCols + `, needs_work, vcpus, ram_mb, resource_class, tags,
		shard_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		$23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33)
		ON CONFLICT (id) DO NOTHING`
	// qUpdateRequests writes what UpdateServer owns.
	qUpdateRequests = `UPDATE servers SET name = $1, spec = $2, tags = $3, requests = $4, updated_at = $5,
		version = version + 1, needs_work = $6 WHERE id = $7 AND version = $8`
	qDeleteTarget = `SELECT desired, phase, node_id, ports_allocated, project_id, user_id
		FROM servers WHERE id = $1 FOR UPDATE`
	qRequestDelete = `UPDATE servers SET desired = $1, delete_requested_at = $2, delete_request_id = $3,
		updated_at = $4, version = version + 1, needs_work = $5 WHERE id = $6`
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

// tagsOf is the tags column of a spec: a JSON array, never null.
func tagsOf(sp lifecycle.Spec) (string, error) {
	tags := sp.Tags
	if tags == nil {
		tags = []string{}
	}
	b, err := json.Marshal(tags)
	return string(b), err
}

// CreateServer inserts s with Version 1 and its create action (request
// CreateRequestID, at CreatedAt) in one transaction. An empty Desired is
// taken as active, an empty Phase as pending and a zero CreatedAt as now;
// those defaults and Version are set on s when the insert commits.
// ErrExists on a duplicate id; ErrNodeTaken if s.NodeID is held. The
// volumes of s.Spec.Volumes are reserved in the same transaction (see
// reserveVolumes).
func (st *Store) CreateServer(ctx context.Context, s *lifecycle.Server) error {
	return st.createServer(ctx, s, nil)
}

// createServer is CreateServer; with check set, the project's quota is
// checked first in the same transaction (quotas.go).
func (st *Store) createServer(ctx context.Context, s *lifecycle.Server, check func(tx pgx.Tx, c *lifecycle.Server) error) error {
	row, err := newServerRow(s)
	if err != nil {
		return err
	}
	err = st.write(ctx, func(tx pgx.Tx) error {
		if check != nil {
			if err := check(tx, &row.c); err != nil {
				return err
			}
		}
		return row.insert(ctx, tx)
	})
	if err != nil {
		return err
	}
	row.done(s)
	return nil
}

// serverRow is a new server with its columns encoded, ready to insert.
type serverRow struct {
	c                lifecycle.Server
	spec, tags, reqs string
	docs             codec.Docs
}

func newServerRow(s *lifecycle.Server) (*serverRow, error) {
	r := &serverRow{c: *s}
	c := &r.c
	if c.Desired == "" {
		c.Desired = lifecycle.DesiredActive
	}
	if c.Phase == "" {
		c.Phase = lifecycle.PhasePending
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now()
	}
	c.Version = 1
	if err := codec.Validate(c); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	spec, err := json.Marshal(c.Spec)
	if err != nil {
		return nil, fmt.Errorf("postgres: server %s: spec: %w", c.ID, err)
	}
	r.spec = string(spec)
	if r.tags, err = tagsOf(c.Spec); err != nil {
		return nil, fmt.Errorf("postgres: server %s: tags: %w", c.ID, err)
	}
	if r.docs, err = codec.EncodeDocs(c); err != nil {
		return nil, fmt.Errorf("postgres: server %s: %w", c.ID, err)
	}
	if r.reqs, err = codec.Requests(c); err != nil {
		return nil, fmt.Errorf("postgres: server %s: %w", c.ID, err)
	}
	return r, nil
}

// insert writes the server, reserves its volumes and records its create
// action, in tx.
func (r *serverRow) insert(ctx context.Context, tx pgx.Tx) error {
	c, docs := &r.c, r.docs
	tag, err := tx.Exec(ctx, qInsertServer,
		c.ID, c.Name, c.ProjectID, c.UserID, r.spec, string(c.Desired), string(c.Phase), c.NodeID,
		docs.Ext, c.DeployRequested, c.PortsAllocated, docs.Excluded, docs.Attempts, docs.Fault,
		codec.Time(c.MaintenanceSince), codec.TimeNN(c.CreatedAt), codec.Time(c.UpdatedAt), codec.Time(c.PhaseSince),
		codec.Time(c.Deadline), codec.Time(c.DeleteRequestedAt), codec.Time(c.LaunchedAt),
		c.CreateRequestID, c.DeleteRequestID, c.Version, c.VolumesOnNode, c.VolumesReleased, r.reqs, c.NeedsWork(),
		c.Spec.VCPUs, c.Spec.RAMMB, c.Spec.ResourceClass, r.tags, int64(store.ShardHash(c.ID)))
	if err != nil {
		if code, name := constraint(err); code == unique && name == "servers_node_id" {
			return fmt.Errorf("server %s, node %s: %w", c.ID, c.NodeID, store.ErrNodeTaken)
		}
		return fmt.Errorf("postgres: insert server %s: %w", c.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("server %s: %w", c.ID, store.ErrExists)
	}
	if err := reserveVolumes(ctx, tx, c); err != nil {
		return err
	}
	if err := joinGroup(ctx, tx, c); err != nil {
		return err
	}
	return insertAction(ctx, tx, store.ActionRecord{
		ServerID: c.ID, RequestID: c.CreateRequestID, Action: lifecycle.ActionCreate,
		StartTime: c.CreatedAt, ProjectID: c.ProjectID, UserID: c.UserID,
	})
}

// done copies back to the caller's server what the insert decided.
func (r *serverRow) done(s *lifecycle.Server) {
	s.Desired, s.Phase, s.CreatedAt, s.Version = r.c.Desired, r.c.Phase, r.c.CreatedAt, r.c.Version
}

// RequestDelete records the user's delete and bumps version, so a worker
// holding the previous version fails its SaveServer with ErrConflict: the
// delete wins (I2). Idempotent; ErrNotFound for unknown or deleted servers.
func (st *Store) RequestDelete(ctx context.Context, id, requestID string, at time.Time) error {
	if at.IsZero() {
		at = time.Now()
	}
	return st.write(ctx, func(tx pgx.Tx) error {
		var s lifecycle.Server
		var desired, phase string
		err := tx.QueryRow(ctx, qDeleteTarget, id).Scan(&desired, &phase, &s.NodeID, &s.PortsAllocated, &s.ProjectID, &s.UserID)
		if nf := notFound(err, "server "+id); nf != nil {
			return nf
		}
		if err != nil {
			return fmt.Errorf("postgres: request delete %s: %w", id, err)
		}
		s.Desired, s.Phase = lifecycle.Desired(desired), lifecycle.Phase(phase)
		if s.Phase == lifecycle.PhaseDeleted {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if s.Desired == lifecycle.DesiredDeleted {
			return nil // already requested: nothing changes
		}
		s.Desired = lifecycle.DesiredDeleted
		if _, err := tx.Exec(ctx, qRequestDelete,
			string(lifecycle.DesiredDeleted), codec.Time(at), requestID, codec.Time(at), s.NeedsWork(), id); err != nil {
			return fmt.Errorf("postgres: request delete %s: %w", id, err)
		}
		return insertAction(ctx, tx, store.ActionRecord{
			ServerID: id, RequestID: requestID, Action: lifecycle.ActionDelete,
			StartTime: at, ProjectID: s.ProjectID, UserID: s.UserID,
		})
	})
}

// SaveServer writes the lifecycle fields of s if s.Version matches the
// stored version, records events in the same statement, and on success
// increments s.Version. ErrConflict on a version mismatch, ErrNotFound for
// an unknown id (or an event of an unknown server), ErrNodeTaken when
// s.NodeID is held by another server; on any error nothing is written and s
// is unchanged.
func (st *Store) SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error {
	err := st.fenced(ctx, func(q executor) error { return saveServer(ctx, q, s, events) })
	if err != nil {
		return err
	}
	s.Version++
	return nil
}

// saveServer is SaveServer's statement on q, s.Version left as it is.
func saveServer(ctx context.Context, q executor, s *lifecycle.Server, events []lifecycle.Event) error {
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
		var tag pgconn.CommandTag
		tag, err = q.Exec(ctx, qSaveServer, args...)
		n = tag.RowsAffected()
	} else {
		err = q.QueryRow(ctx, qSaveServerEvents, append(args, eventColumns(events)...)...).Scan(&n)
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
		err := q.QueryRow(ctx, "SELECT 1 FROM servers WHERE id = $1", s.ID).Scan(&one)
		if nf := notFound(err, "server "+s.ID); nf != nil {
			return nf
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

// UpdateServer applies mutate to the stored server (read FOR UPDATE)
// inside one transaction and writes back what the API owns besides the
// create and the delete — Name, Spec, Op and OpGen, Lock — with needs_work,
// bumping Version. An error from mutate aborts with nothing written and is
// returned as is. When act is not nil its action record is inserted in the
// same transaction. ErrNotFound for unknown and deleted servers.
func (st *Store) UpdateServer(ctx context.Context, id string, act *store.ActionRecord, mutate func(*lifecycle.Server) error) (*lifecycle.Server, error) {
	var out *lifecycle.Server
	err := st.write(ctx, func(tx pgx.Tx) error {
		s, err := codec.ScanServer(tx.QueryRow(ctx, "SELECT "+codec.ServerCols+" FROM servers WHERE id = $1 FOR UPDATE", id))
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && s.Phase == lifecycle.PhaseDeleted) {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: update server %s: %w", id, err)
		}
		if err := mutate(s); err != nil {
			return err
		}
		spec, err := json.Marshal(s.Spec)
		if err != nil {
			return fmt.Errorf("postgres: server %s: spec: %w", id, err)
		}
		tags, err := tagsOf(s.Spec)
		if err != nil {
			return fmt.Errorf("postgres: server %s: tags: %w", id, err)
		}
		reqs, err := codec.Requests(s)
		if err != nil {
			return fmt.Errorf("postgres: server %s: %w", id, err)
		}
		if s.UpdatedAt.IsZero() {
			s.UpdatedAt = time.Now()
		}
		if _, err := tx.Exec(ctx, qUpdateRequests, s.Name, string(spec), tags, reqs, codec.Time(s.UpdatedAt),
			s.NeedsWork(), id, s.Version); err != nil {
			return fmt.Errorf("postgres: update server %s: %w", id, err)
		}
		s.Version++
		if act != nil {
			a := *act
			a.ServerID, a.ProjectID, a.UserID = id, s.ProjectID, s.UserID
			if act.ProjectID != "" {
				a.ProjectID = act.ProjectID
			}
			if act.UserID != "" {
				a.UserID = act.UserID
			}
			if err := insertAction(ctx, tx, a); err != nil {
				return err
			}
		}
		out = s
		return nil
	})
	return out, err
}

// collectServers reads rows of codec.ServerCols.
func collectServers(rows pgx.Rows, capHint int) ([]*lifecycle.Server, error) {
	defer rows.Close()
	out := make([]*lifecycle.Server, 0, capHint)
	for rows.Next() {
		s, err := codec.ScanServer(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return out, nil
}

// queryServers runs a query of codec.ServerCols.
func (st *Store) queryServers(ctx context.Context, what string, capHint int, q string, args ...any) ([]*lifecycle.Server, error) {
	rows, err := st.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	out, err := collectServers(rows, capHint)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
