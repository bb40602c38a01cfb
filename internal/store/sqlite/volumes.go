package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// The create-time side of the volume registry (the rest is shared:
// sqlstore); it runs in the create transaction, which is still each
// store's own.

const (
	qVolumeHolder = "SELECT server_id, status, status_reason FROM volumes WHERE id = ?"
	qVolumeOwner  = "SELECT project_id FROM volumes WHERE id = ?"
	// qReserveVolume only takes a free volume: the server_id = '' guard keeps
	// the hold exclusive even if the read before it were stale.
	qReserveVolume = `UPDATE volumes SET status = ?, server_id = ?, boot_index = ?,
		delete_on_termination = ?, updated_at = ? WHERE id = ? AND server_id = '' AND status = 'available'`
)

// volumeWriterQueries are the statements of reserveVolumes (prepared at Open).
var volumeWriterQueries = []string{qVolumeHolder, qVolumeOwner, qReserveVolume}

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
