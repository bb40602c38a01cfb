package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

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
	qInsertServer = `INSERT INTO servers (` + serverCols + `, needs_work, vcpus, ram_mb, resource_class, shard_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// qUpdateRequests writes what UpdateServer owns.
	qUpdateRequests = `UPDATE servers SET name = ?, spec = ?, requests = ?, updated_at = ?,
		version = version + 1, needs_work = ? WHERE id = ? AND version = ?`
	qServerExists = "SELECT 1 FROM servers WHERE id = ?"
	qDeleteTarget = `SELECT desired, phase, node_id, ports_allocated, project_id, user_id
		FROM servers WHERE id = ?`
	qRequestDelete = `UPDATE servers SET desired = ?, delete_requested_at = ?, delete_request_id = ?,
		updated_at = ?, version = version + 1, needs_work = ? WHERE id = ?`
	// qSaveServer: desired is never written; needs_work is picked for the
	// stored desired (see needsWork).
	qSaveServer = `UPDATE servers SET phase = ?, node_id = ?, ext = ?,
		deploy_requested = ?, ports_allocated = ?, volumes_on_node = ?, volumes_released = ?,
		excluded = ?, attempts = ?, fault = ?,
		maintenance_since = ?, updated_at = ?, phase_since = ?, deadline = ?, launched_at = ?,
		version = version + 1,
		needs_work = CASE WHEN desired = 'deleted' THEN ? ELSE ? END
		WHERE id = ? AND version = ?`
)

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
func (st *Store) createServer(ctx context.Context, s *lifecycle.Server, check func(tx txn, c *lifecycle.Server) error) error {
	var all func(tx txn, cs []*lifecycle.Server) (int, error)
	if check != nil {
		all = func(tx txn, cs []*lifecycle.Server) (int, error) { return 1, check(tx, cs[0]) }
	}
	_, err := st.createServers(ctx, []*lifecycle.Server{s}, all)
	return err
}

// insertRow is one server prepared for its insert.
type insertRow struct {
	c          lifecycle.Server
	spec, reqs string
	docs       lifecycleDocs
}

func prepareInsert(s *lifecycle.Server) (*insertRow, error) {
	c := *s
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
	if err := codec.Validate(&c); err != nil {
		return nil, err
	}
	spec, err := json.Marshal(c.Spec)
	if err != nil {
		return nil, fmt.Errorf("sqlite: server %s: spec: %w", c.ID, err)
	}
	docs, err := encodeDocs(&c)
	if err != nil {
		return nil, fmt.Errorf("sqlite: server %s: %w", c.ID, err)
	}
	reqs, err := requestsOf(&c)
	if err != nil {
		return nil, fmt.Errorf("sqlite: server %s: %w", c.ID, err)
	}
	return &insertRow{c: c, spec: string(spec), reqs: reqs, docs: docs}, nil
}

// createServers inserts servers in one transaction. check, when set, runs
// first in it and says how many of them (the first n) to insert; by default
// all. It returns the number inserted; on any error nothing is written.
func (st *Store) createServers(ctx context.Context, servers []*lifecycle.Server, check func(tx txn, cs []*lifecycle.Server) (int, error)) (int, error) {
	rows := make([]*insertRow, len(servers))
	cs := make([]*lifecycle.Server, len(servers))
	for i, s := range servers {
		row, err := prepareInsert(s)
		if err != nil {
			return 0, err
		}
		rows[i], cs[i] = row, &row.c
	}
	n := len(rows)
	err := st.write(ctx, func(tx txn) error {
		if check != nil {
			k, err := check(tx, cs)
			if err != nil {
				return err
			}
			n = k
		}
		for _, row := range rows[:n] {
			if err := insertServer(ctx, tx, row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for i, row := range rows[:n] {
		c := &row.c
		servers[i].Desired, servers[i].Phase, servers[i].CreatedAt, servers[i].Version = c.Desired, c.Phase, c.CreatedAt, c.Version
	}
	return n, nil
}

// insertServer writes one prepared server, its volume reservations and its
// create action.
func insertServer(ctx context.Context, tx txn, row *insertRow) error {
	c, docs := &row.c, row.docs
	_, err := tx.ExecContext(ctx, qInsertServer,
		c.ID, c.Name, c.ProjectID, c.UserID, row.spec, string(c.Desired), string(c.Phase), c.NodeID,
		docs.ext, c.DeployRequested, c.PortsAllocated, docs.excluded, docs.attempts, docs.fault,
		encTime(c.MaintenanceSince), encTimeNN(c.CreatedAt), encTime(c.UpdatedAt), encTime(c.PhaseSince),
		encTime(c.Deadline), encTime(c.DeleteRequestedAt), encTime(c.LaunchedAt),
		c.CreateRequestID, c.DeleteRequestID, c.Version, c.VolumesOnNode, c.VolumesReleased, row.reqs, c.NeedsWork(),
		c.Spec.VCPUs, c.Spec.RAMMB, c.Spec.ResourceClass, int64(store.ShardHash(c.ID)))
	if err != nil {
		switch constraint(err) {
		case "servers.id":
			return fmt.Errorf("server %s: %w", c.ID, store.ErrExists)
		case "servers.node_id":
			// SQLite may check the node index before the primary key.
			var one int
			if tx.QueryRowContext(ctx, qServerExists, c.ID).Scan(&one) == nil {
				return fmt.Errorf("server %s: %w", c.ID, store.ErrExists)
			}
			return fmt.Errorf("server %s, node %s: %w", c.ID, c.NodeID, store.ErrNodeTaken)
		}
		return fmt.Errorf("sqlite: insert server %s: %w", c.ID, err)
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

// RequestDelete records the user's delete and bumps version, so a worker
// holding the previous version fails its SaveServer with ErrConflict: the
// delete wins (I2). Idempotent; ErrNotFound for unknown or deleted servers.
func (st *Store) RequestDelete(ctx context.Context, id, requestID string, at time.Time) error {
	if at.IsZero() {
		at = time.Now()
	}
	return st.write(ctx, func(tx txn) error {
		var s lifecycle.Server
		var desired, phase string
		err := tx.QueryRowContext(ctx, qDeleteTarget, id).Scan(&desired, &phase, &s.NodeID, &s.PortsAllocated, &s.ProjectID, &s.UserID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sqlite: request delete %s: %w", id, err)
		}
		s.Desired, s.Phase = lifecycle.Desired(desired), lifecycle.Phase(phase)
		if s.Phase == lifecycle.PhaseDeleted {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if s.Desired == lifecycle.DesiredDeleted {
			return nil // already requested: nothing changes
		}
		s.Desired = lifecycle.DesiredDeleted
		if _, err := tx.ExecContext(ctx, qRequestDelete,
			string(lifecycle.DesiredDeleted), encTime(at), requestID, encTime(at), s.NeedsWork(), id); err != nil {
			return fmt.Errorf("sqlite: request delete %s: %w", id, err)
		}
		return insertAction(ctx, tx, store.ActionRecord{
			ServerID: id, RequestID: requestID, Action: lifecycle.ActionDelete,
			StartTime: at, ProjectID: s.ProjectID, UserID: s.UserID,
		})
	})
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

// UpdateServer applies mutate to the stored server inside one transaction
// and writes back what the API owns besides the create and the delete —
// Name, Spec, Op and OpGen, Lock — with needs_work, bumping Version (a
// reconciler save in flight then conflicts and decides again, as after a
// delete). An error from mutate aborts with nothing written and is returned
// as is. When act is not nil its action record is inserted in the same
// transaction. ErrNotFound for unknown and deleted servers.
func (st *Store) UpdateServer(ctx context.Context, id string, act *store.ActionRecord, mutate func(*lifecycle.Server) error) (*lifecycle.Server, error) {
	var out *lifecycle.Server
	err := st.write(ctx, func(tx txn) error {
		s, err := scanServer(tx.QueryRowContext(ctx, "SELECT "+serverCols+" FROM servers WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) || (err == nil && s.Phase == lifecycle.PhaseDeleted) {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sqlite: update server %s: %w", id, err)
		}
		if err := mutate(s); err != nil {
			return err
		}
		spec, err := json.Marshal(s.Spec)
		if err != nil {
			return fmt.Errorf("sqlite: server %s: spec: %w", id, err)
		}
		reqs, err := requestsOf(s)
		if err != nil {
			return fmt.Errorf("sqlite: server %s: %w", id, err)
		}
		if s.UpdatedAt.IsZero() {
			s.UpdatedAt = time.Now()
		}
		if _, err := tx.ExecContext(ctx, qUpdateRequests, s.Name, string(spec), reqs, encTime(s.UpdatedAt),
			s.NeedsWork(), id, s.Version); err != nil {
			return fmt.Errorf("sqlite: update server %s: %w", id, err)
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
