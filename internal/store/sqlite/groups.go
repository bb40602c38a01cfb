package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// The create-time side of server groups (the rest is shared: sqlstore);
// it runs in the create transaction, which is still each store's own.

// joinGroup records c's membership of its group in its create transaction.
func joinGroup(ctx context.Context, tx txn, c *lifecycle.Server) error {
	if c.Spec.Group == nil {
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM server_groups WHERE id = ?", c.Spec.Group.ID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("server group %s: %w", c.Spec.Group.ID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: server group %s: %w", c.Spec.Group.ID, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO server_group_members (server_id, group_id) VALUES (?, ?)",
		c.ID, c.Spec.Group.ID); err != nil {
		return fmt.Errorf("sqlite: join server group %s: %w", c.Spec.Group.ID, err)
	}
	return nil
}

// checkGroupMembers refuses a create that would pass the group's member limit.
func checkGroupMembers(ctx context.Context, tx txn, c *lifecycle.Server, limit int) error {
	_, err := groupRoom(ctx, tx, c, 1, limit)
	return err
}

// groupRoom is how many more members c's group takes (-1: no limit); a
// *store.QuotaExceededError when fewer than want.
func groupRoom(ctx context.Context, tx txn, c *lifecycle.Server, want, limit int) (int, error) {
	if c.Spec.Group == nil || limit < 0 {
		return -1, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM server_group_members m JOIN servers s ON s.id = m.server_id
		WHERE m.group_id = ? AND `+sqlstore.LiveMember, c.Spec.Group.ID).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count members of server group %s: %w", c.Spec.Group.ID, err)
	}
	if n+want > limit {
		return 0, &store.QuotaExceededError{Resource: store.ResServerGroupMembers, Requested: want, Used: n, Limit: limit}
	}
	return limit - n, nil
}
