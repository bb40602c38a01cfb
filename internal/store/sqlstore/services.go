package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const serviceCols = "id, uuid, host, binary_name, disabled, disabled_reason, forced_down, created_at, updated_at"

func scanService(sc codec.Scanner) (store.Service, error) {
	var s store.Service
	var reason, created, updated sql.NullString
	if err := sc.Scan(&s.ID, &s.UUID, &s.Host, &s.Binary, &s.Disabled, &reason, &s.ForcedDown, &created, &updated); err != nil {
		return s, err
	}
	if reason.Valid {
		r := reason.String
		s.DisabledReason = &r
	}
	var err error
	if s.CreatedAt, err = codec.ParseTime(created); err != nil {
		return s, err
	}
	s.UpdatedAt, err = codec.ParseTime(updated)
	return s, err
}

// RegisterService implements store.Services.
func (st *Store) RegisterService(ctx context.Context, host, binary string, at time.Time) (store.Service, error) {
	var out store.Service
	err := st.B.Write(ctx, func(tx Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE services SET updated_at = ? WHERE host = ? AND binary_name = ?",
			codec.TimeNN(at), host, binary)
		if err != nil {
			return st.errorf("register service %s on %s: %w", binary, host, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO services (uuid, host, binary_name, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?)`, uuid.NewString(), host, binary, codec.TimeNN(at), codec.TimeNN(at)); err != nil {
				return st.errorf("register service %s on %s: %w", binary, host, err)
			}
		}
		out, err = scanService(tx.QueryRowContext(ctx, "SELECT "+serviceCols+" FROM services WHERE host = ? AND binary_name = ?",
			host, binary))
		return err
	})
	return out, err
}

// Heartbeat implements store.Services.
func (st *Store) Heartbeat(ctx context.Context, host string, at time.Time) error {
	return st.B.Write(ctx, func(tx Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE services SET updated_at = ? WHERE host = ?", codec.TimeNN(at), host)
		if err != nil {
			return st.errorf("heartbeat of %s: %w", host, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("services of %s: %w", host, store.ErrNotFound)
		}
		return nil
	})
}

// ListServices implements store.Services.
func (st *Store) ListServices(ctx context.Context) ([]store.Service, error) {
	rows, err := st.B.Query(ctx, "SELECT "+serviceCols+" FROM services ORDER BY id")
	if err != nil {
		return nil, st.errorf("list services: %w", err)
	}
	defer rows.Close()
	var out []store.Service
	for rows.Next() {
		s, err := scanService(rows)
		if err != nil {
			return nil, st.errorf("list services: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// UpdateService implements store.Services.
func (st *Store) UpdateService(ctx context.Context, id string, u store.ServiceUpdate) (store.Service, error) {
	var out store.Service
	err := st.B.Write(ctx, func(tx Tx) error {
		s, err := scanService(tx.QueryRowContext(ctx, "SELECT "+serviceCols+" FROM services WHERE uuid = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("service %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return st.errorf("update service %s: %w", id, err)
		}
		if u.Disabled != nil {
			s.Disabled = *u.Disabled
		}
		if u.DisabledReason != nil {
			s.DisabledReason = *u.DisabledReason
		}
		if u.ForcedDown != nil {
			s.ForcedDown = *u.ForcedDown
		}
		var reason any
		if s.DisabledReason != nil {
			reason = *s.DisabledReason
		}
		if _, err := tx.ExecContext(ctx, "UPDATE services SET disabled = ?, disabled_reason = ?, forced_down = ? WHERE uuid = ?",
			s.Disabled, reason, s.ForcedDown, id); err != nil {
			return st.errorf("update service %s: %w", id, err)
		}
		out = s
		return nil
	})
	return out, err
}

// AdminRevision implements store.Services (the triggers of migration 0017
// bump it).
func (st *Store) AdminRevision(ctx context.Context) (int64, error) {
	var rev int64
	if err := st.B.QueryRow(ctx, "SELECT rev FROM admin_revision WHERE id = 1").Scan(&rev); err != nil {
		return 0, st.errorf("admin revision: %w", err)
	}
	return rev, nil
}

// DeleteService implements store.Services.
func (st *Store) DeleteService(ctx context.Context, id string) error {
	return st.B.Write(ctx, func(tx Tx) error {
		return st.deleteOne(ctx, tx, "DELETE FROM services WHERE uuid = ?", id, "service")
	})
}
