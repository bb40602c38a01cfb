package backend

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/novanotify"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

func open(t testing.TB, dsn string) store.Store {
	t.Helper()
	st, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// populate writes n servers and at least one row in every table a copy
// moves.
func populate(t testing.TB, st store.Store, n int) {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.(store.ServerGroups).CreateServerGroup(ctx, store.ServerGroup{ID: "group-1", Name: "g", ProjectID: "project-1",
		UserID: "user-1", Policy: "anti-affinity", MaxServerPerHost: 2, CreatedAt: storetest.T0}, 10))
	must(st.(store.Volumes).CreateVolume(ctx, store.Volume{ID: "vol-1", Name: "v", ProjectID: "project-1", SizeGB: 10, Status: "available"}))
	// Notifications waiting in the outbox are moved with the rest.
	st.(store.Outbox).SetNotifier((&novanotify.Builder{Host: "host-1", PublisherID: "nova-compute:host-1",
		Now: func() time.Time { return storetest.T0 }}).Notices)
	defer st.(store.Outbox).SetNotifier(nil)
	for i := range n {
		s := storetest.FullServer(fmt.Sprintf("srv-%05d", i))
		s.Spec.Tags = []string{"t" + fmt.Sprint(i%3), "x"}
		if i == 0 {
			s.Spec.Group = &lifecycle.GroupRef{ID: "group-1", Policy: "anti-affinity", MaxPerHost: 2}
		}
		must(st.CreateServer(ctx, s))
		must(st.SaveServer(ctx, s, lifecycle.Event{RequestID: s.CreateRequestID, Action: lifecycle.ActionCreate, Name: "deploy",
			Node: s.NodeID, Result: lifecycle.ResultSuccess, Start: storetest.T0, Finish: storetest.T0.Add(time.Second)}))
	}
	must(st.CreatePort(ctx, store.Port{ID: "port-1", ServerID: "srv-00000", NetworkID: "net-a", IP: "10.0.0.2", MAC: "52:54:00:00:00:01"}))
	must(st.(store.Keypairs).CreateKeypair(ctx, store.Keypair{UserID: "user-1", Name: "key-1", Type: "ssh", PublicKey: "ssh-ed25519 AAAA",
		Fingerprint: "aa:bb", CreatedAt: storetest.T0}, 100))
	must(st.(store.Quotas).SetQuotas(ctx, "project-1", store.Limits{"instances": 50}))
	fl := st.(store.Flavors)
	must(fl.CreateFlavor(ctx, store.Flavor{ID: "flavor-1", Name: "baremetal", VCPUs: 8, RAMMB: 16384, DiskGB: 100, RxTxFactor: 1.5,
		IsPublic: false, ExtraSpecs: map[string]string{"resources:CUSTOM_X": "1"}}))
	must(fl.AddFlavorAccess(ctx, "flavor-1", "project-1"))
	_, err := st.(store.Services).RegisterService(ctx, "host-1", "nova-compute", storetest.T0)
	must(err)
	ag, err := st.(store.Aggregates).CreateAggregate(ctx, store.Aggregate{UUID: "agg-uuid", Name: "rack-1",
		Metadata: map[string]string{"availability_zone": "az1"}, CreatedAt: storetest.T0})
	must(err)
	_, err = st.(store.Aggregates).AddAggregateHost(ctx, ag.ID, "host-1", storetest.T0)
	must(err)
	must(st.(store.QuotaClasses).SetQuotaClass(ctx, "default", store.Limits{"cores": 100}))
}

// readAll reads every server of st through the store, with its events.
func readAll(t testing.TB, st store.Store) map[string]*lifecycle.Server {
	t.Helper()
	out := map[string]*lifecycle.Server{}
	after := ""
	for {
		page, err := st.ListServers(t.Context(), store.ListOptions{Marker: after, Limit: 1000, IncludeDeleted: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			got, err := st.GetServer(t.Context(), s.ID)
			if err != nil {
				t.Fatalf("GetServer %s: %v", s.ID, err)
			}
			if _, err := st.AllEvents(t.Context(), s.ID); err != nil {
				t.Fatalf("AllEvents %s: %v", s.ID, err)
			}
			out[s.ID] = got
		}
		if len(page) < 1000 {
			return out
		}
		after = page[len(page)-1].ID
	}
}

func integrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check of %s: %q %v", path, res, err)
	}
}

// A backup taken during a burst of writes is a consistent database
// (integrity_check, every server readable through the store), 0600, and
// restored (stop, copy back, start) serves the servers it had.
func TestBackupDuringWrites(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ingot.db")
	st := open(t, db)
	populate(t, st, 50)

	ctx, cancel := context.WithCancel(t.Context())
	var wrote atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				s := storetest.FullServer(fmt.Sprintf("burst-%d-%05d", w, i))
				if err := st.CreateServer(ctx, s); err != nil {
					if ctx.Err() == nil {
						t.Errorf("burst create: %v", err)
					}
					return
				}
				wrote.Add(1)
			}
		})
	}
	for wrote.Load() < 100 { // the burst is under way
		time.Sleep(time.Millisecond)
	}
	bak := filepath.Join(dir, "backup.db")
	err := Backup(t.Context(), db, bak)
	before := wrote.Load()
	for wrote.Load() < before+100 { // and goes on after the backup
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(bak)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode: %v %v", fi.Mode(), err)
	}
	if err := Backup(t.Context(), db, bak); err == nil {
		t.Error("a second backup overwrote the first")
	}
	integrity(t, bak)

	copied := readAll(t, open(t, bak))
	if n := len(copied); n < 150 || int64(n) > 50+wrote.Load() {
		t.Fatalf("backup holds %d servers (50 + %d written)", n, wrote.Load())
	}

	// Restore: stop, copy back over the database (its -wal and -shm gone), start.
	all := len(readAll(t, st))
	st.Close()
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(bak)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	restored := readAll(t, open(t, db))
	if len(restored) != len(copied) || len(restored) >= all {
		t.Fatalf("restored %d servers, the backup had %d, the database %d", len(restored), len(copied), all)
	}
	for id, s := range copied {
		if r := restored[id]; r == nil || r.Version != s.Version || r.Name != s.Name {
			t.Errorf("restored %s: %+v", id, r)
		}
	}
}

// A database at an older schema lists its pending migrations and
// migrates; one a newer ingot wrote is refused by Inspect, Migrate and
// Open alike.
func TestInspectMigrateNewer(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "old.db")
	st, err := Inspect(ctx, db)
	if err != nil || !st.Fresh() || len(st.Pending) < 10 {
		t.Fatalf("fresh: %+v %v", st, err)
	}
	ms, err := sqlite.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sqlite.OpenDB(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlstore.Apply(ctx, raw, sqlite.Dialect(), ms[:len(ms)-1]); err != nil {
		t.Fatal(err)
	}
	last := ms[len(ms)-1]
	st, err = Inspect(ctx, db)
	if err != nil || st.Fresh() || len(st.Pending) != 1 || st.Pending[0].Version != last.Version {
		t.Fatalf("older: %+v %v", st, err)
	}
	applied, err := Migrate(ctx, db)
	if err != nil || len(applied) != 1 || applied[0].Version != last.Version {
		t.Fatalf("migrate: %v %v", applied, err)
	}
	if applied, err := Migrate(ctx, db); err != nil || len(applied) != 0 {
		t.Fatalf("migrate again: %v %v", applied, err)
	}
	if _, err := raw.ExecContext(ctx, "INSERT INTO schema_migrations VALUES (9999, 'future', 'x')"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := Inspect(ctx, db); !errors.Is(err, sqlstore.ErrNewer) || !strings.Contains(err.Error(), "9999") {
		t.Errorf("Inspect of a newer database: %v", err)
	}
	if _, err := Migrate(ctx, db); !errors.Is(err, sqlstore.ErrNewer) {
		t.Errorf("Migrate of a newer database: %v", err)
	}
	if _, err := Open(ctx, db, Options{}); !errors.Is(err, sqlstore.ErrNewer) {
		t.Errorf("Open of a newer database: %v", err)
	}
}

// SQLite → PostgreSQL → SQLite: every table moved and diffed, the counts
// the same at each step, the servers read back equal; a non-empty target
// and a held source are refused, and a diff that differs fails.
func TestCopyRoundTrip(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	pg := pgtest.DSN(t)
	b := filepath.Join(dir, "b.db")
	st := open(t, a)
	populate(t, st, 30)
	want := readAll(t, st)
	st.Close()

	res, err := Copy(ctx, a, pg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range sqlstore.CopyTables {
		if res.Counts[tb] == 0 {
			t.Errorf("copied no row of %s", tb)
		}
	}
	if res.Counts["servers"] != 30 {
		t.Errorf("copied %d servers", res.Counts["servers"])
	}
	if _, err := Copy(ctx, a, pg, "host-a"); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("copy into a non-empty target: %v", err)
	}
	back, err := Copy(ctx, pg, b, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	for tb, n := range res.Counts {
		if back.Counts[tb] != n {
			t.Errorf("%s: %d rows there, %d back", tb, n, back.Counts[tb])
		}
	}
	for _, dsn := range []string{pg, b} {
		got := readAll(t, open(t, dsn))
		for id, s := range want {
			g := got[id]
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(s)
			if string(gj) != string(wj) {
				t.Errorf("%s: %s:\n%s\nwant\n%s", dsn, id, gj, wj)
			}
		}
		// the tag filter reads PostgreSQL's derived tags column
		tagged, err := open(t, dsn).ListServers(ctx, store.ListOptions{Tags: []string{"t1"}, Limit: 100})
		if err != nil || len(tagged) != 10 {
			t.Errorf("%s: %d servers tagged t1: %v", dsn, len(tagged), err)
		}
	}

	// A held source (an ingot serving it) is refused.
	o, err := Acquire(ctx, b, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, b, filepath.Join(dir, "c.db"), "host-a"); !errors.Is(err, ErrHeld) {
		t.Errorf("copy of a held source: %v", err)
	}
	o.Release()

	// A PostgreSQL source a replica of another host still holds leases on
	// is being served: refused.
	if _, err := open(t, pg).(store.Leases).ClaimLeases(ctx, store.Claim{Host: "host-b", Shards: 4, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, pg, filepath.Join(dir, "d.db"), "host-a"); err == nil || !strings.Contains(err.Error(), "being served") {
		t.Errorf("copy of a leased source: %v", err)
	}

	// The diff sees a changed row.
	src, _ := openDB(ctx, a)
	defer src.Close()
	dst, _ := openDB(ctx, b)
	defer dst.Close()
	if _, err := dst.ExecContext(ctx, "UPDATE events SET result = 'Error' WHERE id = (SELECT MAX(id) FROM events)"); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlstore.Verify(ctx, src, dst); err == nil || !strings.Contains(err.Error(), "events") {
		t.Errorf("Verify of a changed event: %v", err)
	}
}
