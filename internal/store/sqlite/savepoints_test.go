package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

// savepoints counts the SAVEPOINT statements of the write transactions
// of the backend it wraps.
type savepoints struct {
	sqlstore.Backend
	n *atomic.Int64
}

func (s savepoints) Write(ctx context.Context, fn func(sqlstore.Tx) error) error {
	return s.Backend.Write(ctx, func(tx sqlstore.Tx) error { return fn(countingTx{tx, s.n}) })
}

type countingTx struct {
	sqlstore.Tx
	n *atomic.Int64
}

func (t countingTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if strings.HasPrefix(q, "SAVEPOINT") {
		t.n.Add(1)
	}
	return t.Tx.ExecContext(ctx, q, args...)
}

// TestBatchTakesSavepointsOnlyWhenASaveFails: a batch whose saves all
// succeed runs as one plain transaction; one that meets a conflict runs
// again with a savepoint per save (storetest's BatchSaver checks what each
// save then gets).
func TestBatchTakesSavepointsOnlyWhenASaveFails(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "batch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n atomic.Int64
	st.Store.B = savepoints{st.Store.B, &n}
	servers := []*lifecycle.Server{storetest.FullServer("a"), storetest.FullServer("b"), storetest.FullServer("c")}
	for _, s := range servers {
		if err := st.CreateServer(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	saves := func(ss ...*lifecycle.Server) []store.Save {
		out := make([]store.Save, len(ss))
		for i, s := range ss {
			c := s.Clone()
			c.Excluded = append(c.Excluded, "node-x")
			out[i] = store.Save{Server: c}
		}
		return out
	}
	batch := saves(servers...)
	if errs := st.SaveServers(ctx, batch); errors.Join(errs...) != nil || n.Load() != 0 {
		t.Fatalf("a batch of good saves: errors %v, %d savepoints; want none of either", errs, n.Load())
	}
	stale := servers[1] // its saved version is behind the batch's
	errs := st.SaveServers(ctx, saves(batch[0].Server, stale, batch[2].Server))
	if errs[0] != nil || !errors.Is(errs[1], store.ErrConflict) || errs[2] != nil || n.Load() != 3 {
		t.Fatalf("a batch with a stale save: errors %v, %d savepoints; want nil, ErrConflict, nil and 3", errs, n.Load())
	}
}
