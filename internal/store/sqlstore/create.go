package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// The create path both stores share: a server's row, its volume
// reservations, its group membership and its create action in one
// transaction, and the quota check before them.

// qInsertAction records one action.
const qInsertAction = `INSERT INTO actions
	(server_id, request_id, action, start_time, message, project_id, user_id)
	VALUES (?, ?, ?, ?, ?, ?, ?)`

// InsertAction records a in tx.
func (st *Store) InsertAction(ctx context.Context, tx Tx, a store.ActionRecord) error {
	_, err := tx.ExecContext(ctx, qInsertAction,
		a.ServerID, a.RequestID, a.Action, codec.TimeNN(a.StartTime), a.Message, a.ProjectID, a.UserID)
	if err != nil {
		return st.errorf("insert %s action of %s: %w", a.Action, a.ServerID, err)
	}
	return nil
}

// insertSQL is the server insert: it does nothing on a duplicate id
// (ErrExists then). PostgreSQL also fills the tags column (TagsColumn).
func (st *Store) insertSQL() string {
	cols, vals := codec.ServerCols+", needs_work, vcpus, ram_mb, resource_class, shard_hash", marks(32)
	if st.TagsColumn {
		cols, vals = cols+", tags", vals+", ?"
	}
	return "INSERT INTO servers (" + cols + ") VALUES (" + vals + ") ON CONFLICT (id) DO NOTHING"
}

// tagsOf is the tags column of a spec: a JSON array, never null.
func tagsOf(sp lifecycle.Spec) (string, error) {
	tags := sp.Tags
	if tags == nil {
		tags = []string{}
	}
	b, err := json.Marshal(tags)
	return string(b), err
}

// insertRow is one server prepared for its insert.
type insertRow struct {
	c                lifecycle.Server
	spec, reqs, tags string
	docs             codec.Docs
}

func (st *Store) prepareInsert(s *lifecycle.Server) (*insertRow, error) {
	r := &insertRow{c: *s}
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
		return nil, st.errorf("%w", err)
	}
	spec, err := json.Marshal(c.Spec)
	if err != nil {
		return nil, st.errorf("server %s: spec: %w", c.ID, err)
	}
	r.spec = string(spec)
	if r.tags, err = tagsOf(c.Spec); err != nil {
		return nil, st.errorf("server %s: tags: %w", c.ID, err)
	}
	if r.docs, err = codec.EncodeDocs(c); err != nil {
		return nil, st.errorf("server %s: %w", c.ID, err)
	}
	if r.reqs, err = codec.Requests(c); err != nil {
		return nil, st.errorf("server %s: %w", c.ID, err)
	}
	return r, nil
}

// CreateServer inserts s with Version 1 and its create action (request
// CreateRequestID, at CreatedAt) in one transaction. An empty Desired is
// taken as active, an empty Phase as pending and a zero CreatedAt as now;
// those defaults and Version are set on s when the insert commits.
// ErrExists on a duplicate id; ErrNodeTaken if s.NodeID is held. The
// volumes of s.Spec.Volumes are reserved in the same transaction (see
// reserveVolumes).
func (st *Store) CreateServer(ctx context.Context, s *lifecycle.Server) error {
	_, err := st.createServers(ctx, []*lifecycle.Server{s}, nil)
	return err
}

// createServers inserts servers in one transaction. check, when set, runs
// first in it and says how many of them (the first n) to insert; by default
// all. It returns the number inserted; on any error nothing is written.
func (st *Store) createServers(ctx context.Context, servers []*lifecycle.Server, check func(tx Tx, cs []*lifecycle.Server) (int, error)) (int, error) {
	rows := make([]*insertRow, len(servers))
	cs := make([]*lifecycle.Server, len(servers))
	for i, s := range servers {
		row, err := st.prepareInsert(s)
		if err != nil {
			return 0, err
		}
		rows[i], cs[i] = row, &row.c
	}
	n := len(rows)
	err := st.B.Write(ctx, func(tx Tx) error {
		n = len(rows)
		if check != nil {
			k, err := check(tx, cs)
			if err != nil {
				return err
			}
			n = k
		}
		for _, row := range rows[:n] {
			if err := st.insertServer(ctx, tx, row); err != nil {
				return err
			}
			if err := st.insertNotices(ctx, tx, nil, &row.c); err != nil {
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

// insertServer writes one prepared server, its volume reservations, its
// group membership and its create action.
func (st *Store) insertServer(ctx context.Context, tx Tx, row *insertRow) error {
	c, docs := &row.c, row.docs
	args := []any{c.ID, c.Name, c.ProjectID, c.UserID, row.spec, string(c.Desired), string(c.Phase), c.NodeID,
		docs.Ext, c.DeployRequested, c.PortsAllocated, docs.Excluded, docs.Attempts, docs.Fault,
		codec.Time(c.MaintenanceSince), codec.TimeNN(c.CreatedAt), codec.Time(c.UpdatedAt), codec.Time(c.PhaseSince),
		codec.Time(c.Deadline), codec.Time(c.DeleteRequestedAt), codec.Time(c.LaunchedAt),
		c.CreateRequestID, c.DeleteRequestID, c.Version, c.VolumesOnNode, c.VolumesReleased, row.reqs, c.NeedsWork(),
		c.Spec.VCPUs, c.Spec.RAMMB, c.Spec.ResourceClass, int64(store.ShardHash(c.ID))}
	if st.TagsColumn {
		args = append(args, row.tags)
	}
	res, err := tx.ExecContext(ctx, st.insertSQL(), args...)
	if err != nil {
		if name, ok := st.B.Unique(err); ok && (name == "servers.node_id" || name == "servers_node_id") {
			// SQLite may check the node index before the primary key.
			var one int
			if tx.QueryRowContext(ctx, "SELECT 1 FROM servers WHERE id = ?", c.ID).Scan(&one) == nil {
				return fmt.Errorf("server %s: %w", c.ID, store.ErrExists)
			}
			return fmt.Errorf("server %s, node %s: %w", c.ID, c.NodeID, store.ErrNodeTaken)
		}
		return st.errorf("insert server %s: %w", c.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return st.errorf("insert server %s: %w", c.ID, err)
	} else if n == 0 {
		return fmt.Errorf("server %s: %w", c.ID, store.ErrExists)
	}
	if err := st.reserveVolumes(ctx, tx, c); err != nil {
		return err
	}
	if err := st.joinGroup(ctx, tx, c); err != nil {
		return err
	}
	return st.InsertAction(ctx, tx, store.ActionRecord{
		ServerID: c.ID, RequestID: c.CreateRequestID, Action: lifecycle.ActionCreate,
		StartTime: c.CreatedAt, ProjectID: c.ProjectID, UserID: c.UserID,
	})
}

// reserveVolumes holds every volume of s.Spec.Volumes for s inside
// CreateServer's transaction. Where rows are locked (PostgreSQL) they are
// locked first, in id order, so two creates wanting the same volumes queue
// instead of deadlocking; then each is checked in the order the server
// lists them (the first refused names the error). A volume listed twice is
// refused; an unknown one (or another project's) wraps ErrNotFound; one
// held by any server wraps ErrVolumeInUse naming the holder. The caller
// rolls back on error.
func (st *Store) reserveVolumes(ctx context.Context, tx Tx, s *lifecycle.Server) error {
	return st.reserveRefs(ctx, tx, s, s.Spec.Volumes, s.CreatedAt)
}

// reserveRefs is reserveVolumes of refs, at time at.
func (st *Store) reserveRefs(ctx context.Context, tx Tx, s *lifecycle.Server, refs []lifecycle.VolumeRef, at time.Time) error {
	// A volume the build makes is held from the moment it is made
	// (CreateHeldVolume): nothing to reserve before.
	refs = slices.DeleteFunc(slices.Clone(refs), func(r lifecycle.VolumeRef) bool { return r.Made() })
	if len(refs) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(refs))
	ids := make([]any, 0, len(refs))
	for _, ref := range refs {
		if seen[ref.ID] {
			return st.errorf("server %s lists volume %s twice", s.ID, ref.ID)
		}
		seen[ref.ID] = true
		ids = append(ids, ref.ID)
	}
	if st.ForUpdate != "" {
		slices.SortFunc(ids, func(a, b any) int { return cmp.Compare(a.(string), b.(string)) })
		if _, err := tx.ExecContext(ctx, "SELECT 1 FROM volumes WHERE id IN ("+marks(len(ids))+") ORDER BY id"+st.ForUpdate,
			ids...); err != nil {
			return st.errorf("lock volumes of server %s: %w", s.ID, err)
		}
	}
	for _, ref := range refs {
		v, err := st.lockVolume(ctx, tx, ref.ID)
		if err != nil {
			return fmt.Errorf("volume %s: %w", ref.ID, err)
		}
		if v.project != "" && v.project != s.ProjectID {
			// Another project's volume is no more visible than an unknown one.
			return fmt.Errorf("volume %s: %w", ref.ID, store.ErrNotFound)
		}
		if v.server == "" && v.status == store.VolumeError {
			// Stranded: a target of it may remain on a node ingot may not
			// touch (I8), so it is never handed out again.
			return fmt.Errorf("volume %s is stranded (%s): %w", ref.ID, v.reason, store.ErrVolumeInUse)
		}
		if v.server != "" {
			return fmt.Errorf("volume %s is held by server %s: %w", ref.ID, v.server, store.ErrVolumeInUse)
		}
		// Only a free volume is taken: the guard keeps the hold exclusive
		// even if the read before it were stale.
		res, err := tx.ExecContext(ctx, `UPDATE volumes SET status = ?, server_id = ?, boot_index = ?,
			delete_on_termination = ?, updated_at = ? WHERE id = ? AND server_id = '' AND status = 'available'`,
			store.VolumeReserved, s.ID, ref.BootIndex, ref.DeleteOnTermination, codec.Time(at), ref.ID)
		if err != nil {
			return st.errorf("reserve volume %s for server %s: %w", ref.ID, s.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return st.errorf("reserve volume %s for server %s: %w", ref.ID, s.ID, err)
		} else if n != 1 {
			// Unreachable: the row is locked, or the writer single.
			return fmt.Errorf("volume %s was taken during the reservation: %w", ref.ID, store.ErrVolumeInUse)
		}
	}
	return nil
}

// joinGroup records c's membership of its group in its create transaction.
func (st *Store) joinGroup(ctx context.Context, tx Tx, c *lifecycle.Server) error {
	if c.Spec.Group == nil {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM server_groups WHERE id = ?", c.Spec.Group.ID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("server group %s: %w", c.Spec.Group.ID, store.ErrNotFound)
	}
	if err != nil {
		return st.errorf("server group %s: %w", c.Spec.Group.ID, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO server_group_members (server_id, group_id) VALUES (?, ?)",
		c.ID, c.Spec.Group.ID); err != nil {
		return st.errorf("join server group %s: %w", c.Spec.Group.ID, err)
	}
	return nil
}

// groupRoom is how many more members c's group takes (-1: no limit); a
// *store.QuotaExceededError when fewer than want.
func (st *Store) groupRoom(ctx context.Context, tx Tx, c *lifecycle.Server, want, limit int) (int, error) {
	if c.Spec.Group == nil || limit < 0 {
		return -1, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM server_group_members m JOIN servers s ON s.id = m.server_id
		WHERE m.group_id = ? AND `+LiveMember, c.Spec.Group.ID).Scan(&n); err != nil {
		return 0, st.errorf("count members of server group %s: %w", c.Spec.Group.ID, err)
	}
	if n+want > limit {
		return 0, &store.QuotaExceededError{Resource: store.ResServerGroupMembers, Requested: want, Used: n, Limit: limit}
	}
	return limit - n, nil
}
