package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ingot-dev/ingot/internal/lifecycle"

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

func TestOptionalConformance(t *testing.T) {
	storetest.RunOptional(t, func(t *testing.T) store.Store { return openFresh(t) })
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

// TestNodeRaceOneWinner: several writers at once (no single writer here)
// each save a different server onto one node; the unique index lets exactly
// one through and the others get ErrNodeTaken (I4), never a raw SQL error.
func TestNodeRaceOneWinner(t *testing.T) {
	st := openFresh(t)
	defer st.Close()
	const n = 8
	ss := make([]*lifecycle.Server, n)
	for i := range n {
		ss[i] = storetest.MinimalServer(fmt.Sprintf("s%d", i), storetest.T0)
		if err := st.CreateServer(t.Context(), ss[i]); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ss[i].Phase, ss[i].NodeID = lifecycle.PhaseReserving, "node-1"
			errs[i] = st.SaveServer(t.Context(), ss[i])
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrNodeTaken):
			t.Errorf("s%d: %v, want nil or ErrNodeTaken", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d saves took node-1, want 1 (%v)", won, errs)
	}
}

// TestDeadlineHonoured: a write waiting for a row another transaction holds
// gives up when its context ends, with the context's error, and writes
// nothing.
func TestDeadlineHonoured(t *testing.T) {
	st := openFresh(t)
	defer st.Close()
	if err := st.CreateServer(t.Context(), storetest.MinimalServer("s1", storetest.T0)); err != nil {
		t.Fatal(err)
	}
	tx, err := st.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "SELECT 1 FROM servers WHERE id = 's1' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err = st.RequestDelete(ctx, "s1", "req-del", storetest.T0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RequestDelete on a locked row: %v, want context.DeadlineExceeded", err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := st.GetServer(t.Context(), "s1")
	if err != nil || s.Desired != lifecycle.DesiredActive || s.Version != 1 {
		t.Fatalf("after the abandoned delete: %+v, %v (want unchanged)", s, err)
	}
}

// TestConstraintNames: the typed errors are decoded from the names the
// schema gives its constraints; a renamed index would silently turn
// ErrNodeTaken or ErrAddressInUse into raw errors, so the names are pinned.
func TestConstraintNames(t *testing.T) {
	st := openFresh(t)
	defer st.Close()
	rows, err := st.pool.Query(t.Context(), `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"servers_pkey", "servers_node_id", "ports_pkey", "ports_network_ip", "ports_server_network_slot",
		"volumes_pkey", "keypairs_pkey"} {
		if !slices.Contains(names, want) {
			t.Errorf("no index %s (have %v)", want, names)
		}
	}
}

// TestKeypairQuotaRace: eight creates race for a user's last keypair; the
// user's advisory lock lets one win, the others get the quota error.
func TestKeypairQuotaRace(t *testing.T) {
	st := openFresh(t)
	defer st.Close()
	const limit, racers = 3, 8
	for i := range limit - 1 {
		if err := st.CreateKeypair(t.Context(), store.Keypair{UserID: "u", Name: fmt.Sprintf("pre%d", i), Type: "ssh"}, limit); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			errs[i] = st.CreateKeypair(t.Context(), store.Keypair{UserID: "u", Name: fmt.Sprintf("k%d", i), Type: "ssh"}, limit)
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrQuotaExceeded):
			t.Errorf("racer %d: %v", i, err)
		}
	}
	if n, _ := st.CountKeypairs(t.Context(), "u"); won != 1 || n != limit {
		t.Fatalf("%d creates won the last keypair (%d keypairs), want 1 (%d)", won, n, limit)
	}
}

// TestRetryable: deadlocks and serialization failures are retried, other
// errors (a constraint violation among them) are not.
func TestRetryable(t *testing.T) {
	for code, want := range map[string]bool{"40001": true, "40P01": true, "23505": false, "42P01": false} {
		err := fmt.Errorf("postgres: save: %w", &pgconn.PgError{Code: code})
		if got := retryable(err); got != want {
			t.Errorf("retryable(%s) = %v, want %v", code, got, want)
		}
	}
	if retryable(context.Canceled) {
		t.Error("retryable(context.Canceled)")
	}
}

// TestOwner: one owner per database; the second is refused naming the
// first; when the owner's session ends (here an admin terminates it) Lost
// is closed, and another process can then take the database.
func TestOwner(t *testing.T) {
	dsn := pgtest.DSN(t)
	o, err := AcquireOwner(t.Context(), dsn, "h")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Release()
	if err := o.SetListen(t.Context(), "http://127.0.0.1:8774"); err != nil {
		t.Fatal(err)
	}
	_, err = AcquireOwner(t.Context(), dsn, "h")
	var held *OwnerHeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrOwnerHeld) {
		t.Fatalf("second AcquireOwner: %v, want an *OwnerHeldError", err)
	}
	if want := fmt.Sprintf("ingot pid %d serving http://127.0.0.1:8774", os.Getpid()); !strings.Contains(held.Holder, want) {
		t.Errorf("holder %q does not name %q", held.Holder, want)
	}
	select {
	case <-o.Lost():
		t.Fatal("Lost closed while the session lives")
	default:
	}
	st := openFresh(t) // any connection to the server, to end the owner's session
	defer st.Close()
	if _, err := st.pool.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND application_name LIKE 'ingot pid %'`, strings.TrimPrefix(mustURLPath(t, dsn), "/")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-o.Lost():
	case <-time.After(time.Minute):
		t.Fatal("Lost not closed a minute after the owner's session ended")
	}
	o2, err := AcquireOwner(t.Context(), dsn, "h")
	if err != nil {
		t.Fatalf("AcquireOwner after the first was lost: %v", err)
	}
	o2.Release()
}

func mustURLPath(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// TestOwnerHandover: a released owner lock is free at once (Release
// unlocks before it closes), and a lock whose holder lets go within
// ownerRetry is taken rather than refused — the session of a process that
// has just ended keeps it until its backend notices (test/crash restarts
// ingot right after a stop or a kill).
func TestOwnerHandover(t *testing.T) {
	dsn := pgtest.DSN(t)
	for i := range 20 {
		o, err := AcquireOwner(t.Context(), dsn, "h")
		if err != nil {
			t.Fatalf("acquire %d right after a release: %v", i, err)
		}
		if err := o.Release(); err != nil {
			t.Fatal(err)
		}
	}
	hold, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close(context.Background())
	if _, err := hold.Exec(t.Context(), "SELECT pg_advisory_lock($1)", ownerKey("h")); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(ownerRetry / 3) // the holder lets go while the next one retries
		_, _ = hold.Exec(context.Background(), "SELECT pg_advisory_unlock_all()")
	}()
	o, err := AcquireOwner(t.Context(), dsn, "h")
	if err != nil {
		t.Fatalf("acquire while the holder lets go: %v", err)
	}
	o.Release()
}
