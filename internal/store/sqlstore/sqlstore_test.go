package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

func TestRebind(t *testing.T) {
	pg := Dialect{Postgres: true}
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1 FROM t WHERE a = ? AND b IN (?, ?)", "SELECT 1 FROM t WHERE a = $1 AND b IN ($2, $3)"},
		{"SELECT '?' FROM t WHERE a = ?", "SELECT '?' FROM t WHERE a = $1"},
		{"SELECT 1 FROM servers WHERE tags ?& ?::text[] AND tags ?| ?::text[]",
			"SELECT 1 FROM servers WHERE tags ?& $1::text[] AND tags ?| $2::text[]"},
		{"SELECT 1 WHERE id = $1", "SELECT 1 WHERE id = $1"},
	} {
		if got := pg.Rebind(tc.in); got != tc.want {
			t.Errorf("Rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if q := "SELECT ? "; (Dialect{}).Rebind(q) != q {
		t.Errorf("SQLite's Rebind changed %q", q)
	}
}

func TestLoad(t *testing.T) {
	good := fstest.MapFS{"m/0002_b.sql": {Data: []byte("B")}, "m/0001_a.sql": {Data: []byte("A")}}
	ms, err := Load(good, "m", nil)
	if err != nil || len(ms) != 2 || ms[0].Version != 1 || ms[1].Name != "b" || ms[1].SQL != "B" {
		t.Fatalf("Load = %+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"bad name":      {"m/x_a.sql": {}},
		"shared number": {"m/0001_a.sql": {}, "m/1_b.sql": {}},
	} {
		if _, err := Load(fsys, "m", nil); err == nil {
			t.Errorf("%s: Load took it", name)
		}
	}
	if _, err := Load(good, "m", map[int]func(ctx context.Context, tx *sql.Tx, d Dialect) error{3: FillShardHash}); err == nil {
		t.Error("Load took a Go step without its file")
	}
}

// TestInList: an IN list is padded with its last id to a power of two or
// InChunk, so few statement texts serve every count, and keeps every id.
func TestInList(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{0, 0}, {1, 1}, {2, 2}, {3, 4}, {50, 64}, {300, InChunk}, {InChunk, InChunk}, {InChunk + 1, InChunk + 1}} {
		ids := make([]string, tc.n)
		for i := range ids {
			ids[i] = fmt.Sprint("id", i)
		}
		in, args := inList(ids)
		if len(args) != tc.want || (tc.n > 0 && strings.Count(in, "?") != tc.want) || (tc.n == 0 && in != "NULL") {
			t.Errorf("%d ids: %d args, %q", tc.n, len(args), in)
			continue
		}
		for i, a := range args {
			if want := ids[min(i, tc.n-1)]; a != want {
				t.Errorf("%d ids: arg %d is %v, want %s", tc.n, i, a, want)
				break
			}
		}
	}
}

// TestSpecCache: a kept spec is the one its text decodes to, another text
// decodes afresh, a bad text is an error and is not kept, and a full
// cache starts over.
func TestSpecCache(t *testing.T) {
	var c specCache
	var a, b, again lifecycle.Spec
	if err := c.decode(`{"flavor_id":"f1","metadata":{"k":"v"}}`, &a); err != nil || a.FlavorID != "f1" || a.Metadata["k"] != "v" {
		t.Fatalf("decode: %+v %v", a, err)
	}
	if err := c.decode(`{"flavor_id":"f2"}`, &b); err != nil || b.FlavorID != "f2" || b.Metadata != nil {
		t.Fatalf("another text: %+v %v", b, err)
	}
	if err := c.decode(`{"flavor_id":"f1","metadata":{"k":"v"}}`, &again); err != nil || !reflect.DeepEqual(a, again) {
		t.Fatalf("kept: %+v %v", again, err)
	}
	if err := c.decode(`{"flavor_id":`, &b); err == nil || len(c.m) != 2 {
		t.Fatalf("bad text: %v, %d kept", err, len(c.m))
	}
	for i := range keptMax {
		if err := c.decode(fmt.Sprintf(`{"flavor_id":"n%d"}`, i), &b); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) > keptMax {
		t.Fatalf("%d specs kept, at most %d", len(c.m), keptMax)
	}
}

// TestRowCache: a row read again is the server decoded before (the very
// pointer), a row that differs in any column is decoded afresh, and a
// row that does not decode is an error and is not kept.
func TestRowCache(t *testing.T) {
	var c rowCache
	var specs specCache
	row := codec.ServerRow{ID: "s1", Name: "a", Spec: `{"flavor_id":"f1"}`, Desired: "active", Phase: "deploying",
		Ext: "{}", Excluded: "null", Attempts: "null", Requests: "{}", Version: 3}
	first, err := c.server(&row, specs.decode)
	if err != nil || first.Name != "a" || first.Spec.FlavorID != "f1" || first.Version != 3 {
		t.Fatalf("decode: %+v %v", first, err)
	}
	again := row
	if s, err := c.server(&again, specs.decode); err != nil || s != first {
		t.Fatalf("the same row: %p %v, want the kept %p", s, err, first)
	}
	for _, change := range []func(r *codec.ServerRow){
		func(r *codec.ServerRow) { r.Version++ },
		func(r *codec.ServerRow) { r.Phase = "active" },
		func(r *codec.ServerRow) {
			r.Updated = sql.NullString{String: codec.TimeNN(time.Unix(1, 0)), Valid: true}
		},
		func(r *codec.ServerRow) { r.Ext = `{"held":true}` },
	} {
		changed := row
		change(&changed)
		s, err := c.server(&changed, specs.decode)
		if err != nil || s == first {
			t.Fatalf("a changed row %+v: %+v %v, want a fresh decode", changed, s, err)
		}
	}
	bad := row
	bad.Spec = `{"flavor_id":`
	if _, err := c.server(&bad, specs.decode); err == nil {
		t.Fatal("a bad spec decoded")
	}
	if _, kept := c.get(bad); kept {
		t.Fatal("a row that failed to decode was kept")
	}
}
