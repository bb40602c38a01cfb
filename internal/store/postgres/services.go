package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/ingot-dev/ingot/internal/store/codec"
	"github.com/jackc/pgx/v5"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/store"
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
	err := st.write(ctx, func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, "UPDATE services SET updated_at = $1 WHERE host = $2 AND binary_name = $3",
			codec.TimeNN(at), host, binary)
		if err != nil {
			return fmt.Errorf("postgres: register service %s on %s: %w", binary, host, err)
		}
		if res.RowsAffected() == 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO services (uuid, host, binary_name, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5)`, uuid.NewString(), host, binary, codec.TimeNN(at), codec.TimeNN(at)); err != nil {
				return fmt.Errorf("postgres: register service %s on %s: %w", binary, host, err)
			}
		}
		out, err = scanService(tx.QueryRow(ctx, "SELECT "+serviceCols+" FROM services WHERE host = $1 AND binary_name = $2",
			host, binary))
		return err
	})
	return out, err
}

// Heartbeat implements store.Services.
func (st *Store) Heartbeat(ctx context.Context, host string, at time.Time) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, "UPDATE services SET updated_at = $1 WHERE host = $2", codec.TimeNN(at), host)
		if err != nil {
			return fmt.Errorf("postgres: heartbeat of %s: %w", host, err)
		}
		if res.RowsAffected() == 0 {
			return fmt.Errorf("services of %s: %w", host, store.ErrNotFound)
		}
		return nil
	})
}

// ListServices implements store.Services.
func (st *Store) ListServices(ctx context.Context) ([]store.Service, error) {
	rows, err := st.pool.Query(ctx, "SELECT "+serviceCols+" FROM services ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("postgres: list services: %w", err)
	}
	defer rows.Close()
	var out []store.Service
	for rows.Next() {
		s, err := scanService(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list services: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// UpdateService implements store.Services.
func (st *Store) UpdateService(ctx context.Context, id string, u store.ServiceUpdate) (store.Service, error) {
	var out store.Service
	err := st.write(ctx, func(tx pgx.Tx) error {
		s, err := scanService(tx.QueryRow(ctx, "SELECT "+serviceCols+" FROM services WHERE uuid = $1", id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("service %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: update service %s: %w", id, err)
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
		if _, err := tx.Exec(ctx, "UPDATE services SET disabled = $1, disabled_reason = $2, forced_down = $3 WHERE uuid = $4",
			s.Disabled, reason, s.ForcedDown, id); err != nil {
			return fmt.Errorf("postgres: update service %s: %w", id, err)
		}
		out = s
		return nil
	})
	return out, err
}

// DeleteService implements store.Services.
func (st *Store) DeleteService(ctx context.Context, id string) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		return deleteOne(ctx, tx, "DELETE FROM services WHERE uuid = $1", id, "service")
	})
}
