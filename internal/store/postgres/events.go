package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const qInsertAction = `INSERT INTO actions
	(server_id, request_id, action, start_time, message, project_id, user_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7)`

func insertAction(ctx context.Context, tx pgx.Tx, a store.ActionRecord) error {
	_, err := tx.Exec(ctx, qInsertAction,
		a.ServerID, a.RequestID, a.Action, codec.TimeNN(a.StartTime), a.Message, a.ProjectID, a.UserID)
	if err != nil {
		return fmt.Errorf("postgres: insert %s action of %s: %w", a.Action, a.ServerID, err)
	}
	return nil
}
