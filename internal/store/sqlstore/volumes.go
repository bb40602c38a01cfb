package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const (
	volumeCols = `id, name, size_gb, status, server_id, node_id, boot_index, delete_on_termination,
	target_iqn, target_lun, target_portal, status_reason, created_at, updated_at, project_id, user_id, description, image_id`
	// volumeReadCols are what scanVolume reads: volumeCols and the Cinder
	// attachment (never written by an insert).
	volumeReadCols = volumeCols + ", attachment_id, attachment_node"
	// A stranded volume (status error) keeps its status, node and reason.
	qFreeVolume = `UPDATE volumes SET
		status = CASE WHEN status = 'error' THEN 'error' ELSE 'available' END,
		node_id = CASE WHEN status = 'error' THEN node_id ELSE '' END,
		status_reason = CASE WHEN status = 'error' THEN status_reason ELSE '' END,
		attachment_id = CASE WHEN status = 'error' THEN attachment_id ELSE '' END,
		attachment_node = CASE WHEN status = 'error' THEN attachment_node ELSE '' END,
		server_id = '', boot_index = -1, delete_on_termination = FALSE, updated_at = ?
		WHERE id = ? AND server_id = ? AND server_id <> ''`
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
		&v.ProjectID, &v.UserID, &v.Description, &v.ImageID, &v.AttachmentID, &v.AttachmentNode)
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
	rows, err := st.B.Query(ctx, q, args...)
	if err != nil {
		return nil, st.errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []store.Volume
	for rows.Next() {
		v, err := scanVolume(rows)
		if err != nil {
			return nil, st.errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, st.errorf("%s: %w", what, err)
	}
	return out, nil
}

// CreateHeldVolume inserts v held by v.ServerID (store.Volumes).
func (st *Store) CreateHeldVolume(ctx context.Context, v store.Volume) error {
	if v.ServerID == "" {
		return fmt.Errorf("create held volume %s without a server", v.ID)
	}
	return st.insertVolume(ctx, v, store.VolumeReserved, v.ServerID, v.BootIndex, v.DeleteOnTermination)
}

// CreateVolume inserts v as an available volume: Status, ServerID, NodeID,
// BootIndex (-1), DeleteOnTermination and StatusReason are set to those of
// a free volume whatever v says. A zero CreatedAt is taken as now, a zero
// UpdatedAt as CreatedAt. ErrExists on a duplicate id.
func (st *Store) CreateVolume(ctx context.Context, v store.Volume) error {
	return st.insertVolume(ctx, v, store.VolumeAvailable, "", -1, false)
}

// insertVolume inserts v with the given hold.
func (st *Store) insertVolume(ctx context.Context, v store.Volume, status, server string, bootIndex int, dot bool) error {
	if v.ID == "" {
		return errors.New("create volume without id")
	}
	if v.SizeGB <= 0 {
		return st.errorf("create volume %s: size %d GB, want > 0", v.ID, v.SizeGB)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now()
	}
	if v.UpdatedAt.IsZero() {
		v.UpdatedAt = v.CreatedAt
	}
	_, err := st.B.Exec(ctx, "INSERT INTO volumes ("+volumeCols+
		") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		v.ID, v.Name, v.SizeGB, status, server, "", bootIndex, dot,
		v.TargetIQN, v.TargetLUN, v.TargetPortal, "", codec.TimeNN(v.CreatedAt), codec.Time(v.UpdatedAt), v.ProjectID, v.UserID,
		v.Description, v.ImageID)
	if err == nil || errors.Is(err, store.ErrFenced) {
		return err
	}
	if _, ok := st.B.Unique(err); ok { // the primary key: volumes have no other unique index
		return fmt.Errorf("volume %s: %w", v.ID, store.ErrExists)
	}
	return st.errorf("create volume %s: %w", v.ID, err)
}

// GetVolume returns one volume. ErrNotFound when unknown.
func (st *Store) GetVolume(ctx context.Context, id string) (store.Volume, error) {
	v, err := scanVolume(st.B.QueryRow(ctx, "SELECT "+volumeReadCols+" FROM volumes WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Volume{}, fmt.Errorf("volume %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Volume{}, st.errorf("get volume %s: %w", id, err)
	}
	return v, nil
}

// ListVolumes returns at most limit volumes with id > after, by id (limit
// <= 0 or > 1000 means 1000). An after that names no volume is no error.
func (st *Store) ListVolumes(ctx context.Context, after string, limit int) ([]store.Volume, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	return st.queryVolumes(ctx, "list volumes", "SELECT "+volumeReadCols+" FROM volumes WHERE id > ? ORDER BY id LIMIT ?", after, limit)
}

// ListProjectVolumes is ListVolumes for one project's volumes.
func (st *Store) ListProjectVolumes(ctx context.Context, projectID, after string, limit int) ([]store.Volume, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	return st.queryVolumes(ctx, "list volumes of "+projectID,
		"SELECT "+volumeReadCols+" FROM volumes WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?", projectID, after, limit)
}

// lockedVolume is a volume row read inside a write transaction (FOR UPDATE
// where rows lock).
type lockedVolume struct{ server, status, reason, project string }

// lockVolume reads who holds a volume, locking its row until the
// transaction ends. ErrNotFound when unknown.
func (st *Store) lockVolume(ctx context.Context, tx Tx, id string) (lockedVolume, error) {
	var v lockedVolume
	err := tx.QueryRowContext(ctx, "SELECT server_id, status, status_reason, project_id FROM volumes WHERE id = ?"+st.ForUpdate, id).
		Scan(&v.server, &v.status, &v.reason, &v.project)
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("volume %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return v, st.errorf("volume %s: %w", id, err)
	}
	return v, nil
}

// DeleteVolume removes an available volume. ErrVolumeInUse (naming the
// holder) when a server holds it; ErrNotFound when unknown.
func (st *Store) DeleteVolume(ctx context.Context, id string) error {
	return st.B.Write(ctx, func(tx Tx) error {
		v, err := st.lockVolume(ctx, tx, id)
		if err != nil {
			return err
		}
		if v.server != "" {
			return fmt.Errorf("volume %s is held by server %s: %w", id, v.server, store.ErrVolumeInUse)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM volumes WHERE id = ? AND server_id = ''", id); err != nil {
			return st.errorf("delete volume %s: %w", id, err)
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
		"SELECT "+volumeReadCols+" FROM volumes WHERE server_id = ? ORDER BY "+volumeOrder, serverID)
}

// VolumesOn lists the volumes of many servers, ServerVolumes' order for
// each (servers holding none are absent from the map).
func (st *Store) VolumesOn(ctx context.Context, serverIDs []string) (map[string][]store.Volume, error) {
	out := make(map[string][]store.Volume)
	for len(serverIDs) > 0 {
		chunk := serverIDs[:min(len(serverIDs), InChunk)]
		serverIDs = serverIDs[len(chunk):]
		in, args := inList(chunk)
		rows, err := st.B.Query(ctx, "SELECT "+volumeReadCols+" FROM volumes WHERE server_id IN ("+
			in+") AND server_id <> '' ORDER BY server_id, "+volumeOrder, args...)
		if err != nil {
			return nil, st.errorf("volumes on servers: %w", err)
		}
		vols, err := collect(rows, scanVolume)
		if err != nil {
			return nil, st.errorf("volumes on servers: %w", err)
		}
		for _, v := range vols {
			out[v.ServerID] = append(out[v.ServerID], v)
		}
	}
	return out, nil
}

// UpdateVolume writes Status (reserved, in-use or deleting), NodeID,
// StatusReason and UpdatedAt (zero: now) of a volume held by v.ServerID.
// Idempotent. ErrNotFound when the volume is not held by that server.
func (st *Store) UpdateVolume(ctx context.Context, v store.Volume) error {
	if !codec.HeldStatus(v.Status) {
		return st.errorf("update volume %s: status %q is not one of a held volume", v.ID, v.Status)
	}
	if v.UpdatedAt.IsZero() {
		v.UpdatedAt = time.Now()
	}
	return st.ExecOne(ctx, fmt.Sprintf("volume %s held by server %q", v.ID, v.ServerID),
		`UPDATE volumes SET status = ?, node_id = ?, status_reason = ?, updated_at = ?
		WHERE id = ? AND server_id = ? AND server_id <> ''`,
		v.Status, v.NodeID, v.StatusReason, codec.Time(v.UpdatedAt), v.ID, v.ServerID)
}

// ReleaseVolume ends serverID's hold on volume id: destroy deletes the
// volume, otherwise it becomes available with no server, node, boot index
// or status reason. Idempotent: nil when the volume is gone or held by
// another server (or by none).
func (st *Store) ReleaseVolume(ctx context.Context, id, serverID string, destroy bool) error {
	if serverID == "" {
		return st.errorf("release volume %s: no server given", id)
	}
	return st.B.Write(ctx, func(tx Tx) error {
		var err error
		if destroy {
			_, err = tx.ExecContext(ctx, "DELETE FROM volumes WHERE id = ? AND server_id = ? AND server_id <> '' AND status <> 'error'",
				id, serverID)
		}
		if err == nil { // a no-op when destroyed; frees (or keeps stranded) otherwise
			_, err = tx.ExecContext(ctx, qFreeVolume, codec.Time(time.Now()), id, serverID)
		}
		if err != nil {
			return st.errorf("release volume %s of server %s: %w", id, serverID, err)
		}
		return nil
	})
}

// SetVolumeAttachment records the Cinder attachment of a volume held by
// serverID and the node it was made for ("" and "" forget it).
// ErrNotFound when the volume is not held by that server.
func (st *Store) SetVolumeAttachment(ctx context.Context, id, serverID, attachmentID, nodeID string) error {
	return st.ExecOne(ctx, fmt.Sprintf("volume %s held by server %q", id, serverID),
		`UPDATE volumes SET attachment_id = ?, attachment_node = ?, updated_at = ?
		WHERE id = ? AND server_id = ? AND server_id <> ''`,
		attachmentID, nodeID, codec.Time(time.Now()), id, serverID)
}
