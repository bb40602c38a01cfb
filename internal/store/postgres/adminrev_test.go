package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store"
)

// TestAdminRevisionLockOrder: a metadata update and a host change of one
// aggregate, both waiting on the admin revision's row, hold no lock on the
// aggregate meanwhile — every aggregate write takes the revision first,
// so the two cannot deadlock (one holding the aggregate and waiting on
// the revision, the other the reverse) — and both land once it is free.
func TestAdminRevisionLockOrder(t *testing.T) {
	ctx := t.Context()
	// Connections for the holder, the two writers, the poll and the probe.
	st, err := Open(ctx, pgtest.DSN(t), Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.RegisterService(ctx, "h1", store.BinaryCompute, time.Now()); err != nil {
		t.Fatal(err)
	}
	a, err := st.CreateAggregate(ctx, store.Aggregate{Name: "a1", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	hold, err := st.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := hold.Exec(ctx, "SELECT 1 FROM admin_revision WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	z := "z1"
	go func() {
		_, err := st.UpdateAggregate(ctx, a.ID, nil, map[string]*string{store.AggregateAZKey: &z}, time.Now())
		errs <- err
	}()
	go func() {
		_, err := st.AddAggregateHost(ctx, a.ID, "h1", time.Now())
		errs <- err
	}()
	poll.Until(t, 10*time.Second, "both writes waiting on a lock", func() (bool, string) {
		var n int
		err := st.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		return err == nil && n >= 2, fmt.Sprintf("%d waiting (%v)", n, err)
	})
	probe, err := st.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = probe.Exec(ctx, "SELECT 1 FROM aggregates WHERE id = $1 FOR UPDATE NOWAIT", a.ID)
	_ = probe.Rollback(ctx)
	if err != nil {
		t.Fatalf("a write waiting on the admin revision holds the aggregate: %v", err)
	}
	if err := hold.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.GetAggregate(ctx, a.ID)
	if err != nil || got.Metadata[store.AggregateAZKey] != "z1" || len(got.Hosts) != 1 {
		t.Fatalf("after both: %+v %v", got, err)
	}
}
