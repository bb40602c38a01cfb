package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// Shard leases (store.Leases) on PostgreSQL. Expiry is the server's
// clock_timestamp(), read once per round, so replicas' clocks need not agree.
// Two replicas claiming at once never take one lease twice: the take locks
// the free rows it picks and skips those another round has locked. A fenced
// write reads its lease row FOR KEY SHARE in its own transaction; whatever
// moves a lease to a new epoch (a takeover, a restarted holder taking its own
// back) first locks the row FOR UPDATE, which conflicts with it, so the move
// waits for the write to commit, or skips the row. A renewal, which only
// extends expires_at, conflicts with neither: it neither waits for the
// holder's writes nor makes them wait (as a row read FOR SHARE did, even to
// deadlock, every renewal).
const (
	pqNow       = `SELECT clock_timestamp()`
	pqHeartbeat = `INSERT INTO replicas (host, seen_at) VALUES ($1, $2)
		ON CONFLICT (host) DO UPDATE SET seen_at = excluded.seen_at`
	pqLive        = `SELECT count(*) FROM replicas WHERE seen_at > $1`
	pqEnsureShard = `INSERT INTO leases (shard) SELECT generate_series(0, $1::int - 1) ON CONFLICT (shard) DO NOTHING`
	pqRenew       = `UPDATE leases SET expires_at = $1 WHERE holder = $2 AND expires_at > $3 AND shard < $4`
	pqTakeOwn     = `UPDATE leases SET expires_at = $1, epoch = epoch + 1
		WHERE shard IN (SELECT shard FROM leases WHERE holder = $2 AND shard < $3 FOR UPDATE)`
	pqHeld = `SELECT count(*) FROM leases WHERE holder = $1 AND expires_at > $2 AND shard < $3`
	pqTake = `UPDATE leases SET holder = $1, epoch = epoch + 1, expires_at = $2
		WHERE shard IN (SELECT shard FROM leases WHERE expires_at <= $3 AND shard < $4 ORDER BY shard LIMIT $5
		FOR UPDATE SKIP LOCKED)`
	pqMine = `SELECT shard, holder, epoch, expires_at FROM leases
		WHERE holder = $1 AND expires_at > $2 AND shard < $3 ORDER BY shard`
	pqRelease     = `UPDATE leases SET expires_at = clock_timestamp() WHERE holder = $1 AND expires_at > clock_timestamp()`
	pqReleaseSome = `UPDATE leases SET expires_at = clock_timestamp()
		WHERE holder = $1 AND expires_at > clock_timestamp() AND shard = ANY($2)`
	pqForget = `DELETE FROM replicas WHERE host = $1`
	pqFence  = `SELECT 1 FROM leases WHERE shard = $1 AND holder = $2 AND epoch = $3
		AND expires_at > clock_timestamp() FOR KEY SHARE`
	pqKick = `SELECT pg_notify('ingot_kick', '')`
)

var (
	_ store.Leases = (*Store)(nil)
	_ store.Kicker = (*Store)(nil)
)

// ClaimLeases runs one lease round (store.Leases).
func (st *Store) ClaimLeases(ctx context.Context, c store.Claim) (store.Claimed, error) {
	if c.Host == "" || c.Shards <= 0 || c.TTL <= 0 {
		return store.Claimed{}, fmt.Errorf("postgres: claim leases: want a host, shards and a ttl, got %+v", c)
	}
	var out store.Claimed
	err := st.Store.B.Write(ctx, func(tx sqlstore.Tx) error {
		out = store.Claimed{}
		var now time.Time
		if err := tx.QueryRowContext(ctx, pqNow).Scan(&now); err != nil {
			return err
		}
		exp := now.Add(c.TTL)
		if _, err := tx.ExecContext(ctx, pqHeartbeat, c.Host, now); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, pqLive, now.Add(-c.TTL)).Scan(&out.Live); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, pqEnsureShard, c.Shards); err != nil {
			return err
		}
		var err error
		if c.TakeOwn {
			_, err = tx.ExecContext(ctx, pqTakeOwn, exp, c.Host, c.Shards)
		} else {
			_, err = tx.ExecContext(ctx, pqRenew, exp, c.Host, now, c.Shards)
		}
		if err != nil {
			return err
		}
		var held int
		if err := tx.QueryRowContext(ctx, pqHeld, c.Host, now, c.Shards).Scan(&held); err != nil {
			return err
		}
		if want := store.Share(c.Shards, out.Live); held < want {
			if _, err := tx.ExecContext(ctx, pqTake, c.Host, exp, now, c.Shards, want-held); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, pqMine, c.Host, now, c.Shards)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l store.Lease
			if err := rows.Scan(&l.Shard, &l.Holder, &l.Epoch, &l.ExpiresAt); err != nil {
				return err
			}
			l.ExpiresAt = l.ExpiresAt.UTC()
			out.Held = append(out.Held, l)
		}
		return rows.Err()
	})
	if err != nil {
		return store.Claimed{}, fmt.Errorf("postgres: claim leases of %s: %w", c.Host, err)
	}
	return out, nil
}

// ReleaseLeases gives up host's leases (store.Leases).
func (st *Store) ReleaseLeases(ctx context.Context, host string, shards []int) error {
	err := st.Store.B.Write(ctx, func(tx sqlstore.Tx) error {
		if shards == nil {
			if _, err := tx.ExecContext(ctx, pqRelease, host); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, pqForget, host)
			return err
		}
		if len(shards) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, pqReleaseSome, host, shards)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: release leases of %s: %w", host, err)
	}
	return nil
}

// ListLeases lists every shard's lease (store.Leases).
func (st *Store) ListLeases(ctx context.Context) ([]store.Lease, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT shard, holder, epoch, expires_at FROM leases ORDER BY shard`)
	if err != nil {
		return nil, fmt.Errorf("postgres: leases: %w", err)
	}
	defer rows.Close()
	var out []store.Lease
	for rows.Next() {
		var l store.Lease
		if err := rows.Scan(&l.Shard, &l.Holder, &l.Epoch, &l.ExpiresAt); err != nil {
			return nil, fmt.Errorf("postgres: leases: %w", err)
		}
		l.ExpiresAt = l.ExpiresAt.UTC()
		out = append(out, l)
	}
	return out, rows.Err()
}

// KickReplicas wakes every replica's loop (store.Kicker).
func (st *Store) KickReplicas(ctx context.Context) error {
	if _, err := st.pool.Exec(ctx, pqKick); err != nil {
		return fmt.Errorf("postgres: kick: %w", err)
	}
	return nil
}

// ListenKicks calls fn for every kick until ctx ends (store.Kicker), on a
// connection of its own taken from the pool.
func (st *Store) ListenKicks(ctx context.Context, fn func()) error {
	pc, err := st.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: listen: %w", err)
	}
	conn := pc.Hijack() // a listening session never goes back to the pool
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN ingot_kick"); err != nil {
		return fmt.Errorf("postgres: listen: %w", err)
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("postgres: listen: %w", err)
		}
		fn()
	}
}
