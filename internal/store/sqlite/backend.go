package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

// backend is the SQLite side of the shared code (sqlstore.Backend): reads
// on the reader pool, writes on the one writer connection, whose single
// writer makes every read-check-write atomic without a lock.
type backend struct{ st *Store }

var _ sqlstore.Backend = backend{}

func (b backend) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return b.st.query(ctx, q, args...)
}

func (b backend) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return b.st.queryRow(ctx, q, args...)
}

func (b backend) Write(ctx context.Context, fn func(sqlstore.Tx) error) error {
	return b.st.write(ctx, func(tx txn) error { return fn(tx) })
}

func (b backend) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := b.st.write(ctx, func(tx txn) error {
		var err error
		res, err = tx.ExecContext(ctx, q, args...)
		return err
	})
	return res, err
}

func (b backend) Unique(err error) (string, bool) {
	c := constraint(err)
	return c, c != "" && c != "fk"
}

func (backend) ForeignKey(err error) bool { return constraint(err) == "fk" }

func (backend) Lock(context.Context, sqlstore.Tx, int32, string) error { return nil }

// Snapshot runs fn in a read transaction on a reader: WAL gives it one
// snapshot from its first read.
func (b backend) Snapshot(ctx context.Context, fn func(sqlstore.Tx) error) error {
	tx, err := b.st.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	return fn(tx)
}

func (backend) LockRow(context.Context, sqlstore.Tx, string, any) error { return nil }

func (b backend) Save(ctx context.Context, tx sqlstore.Tx, s *lifecycle.Server, events []lifecycle.Event) error {
	return b.st.save(ctx, tx, s, events)
}

func (b backend) CheckFence(ctx context.Context, tx sqlstore.Tx) error {
	return b.st.checkFence(ctx, tx)
}
