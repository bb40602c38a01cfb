package sqlite

import (
	"context"
	"fmt"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

const (
	qInsertEvent = `INSERT INTO events
		(server_id, request_id, action, name, node, result, details, start, finish)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// insertEvents records events of server id; an event without ServerID is
// taken as the server's.
func insertEvents(ctx context.Context, tx sqlstore.Tx, id string, events []lifecycle.Event) error {
	for _, e := range events {
		sid := e.ServerID
		if sid == "" {
			sid = id
		}
		if _, err := tx.ExecContext(ctx, qInsertEvent, sid, e.RequestID, e.Action, e.Name, e.Node, e.Result, e.Details,
			encTime(e.Start), encTime(e.Finish)); err != nil {
			if constraint(err) == "fk" {
				return fmt.Errorf("event %s of server %s: %w", e.Name, sid, store.ErrNotFound)
			}
			return fmt.Errorf("sqlite: insert event %s of %s: %w", e.Name, sid, err)
		}
	}
	return nil
}
