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

// withOps adds, to every built server at rest, one copy per pending
// day-2 operation (their status is the operation's, e.g. REBOOT).
func withOps(all []*lifecycle.Server) []*lifecycle.Server {
	out := slices.Clone(all)
	for _, s := range all {
		if !s.Phase.Up() || s.Desired != lifecycle.DesiredActive {
			continue
		}
		for _, k := range []lifecycle.OpKind{lifecycle.OpReboot, lifecycle.OpStop, lifecycle.OpStart,
			lifecycle.OpRebuild, lifecycle.OpRescue, lifecycle.OpUnrescue} {
			for _, hard := range []bool{false, true} {
				c := s.Clone()
				c.ID = fmt.Sprintf("%s-op-%s-%v", s.ID, k, hard)
				if c.NodeID != "" {
					c.NodeID = "node-" + c.ID // one server per node (I4)
				}
				c.Op, c.OpGen = lifecycle.Op{Kind: k, Hard: hard, RequestID: "req-" + c.ID, At: T0}, 1
				out = append(out, c)
			}
		}
	}
	return out
}

// testListStatus: Status keeps every server showing that status, and only
// servers in a phase that can show it (the caller refines the rest).
func testListStatus(t *testing.T, st store.Store) {
	all := withOps(combos())
	byID := map[string]*lifecycle.Server{}
	for _, s := range all {
		mustCreate(t, st, s)
		byID[s.ID] = s
	}
	for _, status := range []string{"BUILD", "ACTIVE", "SHUTOFF", "REBOOT", "HARD_REBOOT", "REBUILD", "RESCUE", "ERROR"} {
		var want []string
		for _, s := range all {
			if s.Phase != lifecycle.PhaseDeleted && lifecycle.Nova(s).Status == status {
				want = append(want, s.ID)
			}
		}
		if len(want) == 0 {
			t.Fatalf("no server shows %s: the fixture is wrong", status)
		}
		for _, asked := range []string{status, strings.ToLower(status)} {
			got := ids(mustList(t, st, store.ListOptions{Status: asked}))
			for _, id := range want {
				if !slices.Contains(got, id) {
					t.Errorf("Status %q: %s (%s) is missing", asked, id, byID[id].Phase)
				}
			}
			for _, id := range got {
				s := byID[id]
				if s.Phase == lifecycle.PhaseDeleted {
					t.Errorf("Status %q lists deleted %s", asked, id)
				}
				if !slices.Contains(store.StatusPhases(status), s.Phase) {
					t.Errorf("Status %q lists %s (desired %s, phase %s), not in %v", asked, id, s.Desired, s.Phase, store.StatusPhases(status))
				}
			}
		}
		n := len(mustList(t, st, store.ListOptions{Status: status}))
		if got := listAll(t, st, store.ListOptions{Status: status}, 3); len(got) != n {
			t.Errorf("Status %s paged by 3: %d rows, want %d", status, len(got), n)
		}
	}
	// A delete under way shows the status the server had; DELETED is
	// shown only once gone, so only listings of deleted servers have it.
	if got := mustList(t, st, store.ListOptions{Status: "DELETED"}); len(got) != 0 {
		t.Errorf("Status DELETED: %v, want none", ids(got))
	}
	if got := mustList(t, st, store.ListOptions{Status: "SOFT_DELETED"}); len(got) != 0 {
		t.Errorf("Status SOFT_DELETED: %v, want none", ids(got))
	}
	got := ids(mustList(t, st, store.ListOptions{Status: "ERROR", Name: "holds-nothing"}))
	if len(got) != 0 {
		t.Errorf("Status ERROR and a name nobody has: %v", got)
	}
}

func testListTags(t *testing.T, st store.Store) {
	tags := map[string][]string{"a": {"red"}, "b": {"red", "blue"}, "c": {"blue", "green"}, "d": nil, "e": {"red,blue"}}
	for id, tt := range tags {
		s := MinimalServer(id, T0)
		s.Spec.Tags = tt
		mustCreate(t, st, s)
	}
	del := MinimalServer("z", T0)
	del.Spec.Tags = []string{"red"}
	del.Phase = lifecycle.PhaseDeleted
	mustCreate(t, st, del)
	for _, tc := range []struct {
		opts store.ListOptions
		want []string
	}{
		{store.ListOptions{Tags: []string{"red"}}, []string{"a", "b"}},
		{store.ListOptions{Tags: []string{"red", "blue"}}, []string{"b"}},
		{store.ListOptions{TagsAny: []string{"red", "green"}}, []string{"a", "b", "c"}},
		{store.ListOptions{NotTags: []string{"red", "blue"}}, []string{"a", "c", "d", "e"}},
		{store.ListOptions{NotTagsAny: []string{"red", "green"}}, []string{"d", "e"}},
		{store.ListOptions{Tags: []string{"blue"}, NotTagsAny: []string{"green"}}, []string{"b"}},
		{store.ListOptions{Tags: []string{"red,blue"}}, []string{"e"}},
		{store.ListOptions{Tags: []string{"re"}}, nil},
		{store.ListOptions{Tags: []string{"red"}, IncludeDeleted: true}, []string{"a", "b", "z"}},
	} {
		got := ids(mustList(t, st, tc.opts))
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.opts, got, tc.want)
		}
	}
	if got := mustGet(t, st, "b").Spec.Tags; !slices.Equal(got, []string{"red", "blue"}) {
		t.Errorf("tags read back %v", got)
	}
}

// testListChanges: ChangesSince/ChangesBefore bound UpdatedAt (both ends
// included); IncludeDeleted adds deleted servers, which page like the rest.
func testListChanges(t *testing.T, st store.Store) {
	at := func(i int) time.Time { return T0.Add(time.Duration(i) * time.Minute) }
	for i := range 6 {
		s := MinimalServer(fmt.Sprintf("s%d", i), T0)
		s.UpdatedAt = at(i)
		if i%2 == 1 {
			s.Phase = lifecycle.PhaseDeleted
		}
		mustCreate(t, st, s)
	}
	for _, tc := range []struct {
		opts store.ListOptions
		want []string
	}{
		{store.ListOptions{ChangesSince: at(2)}, []string{"s2", "s4"}},
		{store.ListOptions{ChangesSince: at(2), IncludeDeleted: true}, []string{"s2", "s3", "s4", "s5"}},
		{store.ListOptions{ChangesBefore: at(3), IncludeDeleted: true}, []string{"s0", "s1", "s2", "s3"}},
		{store.ListOptions{ChangesSince: at(1), ChangesBefore: at(3), IncludeDeleted: true}, []string{"s1", "s2", "s3"}},
		{store.ListOptions{ChangesSince: at(1).Add(time.Nanosecond), IncludeDeleted: true}, []string{"s2", "s3", "s4", "s5"}},
		{store.ListOptions{IncludeDeleted: true, Status: "DELETED"}, []string{"s1", "s3", "s5"}},
	} {
		got := ids(mustList(t, st, tc.opts))
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.opts, got, tc.want)
		}
	}
	if got := listAll(t, st, store.ListOptions{IncludeDeleted: true}, 2); len(got) != 6 {
		t.Errorf("IncludeDeleted paged by 2: %v", got)
	}
}

// testListSort: every field, both directions, several keys, paged by
// Marker in that order; the id breaks ties.
func testListSort(t *testing.T, st store.Store) {
	var all []*lifecycle.Server
	for i := range 12 {
		s := MinimalServer(fmt.Sprintf("id-%02d", (i*5)%12), T0.Add(time.Duration(i%4)*time.Second))
		s.Name = fmt.Sprintf("n-%d", i%3)
		s.ProjectID = fmt.Sprintf("p-%d", i%2)
		s.UserID = fmt.Sprintf("u-%d", (i+1)%3)
		s.UpdatedAt = T0.Add(time.Duration(11-i) * time.Second)
		if i%3 != 0 {
			s.LaunchedAt = T0.Add(time.Duration(i%5) * time.Minute)
			s.NodeID = fmt.Sprintf("node-%02d", (i*7)%12)
		}
		all = append(all, mustCreate(t, st, s))
	}
	field := func(s *lifecycle.Server, f store.SortField) string {
		switch f {
		case store.SortCreatedAt:
			return s.CreatedAt.UTC().Format(time.RFC3339Nano)
		case store.SortUpdatedAt:
			return s.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000000000")
		case store.SortLaunchedAt:
			if s.LaunchedAt.IsZero() {
				return ""
			}
			return s.LaunchedAt.UTC().Format("2006-01-02T15:04:05.000000000")
		case store.SortName:
			return s.Name
		case store.SortID:
			return s.ID
		case store.SortProjectID:
			return s.ProjectID
		case store.SortUserID:
			return s.UserID
		}
		return s.NodeID
	}
	orders := [][]store.SortKey{
		{{Field: store.SortName}},
		{{Field: store.SortName, Desc: true}},
		{{Field: store.SortCreatedAt, Desc: true}},
		{{Field: store.SortUpdatedAt}},
		{{Field: store.SortLaunchedAt, Desc: true}, {Field: store.SortName}},
		{{Field: store.SortProjectID}, {Field: store.SortUserID, Desc: true}, {Field: store.SortName}},
		{{Field: store.SortNodeID}},
		{{Field: store.SortID, Desc: true}},
	}
	for _, sort := range orders {
		keys := slices.Clone(sort)
		if !slices.ContainsFunc(keys, func(k store.SortKey) bool { return k.Field == store.SortID }) {
			keys = append(keys, store.SortKey{Field: store.SortID, Desc: keys[len(keys)-1].Desc})
		}
		want := slices.Clone(all)
		slices.SortFunc(want, func(a, b *lifecycle.Server) int {
			for _, k := range keys {
				c := strings.Compare(field(a, k.Field), field(b, k.Field))
				if k.Desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
		for _, page := range []int{1, 5, 100} {
			if got := listAll(t, st, store.ListOptions{Sort: sort}, page); !slices.Equal(got, ids(want)) {
				t.Errorf("sort %v, pages of %d: %v\nwant %v", sort, page, got, ids(want))
			}
		}
	}
	if _, err := st.ListServers(ctx(t), store.ListOptions{Sort: []store.SortKey{{Field: "vm_state"}}}); err == nil {
		t.Error("an unknown sort field is accepted")
	}
}
