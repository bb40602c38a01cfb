package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

func TestSurvivesReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "a dir?#%", "ingot.db") // URI metacharacters in the path
	_, err := Open(ctx, path)
	if err == nil {
		t.Fatal("Open in a missing directory succeeded")
	}
	path = filepath.Join(t.TempDir(), "odd ?#% name.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s := storetest.FullServer("s1")
	if err := st.CreateServer(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := st.CreatePort(ctx, store.Port{ID: "p1", ServerID: "s1", NetworkID: "n", IP: "10.0.0.2", CreatedAt: storetest.T0}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // reopening re-runs no migration
		st, err = Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.GetServer(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if !storetest.EqualServers(got, s) {
			t.Fatalf("after reopen:\n got %+v\nwant %+v", got, s)
		}
		if _, err := st.GetPort(ctx, "p1"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := st.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		ms, _ := migrations()
		if n != len(ms) {
			t.Fatalf("schema_migrations has %d rows, want %d", n, len(ms))
		}
		st.Close()
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ingot.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.w.ExecContext(ctx, "INSERT INTO schema_migrations VALUES (9999, 'future', 'x')"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "9999") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

// rawRow reads a server row as text, column by column.
func rawRow(t *testing.T, st *Store, id string) map[string]string {
	t.Helper()
	rows, err := st.r.QueryContext(t.Context(), "SELECT * FROM servers WHERE id = ?", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatalf("no row %s", id)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i, c := range cols {
		out[c] = fmt.Sprint(vals[i])
	}
	return out
}

func TestVersionMismatchLeavesRowUnchanged(t *testing.T) {
	ctx := t.Context()
	st := openTemp(t)
	defer st.Close()
	s := storetest.FullServer("s1")
	if err := st.CreateServer(ctx, s); err != nil {
		t.Fatal(err)
	}
	before := rawRow(t, st, "s1")
	stale := s.Clone()
	stale.Version = 7
	stale.Phase, stale.NodeID, stale.Fault = lifecycle.PhaseError, "", nil
	err := st.SaveServer(ctx, stale, lifecycle.Event{Name: "x"})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("SaveServer at version 7: %v", err)
	}
	after := rawRow(t, st, "s1")
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("row changed:\n%v\n%v", before, after)
	}
	var n int
	st.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM events").Scan(&n)
	if n != 0 {
		t.Fatalf("%d events recorded by a failed save", n)
	}
}

func TestStoredForm(t *testing.T) {
	ctx := t.Context()
	st := openTemp(t)
	defer st.Close()
	s := storetest.FullServer("s1")
	s.Phase = lifecycle.PhaseActive
	s.OpDone = s.OpGen // no operation pending
	if err := st.CreateServer(ctx, s); err != nil {
		t.Fatal(err)
	}
	row := rawRow(t, st, "s1")
	if row["created_at"] != "2026-11-30T12:04:05.123456789Z" {
		t.Errorf("created_at stored as %q, want fixed-width UTC", row["created_at"])
	}
	if row["deadline"] != "2026-11-30T13:04:05.123456789Z" {
		t.Errorf("deadline stored as %q", row["deadline"])
	}
	if row["needs_work"] != "0" { // active and wanted active: no work, though it holds a node
		t.Errorf("needs_work = %s, want 0", row["needs_work"])
	}
	if !strings.Contains(row["attempts"], `"at":"2026-11-30T12:04:06.123456789Z"`) {
		t.Errorf("attempt times not in UTC: %s", row["attempts"])
	}
}

// TestNeedsWorkColumn checks the stored column against NeedsWork() for
// every combination, through create, save and delete.
func TestNeedsWorkColumn(t *testing.T) {
	ctx := t.Context()
	st := openTemp(t)
	defer st.Close()
	phases := []lifecycle.Phase{lifecycle.PhasePending, lifecycle.PhaseActive, lifecycle.PhaseError,
		lifecycle.PhaseDeleting, lifecycle.PhaseDeleted}
	check := func(s *lifecycle.Server) {
		t.Helper()
		got := rawRow(t, st, s.ID)["needs_work"]
		if want := map[bool]string{true: "1", false: "0"}[s.NeedsWork()]; got != want {
			t.Errorf("%s (%s/%s node=%q ports=%v): needs_work=%s, want %s", s.ID, s.Phase, s.Desired,
				s.NodeID, s.PortsAllocated, got, want)
		}
	}
	i := 0
	for _, p := range phases {
		for _, holds := range []bool{false, true} {
			i++
			s := storetest.MinimalServer(fmt.Sprintf("s%d", i), storetest.T0)
			s.Phase = p
			if err := st.CreateServer(ctx, s); err != nil {
				t.Fatal(err)
			}
			check(s)
			s.PortsAllocated = holds
			if err := st.SaveServer(ctx, s); err != nil {
				t.Fatal(err)
			}
			check(s)
			if p != lifecycle.PhaseDeleted {
				if err := st.RequestDelete(ctx, s.ID, "d", storetest.T0); err != nil {
					t.Fatal(err)
				}
				s.Desired = lifecycle.DesiredDeleted
				check(s)
			}
		}
	}
}

func TestQueryPlansUseIndexes(t *testing.T) {
	st := openTemp(t)
	defer st.Close()
	cond := func(status string) string {
		c, ok := codec.StatusCond(status)
		if !ok {
			t.Fatalf("status %s unknown", status)
		}
		return c
	}
	const listFrom = "servers INDEXED BY servers_live_created" // as sqlstore pins ListServers
	const nameFilter = "instr(name, ?) > 0"
	for _, tc := range []struct{ query, index string }{
		{"SELECT " + serverCols + " FROM servers WHERE needs_work = TRUE ORDER BY id", "servers_needs_work"},
		{"SELECT id, version FROM servers INDEXED BY servers_work_shard WHERE needs_work = TRUE AND shard_hash % ? IN (?, ?) ORDER BY id", "servers_work_shard"},
		{"SELECT " + serverCols + " FROM servers WHERE phase = ? AND id > ? ORDER BY id LIMIT ?", "servers_phase_id"},
		{"SELECT " + serverCols + " FROM " + listFrom + " WHERE phase <> 'deleted' AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?", "servers_live_created"},
		{"SELECT " + serverCols + " FROM " + listFrom + " WHERE phase <> 'deleted' AND " + cond("BUILD") + " AND " + nameFilter + " ORDER BY created_at, id LIMIT ?", "servers_live_created"},
		{"SELECT " + serverCols + " FROM " + listFrom + " WHERE phase <> 'deleted' AND " + cond("ACTIVE") + " ORDER BY created_at, id LIMIT ?", "servers_live_created"},
		{"SELECT " + serverCols + " FROM " + listFrom + " WHERE phase <> 'deleted' AND " + cond("DELETED") + " AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?", "servers_live_created"},
		{"SELECT node_id, id FROM servers WHERE node_id <> ''", "servers_node_id"},
	} {
		rows, err := st.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tc.query, "a", "b", "c")
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, tc.index) || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s\n plan: %s\n want index %s and no sort", tc.query, p, tc.index)
		}
	}
}

// TestTwoStoresOneFile: two Stores on one file (as two processes would be)
// write at once; busy_timeout and immediate transactions keep SQLITE_BUSY away.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ingot.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	for i, st := range []*Store{a, b} {
		for g := range 4 {
			wg.Go(func() {
				for n := range 25 {
					id := fmt.Sprintf("s-%d-%d-%d", i, g, n)
					s := storetest.MinimalServer(id, time.Now())
					if err := st.CreateServer(ctx, s); err != nil {
						t.Errorf("CreateServer: %v", err)
						return
					}
					s.Phase = lifecycle.PhaseReserving
					if err := st.SaveServer(ctx, s); err != nil {
						t.Errorf("SaveServer: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	counts, err := a.CountByPhase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[lifecycle.PhaseReserving] != 200 {
		t.Fatalf("counts = %v", counts)
	}
}

func TestOpenRejectsNonFile(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db"} {
		if _, err := Open(context.Background(), p); err == nil {
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

// TestFilesAreOwnerOnly: the database and its -wal and -shm files are 0600
// whatever the umask lets through (they hold user_data), and an existing
// database left readable by others is narrowed.
func TestFilesAreOwnerOnly(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	old := filepath.Join(dir, "old.db")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	for _, path := range []string{fresh, old} {
		st, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.CreateServer(ctx, storetest.MinimalServer("s-"+filepath.Base(path), time.Now())); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want -rw-------", filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
}

func TestOptionalConformance(t *testing.T) {
	storetest.RunOptional(t, func(t *testing.T) store.Store { return openTemp(t) })
}
