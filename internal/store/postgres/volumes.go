package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const (
	volumeCols = `id, name, size_gb, status, server_id, node_id, boot_index, delete_on_termination,
	target_iqn, target_lun, target_portal, status_reason, created_at, updated_at, project_id, user_id`
	// A stranded volume (status error) keeps its status, node and reason.
	qFreeVolume = `UPDATE volumes SET
		status = CASE WHEN status = 'error' THEN 'error' ELSE 'available' END,
		node_id = CASE WHEN status = 'error' THEN node_id ELSE '' END,
		status_reason = CASE WHEN status = 'error' THEN status_reason ELSE '' END,
		server_id = '', boot_index = -1, delete_on_termination = FALSE, updated_at = $1
		WHERE id = $2 AND server_id = $3 AND server_id <> ''`
	// volumeOrder: boot volumes by boot index, then data volumes (-1), id breaking ties.
	volumeOrder = "boot_index < 0, boot_index, id"
)

func scanVolume(sc codec.Scanner) (store.Volume, error) {
	var (
		v                store.Volume
		created, updated sql.NullString
	)
	err := sc.Scan(&v.ID, &v.Name, &v.SizeGB, &v.Status, &v.ServerID, &v.NodeID, &v.BootIndex,
		&v.DeleteOnTermination, &v.TargetIQN, &v.TargetLUN, &v.TargetPortal, &v.StatusReason, &created, &updated,
		&v.ProjectID, &v.UserID)
	if err != nil {
		return v, err
	}
	if v.CreatedAt, err = codec.ParseTime(created); err != nil {
		return v, fmt.Errorf("volume %s: %w", v.ID, err)
	}
	if v.UpdatedAt, err = codec.ParseTime(updated); err != nil {
		return v, fmt.Errorf("volume %s: %w", v.ID, err)
	}
	return v, nil
}

func (st *Store) queryVolumes(ctx context.Context, what, q string, args ...any) ([]store.Volume, error) {
	rows, err := st.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	defer rows.Close()
	var out []store.Volume
	for rows.Next() {
		v, err := scanVolume(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return out, nil
}

// CreateVolume inserts v as an available volume: Status, ServerID, NodeID,
// BootIndex (-1), DeleteOnTermination and StatusReason are set to those of
// a free volume whatever v says. A zero CreatedAt is taken as now, a zero
// UpdatedAt as CreatedAt. ErrExists on a duplicate id.
func (st *Store) CreateVolume(ctx context.Context, v store.Volume) error {
	if v.ID == "" {
		return errors.New("postgres: create volume without id")
	}
	if v.SizeGB <= 0 {
		return fmt.Errorf("postgres: create volume %s: size %d GB, want > 0", v.ID, v.SizeGB)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now()
	}
	if v.UpdatedAt.IsZero() {
		v.UpdatedAt = v.CreatedAt
	}
	err := st.fenced(ctx, func(q executor) error {
		_, err := q.Exec(ctx, "INSERT INTO volumes ("+volumeCols+
			") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
			v.ID, v.Name, v.SizeGB, store.VolumeAvailable, "", "", -1, false,
			v.TargetIQN, v.TargetLUN, v.TargetPortal, "", codec.TimeNN(v.CreatedAt), codec.Time(v.UpdatedAt), v.ProjectID, v.UserID)
		return err
	})
	if err == nil || errors.Is(err, store.ErrFenced) {
		return err
	}
	if code, name := constraint(err); code == unique && name == "volumes_pkey" {
		return fmt.Errorf("volume %s: %w", v.ID, store.ErrExists)
	}
	return fmt.Errorf("postgres: create volume %s: %w", v.ID, err)
}

// GetVolume returns one volume. ErrNotFound when unknown.
func (st *Store) GetVolume(ctx context.Context, id string) (store.Volume, error) {
	v, err := scanVolume(st.pool.QueryRow(ctx, "SELECT "+volumeCols+" FROM volumes WHERE id = $1", id))
	if nf := notFound(err, "volume "+id); nf != nil {
		return store.Volume{}, nf
	}
	if err != nil {
		return store.Volume{}, fmt.Errorf("postgres: get volume %s: %w", id, err)
	}
	return v, nil
}

// ListVolumes returns at most limit volumes with id > after, by id (limit
// <= 0 or > 1000 means 1000). An after that names no volume is no error.
func (st *Store) ListVolumes(ctx context.Context, after string, limit int) ([]store.Volume, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	return st.queryVolumes(ctx, "list volumes", "SELECT "+volumeCols+" FROM volumes WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
}

// ListProjectVolumes is ListVolumes for one project's volumes.
func (st *Store) ListProjectVolumes(ctx context.Context, projectID, after string, limit int) ([]store.Volume, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	return st.queryVolumes(ctx, "list volumes of "+projectID,
		"SELECT "+volumeCols+" FROM volumes WHERE project_id = $1 AND id > $2 ORDER BY id LIMIT $3", projectID, after, limit)
}

// lockedVolume is a volume row read FOR UPDATE inside a transaction.
type lockedVolume struct{ server, status, reason, project string }

// lockVolume reads who holds a volume, locking its row until the
// transaction ends. ErrNotFound when unknown.
func lockVolume(ctx context.Context, tx pgx.Tx, id string) (lockedVolume, error) {
	var v lockedVolume
	err := tx.QueryRow(ctx, "SELECT server_id, status, status_reason, project_id FROM volumes WHERE id = $1 FOR UPDATE", id).
		Scan(&v.server, &v.status, &v.reason, &v.project)
	if nf := notFound(err, "volume "+id); nf != nil {
		return v, nf
	}
	if err != nil {
		return v, fmt.Errorf("postgres: volume %s: %w", id, err)
	}
	return v, nil
}

// DeleteVolume removes an available volume. ErrVolumeInUse (naming the
// holder) when a server holds it; ErrNotFound when unknown.
func (st *Store) DeleteVolume(ctx context.Context, id string) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		v, err := lockVolume(ctx, tx, id)
		if err != nil {
			return err
		}
		if v.server != "" {
			return fmt.Errorf("volume %s is held by server %s: %w", id, v.server, store.ErrVolumeInUse)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM volumes WHERE id = $1 AND server_id = ''", id); err != nil {
			return fmt.Errorf("postgres: delete volume %s: %w", id, err)
		}
		return nil
	})
}

// ServerVolumes lists the volumes serverID holds: boot volumes first by
// boot index, then data volumes (boot index -1); id breaks ties.
func (st *Store) ServerVolumes(ctx context.Context, serverID string) ([]store.Volume, error) {
	if serverID == "" {
		return nil, nil
	}
	return st.queryVolumes(ctx, "volumes of server "+serverID,
		"SELECT "+volumeCols+" FROM volumes WHERE server_id = $1 ORDER BY "+volumeOrder, serverID)
}

// VolumesOn lists the volumes of many servers, ServerVolumes' order for
// each (servers holding none are absent from the map).
func (st *Store) VolumesOn(ctx context.Context, serverIDs []string) (map[string][]store.Volume, error) {
	out := make(map[string][]store.Volume)
	if len(serverIDs) == 0 {
		return out, nil
	}
	vols, err := st.queryVolumes(ctx, "volumes on servers", "SELECT "+volumeCols+
		" FROM volumes WHERE server_id = ANY($1) AND server_id <> '' ORDER BY server_id, "+volumeOrder, serverIDs)
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		out[v.ServerID] = append(out[v.ServerID], v)
	}
	return out, nil
}

// UpdateVolume writes Status (reserved, in-use or deleting), NodeID,
// StatusReason and UpdatedAt (zero: now) of a volume held by v.ServerID.
// Idempotent. ErrNotFound when the volume is not held by that server.
func (st *Store) UpdateVolume(ctx context.Context, v store.Volume) error {
	if !codec.HeldStatus(v.Status) {
		return fmt.Errorf("postgres: update volume %s: status %q is not one of a held volume", v.ID, v.Status)
	}
	if v.UpdatedAt.IsZero() {
		v.UpdatedAt = time.Now()
	}
	return st.ExecOne(ctx, fmt.Sprintf("volume %s held by server %q", v.ID, v.ServerID),
		`UPDATE volumes SET status = $1, node_id = $2, status_reason = $3, updated_at = $4
		WHERE id = $5 AND server_id = $6 AND server_id <> ''`,
		v.Status, v.NodeID, v.StatusReason, codec.Time(v.UpdatedAt), v.ID, v.ServerID)
}

// ReleaseVolume ends serverID's hold on volume id: destroy deletes the
// volume, otherwise it becomes available with no server, node, boot index
// or status reason. Idempotent: nil when the volume is gone or held by
// another server (or by none).
func (st *Store) ReleaseVolume(ctx context.Context, id, serverID string, destroy bool) error {
	if serverID == "" {
		return fmt.Errorf("postgres: release volume %s: no server given", id)
	}
	return st.write(ctx, func(tx pgx.Tx) error {
		var err error
		if destroy {
			_, err = tx.Exec(ctx, "DELETE FROM volumes WHERE id = $1 AND server_id = $2 AND server_id <> '' AND status <> 'error'",
				id, serverID)
		}
		if err == nil { // a no-op when destroyed; frees (or keeps stranded) otherwise
			_, err = tx.Exec(ctx, qFreeVolume, codec.Time(time.Now()), id, serverID)
		}
		if err != nil {
			return fmt.Errorf("postgres: release volume %s of server %s: %w", id, serverID, err)
		}
		return nil
	})
}

// reserveVolumes holds every volume of s.Spec.Volumes for s inside
// CreateServer's transaction. The rows are locked first, in id order, so
// two creates wanting the same volumes queue instead of deadlocking; then
// each is checked in the order the server lists them (the first refused
// names the error). A volume listed twice is refused; an unknown one (or
// another project's) wraps ErrNotFound; one held by any server wraps
// ErrVolumeInUse naming the holder. The caller rolls back on error.
func reserveVolumes(ctx context.Context, tx pgx.Tx, s *lifecycle.Server) error {
	if len(s.Spec.Volumes) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(s.Spec.Volumes))
	ids := make([]string, 0, len(s.Spec.Volumes))
	for _, ref := range s.Spec.Volumes {
		if seen[ref.ID] {
			return fmt.Errorf("postgres: server %s lists volume %s twice", s.ID, ref.ID)
		}
		seen[ref.ID] = true
		ids = append(ids, ref.ID)
	}
	slices.Sort(ids)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM volumes WHERE id = ANY($1) ORDER BY id FOR UPDATE", ids); err != nil {
		return fmt.Errorf("postgres: lock volumes of server %s: %w", s.ID, err)
	}
	for _, ref := range s.Spec.Volumes {
		v, err := lockVolume(ctx, tx, ref.ID)
		if err != nil {
			return fmt.Errorf("postgres: volume %s: %w", ref.ID, err)
		}
		if v.project != "" && v.project != s.ProjectID {
			// Another project's volume is no more visible than an unknown one.
			return fmt.Errorf("volume %s: %w", ref.ID, store.ErrNotFound)
		}
		if v.server == "" && v.status == store.VolumeError {
			// Stranded: a target of it may remain on a node ingot may not touch.
			return fmt.Errorf("volume %s is stranded (%s): %w", ref.ID, v.reason, store.ErrVolumeInUse)
		}
		if v.server != "" {
			return fmt.Errorf("volume %s is held by server %s: %w", ref.ID, v.server, store.ErrVolumeInUse)
		}
		tag, err := tx.Exec(ctx, `UPDATE volumes SET status = $1, server_id = $2, boot_index = $3,
			delete_on_termination = $4, updated_at = $5 WHERE id = $6 AND server_id = '' AND status = 'available'`,
			store.VolumeReserved, s.ID, ref.BootIndex, ref.DeleteOnTermination, codec.Time(s.CreatedAt), ref.ID)
		if err != nil {
			return fmt.Errorf("postgres: reserve volume %s for server %s: %w", ref.ID, s.ID, err)
		}
		if tag.RowsAffected() != 1 {
			// Unreachable: the row is locked by this transaction.
			return fmt.Errorf("volume %s was taken during the reservation: %w", ref.ID, store.ErrVolumeInUse)
		}
	}
	return nil
}
