package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

const (
	volumeCols = `id, name, size_gb, status, server_id, node_id, boot_index, delete_on_termination,
	target_iqn, target_lun, target_portal, status_reason, created_at, updated_at, project_id, user_id`
	qInsertVolume = "INSERT INTO volumes (" + volumeCols + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	qVolumeHolder = "SELECT server_id, status, status_reason FROM volumes WHERE id = ?"
	qVolumeOwner  = "SELECT project_id FROM volumes WHERE id = ?"
	// qReserveVolume only takes a free volume: the server_id = '' guard keeps
	// the hold exclusive even if the read before it were stale.
	qReserveVolume = `UPDATE volumes SET status = ?, server_id = ?, boot_index = ?,
		delete_on_termination = ?, updated_at = ? WHERE id = ? AND server_id = '' AND status = 'available'`
	qDeleteVolume = "DELETE FROM volumes WHERE id = ? AND server_id = ''"
	qUpdateVolume = `UPDATE volumes SET status = ?, node_id = ?, status_reason = ?, updated_at = ?
		WHERE id = ? AND server_id = ? AND server_id <> ''`
	qDestroyVolume = "DELETE FROM volumes WHERE id = ? AND server_id = ? AND server_id <> '' AND status <> 'error'"
	// A stranded volume (status error) keeps its status, node and reason.
	qFreeVolume = `UPDATE volumes SET
		status = CASE WHEN status = 'error' THEN 'error' ELSE 'available' END,
		node_id = CASE WHEN status = 'error' THEN node_id ELSE '' END,
		status_reason = CASE WHEN status = 'error' THEN status_reason ELSE '' END,
		server_id = '', boot_index = -1, delete_on_termination = FALSE, updated_at = ?
		WHERE id = ? AND server_id = ? AND server_id <> ''`
)

// volumeWriterQueries are the volume statements of write transactions.
var volumeWriterQueries = []string{qInsertVolume, qVolumeHolder, qVolumeOwner, qReserveVolume, qDeleteVolume,
	qUpdateVolume, qDestroyVolume, qFreeVolume}

func scanVolume(sc scanner) (store.Volume, error) {
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
	if v.CreatedAt, err = decTime(created); err != nil {
		return v, fmt.Errorf("sqlite: volume %s: %w", v.ID, err)
	}
	if v.UpdatedAt, err = decTime(updated); err != nil {
		return v, fmt.Errorf("sqlite: volume %s: %w", v.ID, err)
	}
	return v, nil
}

func collectVolumes(rows *sql.Rows) ([]store.Volume, error) {
	defer rows.Close()
	var out []store.Volume
	for rows.Next() {
		v, err := scanVolume(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: volumes: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: volumes: %w", err)
	}
	return out, nil
}

// CreateVolume inserts v as an available volume: Status, ServerID, NodeID,
// BootIndex (-1), DeleteOnTermination and StatusReason are set to those of
// a free volume whatever v says. A zero CreatedAt is taken as now, a zero
// UpdatedAt as CreatedAt. ErrExists on a duplicate id.
func (st *Store) CreateVolume(ctx context.Context, v store.Volume) error {
	if v.ID == "" {
		return errors.New("sqlite: create volume without id")
	}
	if v.SizeGB <= 0 {
		return fmt.Errorf("sqlite: create volume %s: size %d GB, want > 0", v.ID, v.SizeGB)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now()
	}
	if v.UpdatedAt.IsZero() {
		v.UpdatedAt = v.CreatedAt
	}
	return st.write(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, qInsertVolume, v.ID, v.Name, v.SizeGB, store.VolumeAvailable, "", "", -1, false,
			v.TargetIQN, v.TargetLUN, v.TargetPortal, "", encTimeNN(v.CreatedAt), encTime(v.UpdatedAt), v.ProjectID, v.UserID)
		if err == nil {
			return nil
		}
		if constraint(err) == "volumes.id" {
			return fmt.Errorf("volume %s: %w", v.ID, store.ErrExists)
		}
		return fmt.Errorf("sqlite: create volume %s: %w", v.ID, err)
	})
}

// GetVolume returns one volume. ErrNotFound when unknown.
func (st *Store) GetVolume(ctx context.Context, id string) (store.Volume, error) {
	v, err := scanVolume(st.queryRow(ctx, "SELECT "+volumeCols+" FROM volumes WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Volume{}, fmt.Errorf("volume %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Volume{}, fmt.Errorf("sqlite: get volume %s: %w", id, err)
	}
	return v, nil
}

// ListVolumes returns at most limit volumes with id > after, by id (limit
// <= 0 or > 1000 means 1000). An after that names no volume is no error.
func (st *Store) ListVolumes(ctx context.Context, after string, limit int) ([]store.Volume, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	rows, err := st.query(ctx, "SELECT "+volumeCols+" FROM volumes WHERE id > ? ORDER BY id LIMIT ?", after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list volumes: %w", err)
	}
	return collectVolumes(rows)
}

// ListProjectVolumes is ListVolumes for one project's volumes.
func (st *Store) ListProjectVolumes(ctx context.Context, projectID, after string, limit int) ([]store.Volume, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	rows, err := st.query(ctx, "SELECT "+volumeCols+" FROM volumes WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?",
		projectID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list volumes of %s: %w", projectID, err)
	}
	return collectVolumes(rows)
}

// holder returns the server holding volume id ("" when free), ErrNotFound
// when the volume is unknown.
// volumeRow reads who holds a volume, and its status and reason, inside tx.
// ErrNotFound when unknown.
func volumeRow(ctx context.Context, tx txn, id string) (server, status, reason string, err error) {
	err = tx.QueryRowContext(ctx, qVolumeHolder, id).Scan(&server, &status, &reason)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", "", fmt.Errorf("volume %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return "", "", "", fmt.Errorf("sqlite: volume %s: %w", id, err)
	}
	return server, status, reason, nil
}

func holder(ctx context.Context, tx txn, id string) (string, error) {
	server, _, _, err := volumeRow(ctx, tx, id)
	return server, err
}

// DeleteVolume removes an available volume. ErrVolumeInUse (naming the
// holder) when a server holds it; ErrNotFound when unknown.
func (st *Store) DeleteVolume(ctx context.Context, id string) error {
	return st.write(ctx, func(tx txn) error {
		server, err := holder(ctx, tx, id)
		if err != nil {
			return err
		}
		if server != "" {
			return fmt.Errorf("volume %s is held by server %s: %w", id, server, store.ErrVolumeInUse)
		}
		if _, err := tx.ExecContext(ctx, qDeleteVolume, id); err != nil {
			return fmt.Errorf("sqlite: delete volume %s: %w", id, err)
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
	rows, err := st.query(ctx, "SELECT "+volumeCols+` FROM volumes WHERE server_id = ?
		ORDER BY boot_index < 0, boot_index, id`, serverID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: volumes of server %s: %w", serverID, err)
	}
	return collectVolumes(rows)
}

// VolumesOn lists the volumes of many servers, ServerVolumes' order for
// each (servers holding none are absent from the map).
func (st *Store) VolumesOn(ctx context.Context, serverIDs []string) (map[string][]store.Volume, error) {
	out := make(map[string][]store.Volume)
	for len(serverIDs) > 0 {
		chunk := serverIDs[:min(len(serverIDs), sqlstore.InChunk)]
		serverIDs = serverIDs[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")
		rows, err := st.r.QueryContext(ctx, "SELECT "+volumeCols+" FROM volumes WHERE server_id IN ("+marks+
			") AND server_id <> '' ORDER BY server_id, boot_index < 0, boot_index, id", args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: volumes on servers: %w", err)
		}
		vols, err := collectVolumes(rows)
		if err != nil {
			return nil, err
		}
		for _, v := range vols {
			out[v.ServerID] = append(out[v.ServerID], v)
		}
	}
	return out, nil
}

// heldStatus reports whether status is one a held volume may have.
func heldStatus(status string) bool {
	return status == store.VolumeReserved || status == store.VolumeInUse || status == store.VolumeDeleting ||
		status == store.VolumeError
}

// UpdateVolume writes Status (reserved, in-use or deleting), NodeID,
// StatusReason and UpdatedAt (zero: now) of a volume held by v.ServerID.
// Idempotent. ErrNotFound when the volume is not held by that server.
func (st *Store) UpdateVolume(ctx context.Context, v store.Volume) error {
	if !heldStatus(v.Status) {
		return fmt.Errorf("sqlite: update volume %s: status %q is not one of a held volume", v.ID, v.Status)
	}
	if v.UpdatedAt.IsZero() {
		v.UpdatedAt = time.Now()
	}
	return st.write(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, qUpdateVolume, v.Status, v.NodeID, v.StatusReason, encTime(v.UpdatedAt),
			v.ID, v.ServerID)
		if err != nil {
			return fmt.Errorf("sqlite: update volume %s: %w", v.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: update volume %s: %w", v.ID, err)
		} else if n == 0 {
			return fmt.Errorf("volume %s held by server %q: %w", v.ID, v.ServerID, store.ErrNotFound)
		}
		return nil
	})
}

// ReleaseVolume ends serverID's hold on volume id: destroy deletes the
// volume, otherwise it becomes available with no server, node, boot index
// or status reason. Idempotent: nil when the volume is gone or held by
// another server (or by none).
func (st *Store) ReleaseVolume(ctx context.Context, id, serverID string, destroy bool) error {
	if serverID == "" {
		return fmt.Errorf("sqlite: release volume %s: no server given", id)
	}
	return st.write(ctx, func(tx txn) error {
		var err error
		if destroy {
			_, err = tx.ExecContext(ctx, qDestroyVolume, id, serverID)
		}
		if err == nil { // a no-op when destroyed; frees (or keeps stranded) otherwise
			_, err = tx.ExecContext(ctx, qFreeVolume, encTime(time.Now()), id, serverID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: release volume %s of server %s: %w", id, serverID, err)
		}
		return nil
	})
}

// reserveVolumes holds every volume of s.Spec.Volumes for s inside
// CreateServer's transaction. A volume listed twice is refused; an unknown
// one wraps ErrNotFound; one held by any server (this one included, which
// cannot happen for a new id) wraps ErrVolumeInUse naming the holder. The
// caller rolls back on error, so nothing is written then.
func reserveVolumes(ctx context.Context, tx txn, s *lifecycle.Server) error {
	seen := make(map[string]bool, len(s.Spec.Volumes))
	for _, ref := range s.Spec.Volumes {
		if seen[ref.ID] {
			return fmt.Errorf("sqlite: server %s lists volume %s twice", s.ID, ref.ID)
		}
		seen[ref.ID] = true
		server, status, reason, err := volumeRow(ctx, tx, ref.ID)
		if err != nil {
			return fmt.Errorf("sqlite: volume %s: %w", ref.ID, err)
		}
		var project string
		if err := tx.QueryRowContext(ctx, qVolumeOwner, ref.ID).Scan(&project); err != nil {
			return fmt.Errorf("sqlite: volume %s: %w", ref.ID, err)
		}
		if project != "" && project != s.ProjectID {
			// Another project's volume is no more visible than an unknown one.
			return fmt.Errorf("volume %s: %w", ref.ID, store.ErrNotFound)
		}
		if server == "" && status == store.VolumeError {
			// Stranded: a target of it may remain on a node ingot may not
			// touch (I8), so it is never handed out again.
			return fmt.Errorf("volume %s is stranded (%s): %w", ref.ID, reason, store.ErrVolumeInUse)
		}
		if server != "" {
			return fmt.Errorf("volume %s is held by server %s: %w", ref.ID, server, store.ErrVolumeInUse)
		}
		res, err := tx.ExecContext(ctx, qReserveVolume, store.VolumeReserved, s.ID, ref.BootIndex,
			ref.DeleteOnTermination, encTime(s.CreatedAt), ref.ID)
		if err != nil {
			return fmt.Errorf("sqlite: reserve volume %s for server %s: %w", ref.ID, s.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: reserve volume %s for server %s: %w", ref.ID, s.ID, err)
		} else if n != 1 {
			// Unreachable with one writer: the read above is in this transaction.
			return fmt.Errorf("volume %s was taken during the reservation: %w", ref.ID, store.ErrVolumeInUse)
		}
	}
	return nil
}
