package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// The create-time side of the volume registry (the rest is shared:
// sqlstore); it runs in the create transaction, which is still each
// store's own.

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
