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

const keypairCols = "user_id, name, type, public_key, fingerprint, created_at"

// Listing bounds of the stores: 0 or more than maxLimit takes defaultLimit.
const (
	defaultLimit = 1000
	maxLimit     = 1000
)

func scanKeypair(sc codec.Scanner) (store.Keypair, error) {
	var kp store.Keypair
	var created sql.NullString
	if err := sc.Scan(&kp.UserID, &kp.Name, &kp.Type, &kp.PublicKey, &kp.Fingerprint, &created); err != nil {
		return kp, err
	}
	var err error
	kp.CreatedAt, err = codec.ParseTime(created)
	return kp, err
}

// CreateKeypair implements store.Keypairs: the count and the insert are
// one transaction under the user's lock (Backend.Lock).
func (s *Store) CreateKeypair(ctx context.Context, kp store.Keypair, limit int) error {
	if kp.UserID == "" || kp.Name == "" {
		return s.errorf("keypair without user or name")
	}
	if kp.CreatedAt.IsZero() {
		kp.CreatedAt = time.Now()
	}
	return s.B.Write(ctx, func(tx Tx) error {
		if limit >= 0 {
			if err := s.B.Lock(ctx, tx, LockUserKeypairs, kp.UserID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM keypairs WHERE user_id = ?", kp.UserID).Scan(&n); err != nil {
				return s.errorf("count keypairs of %s: %w", kp.UserID, err)
			}
			if n+1 > limit {
				return &store.QuotaExceededError{Resource: store.ResKeyPairs, Requested: 1, Used: n, Limit: limit}
			}
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO keypairs ("+keypairCols+") VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
			kp.UserID, kp.Name, kp.Type, kp.PublicKey, kp.Fingerprint, codec.TimeNN(kp.CreatedAt))
		if err != nil {
			return s.errorf("create keypair %s of %s: %w", kp.Name, kp.UserID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return s.errorf("create keypair %s of %s: %w", kp.Name, kp.UserID, err)
		} else if n == 0 {
			return fmt.Errorf("keypair %s of %s: %w", kp.Name, kp.UserID, store.ErrExists)
		}
		return nil
	})
}

// GetKeypair implements store.Keypairs.
func (s *Store) GetKeypair(ctx context.Context, userID, name string) (store.Keypair, error) {
	kp, err := scanKeypair(s.B.QueryRow(ctx, "SELECT "+keypairCols+" FROM keypairs WHERE user_id = ? AND name = ?", userID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Keypair{}, fmt.Errorf("keypair %s of %s: %w", name, userID, store.ErrNotFound)
	}
	if err != nil {
		return store.Keypair{}, s.errorf("get keypair %s of %s: %w", name, userID, err)
	}
	return kp, nil
}

// ListKeypairs implements store.Keypairs.
func (s *Store) ListKeypairs(ctx context.Context, userID, after string, limit int) ([]store.Keypair, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	rows, err := s.B.Query(ctx, "SELECT "+keypairCols+" FROM keypairs WHERE user_id = ? AND name > ? ORDER BY name LIMIT ?",
		userID, after, limit)
	if err != nil {
		return nil, s.errorf("list keypairs of %s: %w", userID, err)
	}
	out, err := collect(rows, scanKeypair)
	if err != nil {
		return nil, s.errorf("list keypairs of %s: %w", userID, err)
	}
	return out, nil
}

// DeleteKeypair implements store.Keypairs.
func (s *Store) DeleteKeypair(ctx context.Context, userID, name string) error {
	return s.ExecOne(ctx, fmt.Sprintf("keypair %s of %s", name, userID),
		"DELETE FROM keypairs WHERE user_id = ? AND name = ?", userID, name)
}

// CountKeypairs implements store.Keypairs.
func (s *Store) CountKeypairs(ctx context.Context, userID string) (int, error) {
	var n int
	if err := s.B.QueryRow(ctx, "SELECT COUNT(*) FROM keypairs WHERE user_id = ?", userID).Scan(&n); err != nil {
		return 0, s.errorf("count keypairs of %s: %w", userID, err)
	}
	return n, nil
}

// collect reads every row with scan, closing rows.
func collect[T any](rows *sql.Rows, scan func(codec.Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
