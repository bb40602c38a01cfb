package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func mustList(t *testing.T, st store.Store, opts store.ListOptions) []*lifecycle.Server {
	t.Helper()
	ss, err := st.ListServers(ctx(t), opts)
	if err != nil {
		t.Fatalf("ListServers(%+v): %v", opts, err)
	}
	return ss
}

// listAll pages through ListServers with the given page size.
func listAll(t *testing.T, st store.Store, opts store.ListOptions, page int) []string {
	t.Helper()
	opts.Limit = page
	var out []string
	for range 10000 {
		ss := mustList(t, st, opts)
		if len(ss) > page {
			t.Fatalf("page of %d rows > limit %d", len(ss), page)
		}
		out = append(out, ids(ss)...)
		if len(ss) < page {
			return out
		}
		opts.Marker = ss[len(ss)-1].ID
	}
	t.Fatal("paging does not end")
	return nil
}

func testListPaging(t *testing.T, st store.Store) {
	// 30 servers, three per creation instant, ids not in creation order,
	// every fifth deleted.
	type key struct {
		at time.Time
		id string
	}
	var want []key
	for i := range 30 {
		id := fmt.Sprintf("srv-%02d", (i*7)%30)
		at := T0.Add(time.Duration(i/3) * time.Millisecond)
		s := mustCreate(t, st, MinimalServer(id, at))
		if i%5 == 0 {
			s.Phase = lifecycle.PhaseDeleted
			mustSave(t, st, s)
			continue
		}
		want = append(want, key{at, id})
	}
	slices.SortFunc(want, func(a, b key) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	wantIDs := make([]string, len(want))
	for i, k := range want {
		wantIDs[i] = k.id
	}
	for _, page := range []int{1, 4, 7, 24, 1000} {
		if got := listAll(t, st, store.ListOptions{}, page); !slices.Equal(got, wantIDs) {
			t.Fatalf("pages of %d: %v\nwant %v", page, got, wantIDs)
		}
	}
	if got := ids(mustList(t, st, store.ListOptions{})); !slices.Equal(got, wantIDs) {
		t.Fatalf("one default page: %v, want %v", got, wantIDs)
	}
	_, err := st.ListServers(ctx(t), store.ListOptions{Marker: "nope"})
	wantErr(t, "ListServers with an unknown marker", err, store.ErrNotFound)
}

func testListLimit(t *testing.T, st store.Store) {
	const n = 1005
	for i := range n {
		mustCreate(t, st, MinimalServer(fmt.Sprintf("s-%04d", i), T0.Add(time.Duration(i)*time.Microsecond)))
	}
	for _, limit := range []int{0, -1, 1001, 5000} {
		if got := len(mustList(t, st, store.ListOptions{Limit: limit})); got != 1000 {
			t.Errorf("Limit %d: %d rows, want 1000", limit, got)
		}
	}
	rest := mustList(t, st, store.ListOptions{Marker: "s-0999", Limit: 1000})
	if len(rest) != 5 || rest[0].ID != "s-1000" {
		t.Fatalf("after s-0999: %v", ids(rest))
	}
}

func testListName(t *testing.T, st store.Store) {
	names := map[string]string{"1": "web-1", "2": "web-2", "3": "db-1", "4": "WEB-3", "5": "a%b", "6": "a_b", "7": "axb"}
	for id, name := range names {
		s := MinimalServer(id, T0)
		s.Name = name
		mustCreate(t, st, s)
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"web", []string{"1", "2"}},
		{"-1", []string{"1", "3"}},
		{"%", []string{"5"}},
		{"_", []string{"6"}},
		{"a", []string{"5", "6", "7"}},
		{"zzz", nil},
		{"", []string{"1", "2", "3", "4", "5", "6", "7"}},
	} {
		got := ids(mustList(t, st, store.ListOptions{Name: tc.name}))
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Name %q: %v, want %v", tc.name, got, tc.want)
		}
	}
}
