package backend

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ingot-dev/ingot/internal/pgtest"
)

// The PostgreSQL backup the README documents: pg_dump --format=custom,
// then pg_restore into an empty database, which then serves every server
// (and its schema is current: nothing to migrate).
func TestPgDumpRestore(t *testing.T) {
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	src := pgtest.DSN(t)
	st := open(t, src)
	populate(t, st, 20)
	want := readAll(t, st)
	dump := filepath.Join(t.TempDir(), "ingot.dump")
	if out, err := exec.CommandContext(t.Context(), "pg_dump", "--format=custom", "--file="+dump, src).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	dst := pgtest.DSN(t)
	if out, err := exec.CommandContext(t.Context(), "pg_restore", "--no-owner", "--dbname="+dst, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	if s, err := Inspect(t.Context(), dst); err != nil || len(s.Pending) != 0 {
		t.Fatalf("restored schema: %+v %v", s, err)
	}
	got := readAll(t, open(t, dst))
	if len(got) != len(want) {
		t.Fatalf("restored %d servers of %d", len(got), len(want))
	}
	for id, s := range want {
		gj, _ := json.Marshal(got[id])
		wj, _ := json.Marshal(s)
		if string(gj) != string(wj) {
			t.Errorf("restored %s:\n%s\nwant\n%s", id, gj, wj)
		}
	}
}
