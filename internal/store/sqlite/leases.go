package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// Shard leases (store.Leases). The writer's one connection serializes every
// lease round and every fenced write, so each is atomic with its check.
const (
	qHeartbeat = `INSERT INTO replicas (host, seen_at) VALUES (?, ?)
		ON CONFLICT (host) DO UPDATE SET seen_at = excluded.seen_at`
	qLive        = `SELECT count(*) FROM replicas WHERE seen_at > ?`
	qEnsureShard = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
		INSERT INTO leases (shard) SELECT i FROM n WHERE true ON CONFLICT (shard) DO NOTHING`
	qRenew   = `UPDATE leases SET expires_at = ? WHERE holder = ? AND expires_at > ? AND shard < ?`
	qTakeOwn = `UPDATE leases SET expires_at = ?, epoch = epoch + 1 WHERE holder = ? AND shard < ?`
	qHeld    = `SELECT count(*) FROM leases WHERE holder = ? AND expires_at > ? AND shard < ?`
	qTake    = `UPDATE leases SET holder = ?, epoch = epoch + 1, expires_at = ?
		WHERE shard IN (SELECT shard FROM leases WHERE expires_at <= ? AND shard < ? ORDER BY shard LIMIT ?)`
	qMine = `SELECT shard, holder, epoch, expires_at FROM leases
		WHERE holder = ? AND expires_at > ? AND shard < ? ORDER BY shard`
	qReleaseAll = `UPDATE leases SET expires_at = ? WHERE holder = ? AND expires_at > ?`
	qForget     = `DELETE FROM replicas WHERE host = ?`
	qFence      = `SELECT count(*) FROM leases WHERE shard = ? AND holder = ? AND epoch = ? AND expires_at > ?`
)

var leaseWriterQueries = []string{qHeartbeat, qLive, qEnsureShard, qRenew, qTakeOwn, qHeld, qTake, qMine,
	qReleaseAll, qForget, qFence}

var _ store.Leases = (*Store)(nil)

// ClaimLeases runs one lease round (store.Leases).
func (s *Store) ClaimLeases(ctx context.Context, c store.Claim) (store.Claimed, error) {
	if c.Host == "" || c.Shards <= 0 || c.TTL <= 0 {
		return store.Claimed{}, fmt.Errorf("sqlite: claim leases: want a host, shards and a ttl, got %+v", c)
	}
	var out store.Claimed
	err := s.write(ctx, func(tx txn) error {
		now := s.now().UnixNano()
		exp := now + int64(c.TTL)
		if _, err := tx.ExecContext(ctx, qHeartbeat, c.Host, now); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, qLive, now-int64(c.TTL)).Scan(&out.Live); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qEnsureShard, c.Shards); err != nil {
			return err
		}
		q := qRenew
		args := []any{exp, c.Host, now, c.Shards}
		if c.TakeOwn {
			q, args = qTakeOwn, []any{exp, c.Host, c.Shards}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
		var held int
		if err := tx.QueryRowContext(ctx, qHeld, c.Host, now, c.Shards).Scan(&held); err != nil {
			return err
		}
		if want := store.Share(c.Shards, out.Live); held < want {
			if _, err := tx.ExecContext(ctx, qTake, c.Host, exp, now, c.Shards, want-held); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, qMine, c.Host, now, c.Shards)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			l, err := scanLease(rows)
			if err != nil {
				return err
			}
			out.Held = append(out.Held, l)
		}
		return rows.Err()
	})
	if err != nil {
		return store.Claimed{}, fmt.Errorf("sqlite: claim leases of %s: %w", c.Host, err)
	}
	return out, nil
}

// ReleaseLeases gives up host's leases (store.Leases).
func (s *Store) ReleaseLeases(ctx context.Context, host string, shards []int) error {
	err := s.write(ctx, func(tx txn) error {
		now := s.now().UnixNano()
		if shards == nil {
			if _, err := tx.ExecContext(ctx, qReleaseAll, now, host, now); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, qForget, host)
			return err
		}
		if len(shards) == 0 {
			return nil
		}
		args := []any{now, host, now}
		for _, sh := range shards {
			args = append(args, sh)
		}
		_, err := tx.ExecContext(ctx, `UPDATE leases SET expires_at = ? WHERE holder = ? AND expires_at > ? AND shard IN (?`+
			strings.Repeat(", ?", len(shards)-1)+`)`, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: release leases of %s: %w", host, err)
	}
	return nil
}

// ListLeases lists every shard's lease (store.Leases).
func (s *Store) ListLeases(ctx context.Context) ([]store.Lease, error) {
	rows, err := s.query(ctx, `SELECT shard, holder, epoch, expires_at FROM leases ORDER BY shard`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: leases: %w", err)
	}
	defer rows.Close()
	var out []store.Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: leases: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func scanLease(rows interface{ Scan(...any) error }) (store.Lease, error) {
	var l store.Lease
	var exp int64
	if err := rows.Scan(&l.Shard, &l.Holder, &l.Epoch, &exp); err != nil {
		return l, err
	}
	l.ExpiresAt = time.Unix(0, exp).UTC()
	return l, nil
}

// checkFence refuses a write whose context carries a fence that no longer
// holds (store.Leases), inside the write's transaction.
func (s *Store) checkFence(ctx context.Context, tx sqlstore.Tx) error {
	f, ok := store.FenceOf(ctx)
	if !ok {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, qFence, f.Shard, f.Holder, f.Epoch, s.now().UnixNano()).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: fence: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("shard %d epoch %d of %s: %w", f.Shard, f.Epoch, f.Holder, store.ErrFenced)
	}
	return nil
}
