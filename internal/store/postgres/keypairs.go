package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const keypairCols = "user_id, name, type, public_key, fingerprint, created_at"

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
// one transaction under the user's advisory lock (quotas.go).
func (st *Store) CreateKeypair(ctx context.Context, kp store.Keypair, limit int) error {
	if kp.UserID == "" || kp.Name == "" {
		return errors.New("postgres: keypair without user or name")
	}
	if kp.CreatedAt.IsZero() {
		kp.CreatedAt = time.Now()
	}
	return st.write(ctx, func(tx pgx.Tx) error {
		if limit >= 0 {
			if err := lockFor(ctx, tx, lockUserKeypairs, kp.UserID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM keypairs WHERE user_id = $1", kp.UserID).Scan(&n); err != nil {
				return fmt.Errorf("postgres: count keypairs of %s: %w", kp.UserID, err)
			}
			if n+1 > limit {
				return &store.QuotaExceededError{Resource: store.ResKeyPairs, Requested: 1, Used: n, Limit: limit}
			}
		}
		tag, err := tx.Exec(ctx, "INSERT INTO keypairs ("+keypairCols+") VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
			kp.UserID, kp.Name, kp.Type, kp.PublicKey, kp.Fingerprint, codec.TimeNN(kp.CreatedAt))
		if err != nil {
			return fmt.Errorf("postgres: create keypair %s of %s: %w", kp.Name, kp.UserID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("keypair %s of %s: %w", kp.Name, kp.UserID, store.ErrExists)
		}
		return nil
	})
}

// GetKeypair implements store.Keypairs.
func (st *Store) GetKeypair(ctx context.Context, userID, name string) (store.Keypair, error) {
	kp, err := scanKeypair(st.pool.QueryRow(ctx, "SELECT "+keypairCols+" FROM keypairs WHERE user_id = $1 AND name = $2", userID, name))
	if nf := notFound(err, fmt.Sprintf("keypair %s of %s", name, userID)); nf != nil {
		return store.Keypair{}, nf
	}
	if err != nil {
		return store.Keypair{}, fmt.Errorf("postgres: get keypair %s of %s: %w", name, userID, err)
	}
	return kp, nil
}

// ListKeypairs implements store.Keypairs.
func (st *Store) ListKeypairs(ctx context.Context, userID, after string, limit int) ([]store.Keypair, error) {
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	rows, err := st.pool.Query(ctx, "SELECT "+keypairCols+" FROM keypairs WHERE user_id = $1 AND name > $2 ORDER BY name LIMIT $3",
		userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list keypairs of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []store.Keypair
	for rows.Next() {
		kp, err := scanKeypair(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list keypairs of %s: %w", userID, err)
		}
		out = append(out, kp)
	}
	return out, rows.Err()
}

// DeleteKeypair implements store.Keypairs.
func (st *Store) DeleteKeypair(ctx context.Context, userID, name string) error {
	return st.execOne(ctx, fmt.Sprintf("keypair %s of %s", name, userID),
		"DELETE FROM keypairs WHERE user_id = $1 AND name = $2", userID, name)
}

// CountKeypairs implements store.Keypairs.
func (st *Store) CountKeypairs(ctx context.Context, userID string) (int, error) {
	var n int
	if err := st.pool.QueryRow(ctx, "SELECT COUNT(*) FROM keypairs WHERE user_id = $1", userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count keypairs of %s: %w", userID, err)
	}
	return n, nil
}
