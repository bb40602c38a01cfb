package postgres

import (
	"sync"
	"testing"

	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

func openFresh(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.Context(), pgtest.DSN(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
}

// TestConcurrentOpenMigratesOnce: replicas starting together on an empty
// database each open the store; the advisory lock makes one of them apply
// the schema and the others find it applied, so none fails (without the
// lock, concurrent CREATE TABLEs collide) and each migration is recorded once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 8
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), dsn, Options{MaxConns: 2}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open #%d: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	if t.Failed() {
		return
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var rows, distinct int
	if err := stores[0].pool.QueryRow(t.Context(), "SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations").
		Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) || distinct != len(ms) {
		t.Fatalf("schema_migrations: %d rows (%d versions), want %d", rows, distinct, len(ms))
	}
	// A reopen applies nothing either.
	st, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}
