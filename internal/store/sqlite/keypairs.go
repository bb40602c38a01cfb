package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

const keypairCols = "user_id, name, type, public_key, fingerprint, created_at"

func scanKeypair(sc scanner) (store.Keypair, error) {
	var kp store.Keypair
	var created sql.NullString
	if err := sc.Scan(&kp.UserID, &kp.Name, &kp.Type, &kp.PublicKey, &kp.Fingerprint, &created); err != nil {
		return kp, err
	}
	var err error
	kp.CreatedAt, err = decTime(created)
	return kp, err
}

// CreateKeypair implements store.Keypairs: the count and the insert are
// one transaction.
func (st *Store) CreateKeypair(ctx context.Context, kp store.Keypair, limit int) error {
	if kp.UserID == "" || kp.Name == "" {
		return errors.New("sqlite: keypair without user or name")
	}
	if kp.CreatedAt.IsZero() {
		kp.CreatedAt = time.Now()
	}
	return st.write(ctx, func(tx txn) error {
		if limit >= 0 {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM keypairs WHERE user_id = ?", kp.UserID).Scan(&n); err != nil {
				return fmt.Errorf("sqlite: count keypairs of %s: %w", kp.UserID, err)
			}
			if n+1 > limit {
				return &store.QuotaExceededError{Resource: store.ResKeyPairs, Requested: 1, Used: n, Limit: limit}
			}
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO keypairs ("+keypairCols+") VALUES (?, ?, ?, ?, ?, ?)",
			kp.UserID, kp.Name, kp.Type, kp.PublicKey, kp.Fingerprint, encTimeNN(kp.CreatedAt))
		if err != nil {
			if constraint(err) != "" {
				return fmt.Errorf("keypair %s of %s: %w", kp.Name, kp.UserID, store.ErrExists)
			}
			return fmt.Errorf("sqlite: create keypair %s of %s: %w", kp.Name, kp.UserID, err)
		}
		return nil
	})
}

// GetKeypair implements store.Keypairs.
func (st *Store) GetKeypair(ctx context.Context, userID, name string) (store.Keypair, error) {
	kp, err := scanKeypair(st.queryRow(ctx, "SELECT "+keypairCols+" FROM keypairs WHERE user_id = ? AND name = ?", userID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Keypair{}, fmt.Errorf("keypair %s of %s: %w", name, userID, store.ErrNotFound)
	}
	if err != nil {
		return store.Keypair{}, fmt.Errorf("sqlite: get keypair %s of %s: %w", name, userID, err)
	}
	return kp, nil
}

// ListKeypairs implements store.Keypairs.
func (st *Store) ListKeypairs(ctx context.Context, userID, after string, limit int) ([]store.Keypair, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	rows, err := st.query(ctx, "SELECT "+keypairCols+" FROM keypairs WHERE user_id = ? AND name > ? ORDER BY name LIMIT ?",
		userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list keypairs of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []store.Keypair
	for rows.Next() {
		kp, err := scanKeypair(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list keypairs of %s: %w", userID, err)
		}
		out = append(out, kp)
	}
	return out, rows.Err()
}

// DeleteKeypair implements store.Keypairs.
func (st *Store) DeleteKeypair(ctx context.Context, userID, name string) error {
	return st.write(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM keypairs WHERE user_id = ? AND name = ?", userID, name)
		if err != nil {
			return fmt.Errorf("sqlite: delete keypair %s of %s: %w", name, userID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: delete keypair %s of %s: %w", name, userID, err)
		} else if n == 0 {
			return fmt.Errorf("keypair %s of %s: %w", name, userID, store.ErrNotFound)
		}
		return nil
	})
}

// CountKeypairs implements store.Keypairs.
func (st *Store) CountKeypairs(ctx context.Context, userID string) (int, error) {
	var n int
	if err := st.queryRow(ctx, "SELECT COUNT(*) FROM keypairs WHERE user_id = ?", userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count keypairs of %s: %w", userID, err)
	}
	return n, nil
}
