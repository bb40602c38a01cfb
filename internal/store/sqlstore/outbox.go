package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// The notification outbox (store.Outbox, docs/DESIGN.md §2.13). Every
// write that changes a server calls the Notifier with the record before
// and after and inserts its notices in the same transaction.

const qInsertNotice = `INSERT INTO outbox (message_id, event_type, priority, server_id, body, created_at)
	VALUES (?, ?, ?, ?, ?, ?)`

// qBefore reads, in a write, the record a save replaces.
func (st *Store) qBefore() string {
	return "SELECT " + codec.ServerCols + " FROM servers WHERE id = ?" + st.ForUpdate
}

// SetNotifier sets the notifier (nil: none). Not safe while serving.
func (st *Store) SetNotifier(n store.Notifier) { st.notify = n }

// Notifying reports whether writes record notices.
func (st *Store) Notifying() bool { return st.notify != nil }

// Noticed runs save, the write of s in tx, between a read of the record
// it replaces and the insert of the notices of the change. Without a
// notifier it is save alone (no read).
func (st *Store) Noticed(ctx context.Context, tx Tx, s *lifecycle.Server, save func() error) error {
	if st.notify == nil {
		return save()
	}
	old, err := codec.ScanServer(tx.QueryRowContext(ctx, st.qBefore(), s.ID))
	if err != nil && !noRows(err) {
		return st.errorf("read server %s: %w", s.ID, err)
	}
	if err := save(); err != nil {
		return err
	}
	if old == nil {
		return nil // save found no server and said so
	}
	after := s.Clone()
	after.Version = s.Version + 1
	return st.insertNotices(ctx, tx, old, after)
}

// insertNotices writes the notices of the change old -> new in tx.
func (st *Store) insertNotices(ctx context.Context, tx Tx, old, new *lifecycle.Server) error {
	if st.notify == nil {
		return nil
	}
	for _, n := range st.notify(old, new) {
		if _, err := tx.ExecContext(ctx, qInsertNotice, n.MessageID, n.EventType, n.Priority, n.ServerID,
			string(n.Body), codec.TimeNN(n.CreatedAt)); err != nil {
			return st.errorf("outbox: insert %s of %s: %w", n.EventType, n.ServerID, err)
		}
	}
	return nil
}

// ClaimOutbox makes holder the one drainer until ttl from now, unless
// another holder's claim is unexpired (by the claimer's clock: replicas'
// clocks are assumed to agree within the ttl; a claim taken over early
// only duplicates messages, which consumers dedupe by message_id).
func (st *Store) ClaimOutbox(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	now := time.Now()
	res, err := st.B.Exec(ctx, `UPDATE outbox_drainer SET holder = ?, expires_ns = ?
		WHERE id = 1 AND (holder = ? OR holder = '' OR expires_ns < ?)`,
		holder, now.Add(ttl).UnixNano(), holder, now.UnixNano())
	if err != nil {
		return false, st.errorf("outbox: claim: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, st.errorf("outbox: claim: %w", err)
	}
	return n == 1, nil
}

// ReleaseOutbox gives up holder's claim.
func (st *Store) ReleaseOutbox(ctx context.Context, holder string) error {
	if _, err := st.B.Exec(ctx, "UPDATE outbox_drainer SET holder = '', expires_ns = 0 WHERE id = 1 AND holder = ?", holder); err != nil {
		return st.errorf("outbox: release: %w", err)
	}
	return nil
}

// PendingNotices returns the oldest notices by seq, at most limit (<= 0: 100).
func (st *Store) PendingNotices(ctx context.Context, limit int) ([]store.Notice, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := st.B.Query(ctx, `SELECT seq, message_id, event_type, priority, server_id, body, created_at
		FROM outbox ORDER BY seq LIMIT ?`, limit)
	if err != nil {
		return nil, st.errorf("outbox: %w", err)
	}
	defer rows.Close()
	var out []store.Notice
	for rows.Next() {
		var n store.Notice
		var body string
		var at sql.NullString
		if err := rows.Scan(&n.Seq, &n.MessageID, &n.EventType, &n.Priority, &n.ServerID, &body, &at); err != nil {
			return nil, st.errorf("outbox: %w", err)
		}
		if n.CreatedAt, err = codec.ParseTime(at); err != nil {
			return nil, st.errorf("outbox: %w", err)
		}
		n.Body = []byte(body)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, st.errorf("outbox: %w", err)
	}
	return out, nil
}

// DeleteNotices removes the notices with these seqs, InChunk per statement.
func (st *Store) DeleteNotices(ctx context.Context, seqs []int64) error {
	for len(seqs) > 0 {
		n := min(len(seqs), InChunk)
		args := make([]any, n)
		for i, s := range seqs[:n] {
			args[i] = s
		}
		if _, err := st.B.Exec(ctx, "DELETE FROM outbox WHERE seq IN ("+marks(n)+")", args...); err != nil {
			return st.errorf("outbox: delete: %w", err)
		}
		seqs = seqs[n:]
	}
	return nil
}

// OutboxDepth counts the notices not yet published.
func (st *Store) OutboxDepth(ctx context.Context) (int, error) {
	var n int
	if err := st.B.QueryRow(ctx, "SELECT COUNT(*) FROM outbox").Scan(&n); err != nil {
		return 0, st.errorf("outbox: depth: %w", err)
	}
	return n, nil
}
