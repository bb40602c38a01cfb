package sqlite

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
	defaultLimit = 1000
	maxLimit     = 1000
)

// Statements of the write transactions (prepared at Open, see writerQueries).
const (
	// qSaveServer: desired is never written; needs_work is picked for the
	// stored desired (see needsWork).
	qServerExists = "SELECT 1 FROM servers WHERE id = ?"
	qSaveServer   = `UPDATE servers SET phase = ?, node_id = ?, ext = ?,
		deploy_requested = ?, ports_allocated = ?, volumes_on_node = ?, volumes_released = ?,
		excluded = ?, attempts = ?, fault = ?,
		maintenance_since = ?, updated_at = ?, phase_since = ?, deadline = ?, launched_at = ?,
		version = version + 1,
		needs_work = CASE WHEN desired = 'deleted' THEN ? ELSE ? END
		WHERE id = ? AND version = ?`
)

// SaveServer writes the lifecycle fields of s if s.Version matches the
// stored version, records events in the same transaction, and on success
// increments s.Version. ErrConflict on a version mismatch, ErrNotFound for
// an unknown id, ErrNodeTaken when s.NodeID is held by another server; on
// any error nothing is written and s is unchanged.
func (st *Store) SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error {
	if err := st.write(ctx, func(tx txn) error { return st.save(ctx, tx, s, events) }); err != nil {
		return err
	}
	s.Version++
	return nil
}

// save is SaveServer's write inside tx with the notices of the change
// (sqlstore.Noticed); s.Version is left to the caller.
func (st *Store) save(ctx context.Context, tx sqlstore.Tx, s *lifecycle.Server, events []lifecycle.Event) error {
	return st.Noticed(ctx, tx, s, func() error { return saveServer(ctx, tx, s, events) })
}

// saveServer is SaveServer's write inside tx; s.Version is left to the caller.
func saveServer(ctx context.Context, tx sqlstore.Tx, s *lifecycle.Server, events []lifecycle.Event) error {
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
