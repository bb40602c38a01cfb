package sqlstore

import (
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

// The API's writes of a server besides its create: the delete request and
// the update of what the API owns. Each reads the server (locking its row
// where rows are locked) and writes it back in one transaction.

// RequestDelete records the user's delete and bumps version, so a worker
// holding the previous version fails its SaveServer with ErrConflict: the
// delete wins (I2). Idempotent; ErrNotFound for unknown or deleted servers.
func (st *Store) RequestDelete(ctx context.Context, id, requestID string, at time.Time) error {
	if at.IsZero() {
		at = time.Now()
	}
	return st.B.Write(ctx, func(tx Tx) error {
		var s lifecycle.Server
		var desired, phase string
		err := tx.QueryRowContext(ctx, `SELECT desired, phase, node_id, ports_allocated, project_id, user_id
			FROM servers WHERE id = ?`+st.ForUpdate, id).Scan(&desired, &phase, &s.NodeID, &s.PortsAllocated, &s.ProjectID, &s.UserID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return st.errorf("request delete %s: %w", id, err)
		}
		s.Desired, s.Phase = lifecycle.Desired(desired), lifecycle.Phase(phase)
		if s.Phase == lifecycle.PhaseDeleted {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if s.Desired == lifecycle.DesiredDeleted {
			return nil // already requested: nothing changes
		}
		var before *lifecycle.Server
		if st.notify != nil {
			if before, err = codec.ScanServer(tx.QueryRowContext(ctx, "SELECT "+codec.ServerCols+" FROM servers WHERE id = ?", id)); err != nil {
				return st.errorf("request delete %s: %w", id, err)
			}
		}
		s.Desired = lifecycle.DesiredDeleted
		if _, err := tx.ExecContext(ctx, `UPDATE servers SET desired = ?, delete_requested_at = ?, delete_request_id = ?,
			updated_at = ?, version = version + 1, needs_work = ? WHERE id = ?`,
			string(lifecycle.DesiredDeleted), codec.Time(at), requestID, codec.Time(at), s.NeedsWork(), id); err != nil {
			return st.errorf("request delete %s: %w", id, err)
		}
		if before != nil {
			after := before.Clone()
			after.Desired, after.DeleteRequestedAt, after.DeleteRequestID, after.UpdatedAt = lifecycle.DesiredDeleted, at, requestID, at
			after.Version++
			if err := st.insertNotices(ctx, tx, before, after); err != nil {
				return err
			}
		}
		return st.InsertAction(ctx, tx, store.ActionRecord{
			ServerID: id, RequestID: requestID, Action: lifecycle.ActionDelete,
			StartTime: at, ProjectID: s.ProjectID, UserID: s.UserID,
		})
	})
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
	err := st.B.Write(ctx, func(tx Tx) error {
		s, err := codec.ScanServer(tx.QueryRowContext(ctx, "SELECT "+codec.ServerCols+" FROM servers WHERE id = ?"+st.ForUpdate, id))
		if errors.Is(err, sql.ErrNoRows) || (err == nil && s.Phase == lifecycle.PhaseDeleted) {
			return fmt.Errorf("server %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return st.errorf("update server %s: %w", id, err)
		}
		var before *lifecycle.Server
		if st.notify != nil {
			before = s.Clone()
		}
		opGen, refs := s.OpGen, slices.Clone(s.Spec.Volumes)
		if err := mutate(s); err != nil {
			return err
		}
		if err := st.reserveAttach(ctx, tx, s, opGen); err != nil {
			return err
		}
		if err := st.mirrorDeleteFlags(ctx, tx, s, refs); err != nil {
			return err
		}
		spec, err := json.Marshal(s.Spec)
		if err != nil {
			return st.errorf("server %s: spec: %w", id, err)
		}
		reqs, err := codec.Requests(s)
		if err != nil {
			return st.errorf("server %s: %w", id, err)
		}
		if s.UpdatedAt.IsZero() {
			s.UpdatedAt = time.Now()
		}
		set, args := "name = ?, spec = ?, requests = ?", []any{s.Name, string(spec), reqs}
		if st.TagsColumn {
			tags, err := tagsOf(s.Spec)
			if err != nil {
				return st.errorf("server %s: tags: %w", id, err)
			}
			set, args = set+", tags = ?", append(args, tags)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE servers SET "+set+
			", updated_at = ?, version = version + 1, needs_work = ? WHERE id = ? AND version = ?",
			append(args, codec.Time(s.UpdatedAt), s.NeedsWork(), id, s.Version)...); err != nil {
			return st.errorf("update server %s: %w", id, err)
		}
		s.Version++
		if before != nil {
			if err := st.insertNotices(ctx, tx, before, s); err != nil {
				return err
			}
		}
		if act != nil {
			a := *act
			a.ServerID, a.ProjectID, a.UserID = id, s.ProjectID, s.UserID
			if act.ProjectID != "" {
				a.ProjectID = act.ProjectID
			}
			if act.UserID != "" {
				a.UserID = act.UserID
			}
			if err := st.InsertAction(ctx, tx, a); err != nil {
				return err
			}
		}
		out = s
		return nil
	})
	return out, err
}

// reserveAttach holds the volume of an attach that mutate recorded (a new
// OpGen) for s, in the same transaction: the hold is the attach's desired
// state. Errors as CreateServer's reservation.
func (st *Store) reserveAttach(ctx context.Context, tx Tx, s *lifecycle.Server, opGen int64) error {
	if s.OpGen == opGen || s.Op.Kind != lifecycle.OpAttachVolume {
		return nil
	}
	i := slices.IndexFunc(s.Spec.Volumes, func(r lifecycle.VolumeRef) bool { return r.ID == s.Op.VolumeID })
	if i < 0 {
		return fmt.Errorf("attach of volume %s not listed in the spec of server %s", s.Op.VolumeID, s.ID)
	}
	at := s.UpdatedAt
	if at.IsZero() {
		at = time.Now()
	}
	return st.reserveRefs(ctx, tx, s, s.Spec.Volumes[i:i+1], at)
}

// mirrorDeleteFlags writes to the volumes s holds the delete_on_termination
// of their Spec.Volumes entry where mutate changed it from before's (an
// os-volume_attachments PUT, 2.85): the release reads the registry's.
func (st *Store) mirrorDeleteFlags(ctx context.Context, tx Tx, s *lifecycle.Server, before []lifecycle.VolumeRef) error {
	for _, ref := range s.Spec.Volumes {
		i := slices.IndexFunc(before, func(b lifecycle.VolumeRef) bool { return b.ID == ref.ID })
		if i < 0 || before[i].DeleteOnTermination == ref.DeleteOnTermination {
			continue
		}
		if _, err := tx.ExecContext(ctx, "UPDATE volumes SET delete_on_termination = ? WHERE id = ? AND server_id = ?",
			ref.DeleteOnTermination, ref.ID, s.ID); err != nil {
			return st.errorf("volume %s of server %s: delete_on_termination: %w", ref.ID, s.ID, err)
		}
	}
	return nil
}
