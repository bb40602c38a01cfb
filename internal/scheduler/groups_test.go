package scheduler

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// member creates server i in group g (the store records the membership).
func member(t *testing.T, st store.Store, i int, g store.ServerGroup, at time.Time) *lifecycle.Server {
	t.Helper()
	s := server(i)
	s.ProjectID, s.UserID, s.Desired, s.Phase, s.CreatedAt = "p", "u", lifecycle.DesiredActive, lifecycle.PhasePending, at
	s.Spec.Group = &lifecycle.GroupRef{ID: g.ID, Policy: g.Policy}
	if err := st.CreateServer(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGroupAffinity: a host is a compute service (here two, "a" and "b",
// each holding half the nodes), so an affinity group's members go to nodes
// of the host where the placed members are — other nodes, one server per
// node — and the first member goes anywhere.
func TestGroupAffinity(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	g := store.ServerGroup{ID: "g-aff", ProjectID: "p", UserID: "u", Policy: store.PolicyAffinity}
	if err := st.CreateServerGroup(ctx, g, -1); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	hostOf := func(node string) string { return map[bool]string{true: "a", false: "b"}[node < "8"] }
	nodeHost := func(context.Context) (func(string) string, error) { return hostOf, nil }
	inv := newInventory(t, 16)
	sc := New(inv, clock.NewManual(t0), Options{GroupMembers: st.GroupMembers, NodeHost: nodeHost})
	first := member(t, st, 1, g, t0)
	node, err := sc.Pick(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	sc.Taken(node)
	first.NodeID = node
	if err := st.SaveServer(ctx, first); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]bool{}
	for i := 2; i <= 6; i++ {
		m := member(t, st, i, g, t0.Add(time.Duration(i)*time.Second))
		n, err := sc.Pick(ctx, m)
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		if n == node {
			t.Fatalf("member %d got the first member's node %s", i, n)
		}
		sc.Taken(n)
		hosts[hostOf(n)] = true
	}
	if len(hosts) != 1 || !hosts[hostOf(node)] {
		t.Fatalf("members on hosts %v, the first on %s", hosts, hostOf(node))
	}
	// Without NodeHost every node is on one host; without GroupMembers the
	// hint is not enforced.
	for k, opts := range []Options{{GroupMembers: st.GroupMembers}, {}} {
		if _, err := New(newInventory(t, 5), clock.NewManual(t0), opts).Pick(ctx, member(t, st, 10+k, g, t0)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGroupAntiAffinity keeps a member off its peers' nodes, even where
// the inventory still lists one as available (a stale cache).
func TestGroupAntiAffinity(t *testing.T) {
	ctx := context.Background()
	for _, pol := range []string{store.PolicyAntiAffinity, store.PolicySoftAntiAffinity} {
		st := openStore(t)
		g := store.ServerGroup{ID: "g-" + pol, ProjectID: "p", UserID: "u", Policy: pol}
		if err := st.CreateServerGroup(ctx, g, -1); err != nil {
			t.Fatal(err)
		}
		inv := newInventory(t, 2)
		nodes := inv.sim.Nodes()
		base := map[string]int{store.PolicyAntiAffinity: 10, store.PolicySoftAntiAffinity: 20}[pol]
		peer := member(t, st, base, g, time.Unix(1, 0))
		peer.NodeID = nodes[0].UUID
		if err := st.SaveServer(ctx, peer); err != nil {
			t.Fatal(err)
		}
		sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{GroupMembers: st.GroupMembers})
		for i := range 5 {
			s := member(t, st, base+1+i, g, time.Unix(2, 0))
			got, err := sc.Pick(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if got == nodes[0].UUID {
				t.Fatalf("%s: member placed on its peer's node %s", pol, got)
			}
			sc.Release(got, s.ID)
		}
	}
}

// TestNoEnabledComputeService: with every compute service disabled or
// forced down nothing is placed (no_valid_host, no node is waited for),
// and once one is enabled again builds are placed.
func TestNoEnabledComputeService(t *testing.T) {
	ok := false
	sc := New(newInventory(t, 3), clock.NewManual(time.Unix(0, 0)), Options{
		Schedulable: func(context.Context) (bool, error) { return ok, nil }})
	_, err := sc.Pick(context.Background(), server(1))
	var nc *NoCandidateError
	if !errors.As(err, &nc) || nc.Reason != ReasonNoService || nc.Returning != 0 {
		t.Fatalf("all services disabled: %v", err)
	}
	ok = true
	if _, err := sc.Pick(context.Background(), server(1)); err != nil {
		t.Fatalf("service enabled again: %v", err)
	}
	boom := errors.New("database down")
	sc = New(newInventory(t, 1), clock.NewManual(time.Unix(0, 0)), Options{
		Schedulable: func(context.Context) (bool, error) { return false, boom }})
	if _, err := sc.Pick(context.Background(), server(1)); !errors.Is(err, boom) || errors.Is(err, ErrNoCandidate) {
		t.Fatalf("services unreadable: %v, want the error (transient), not no candidate", err)
	}
}

// TestNodesCache: the whole inventory is listed once per Refresh.
func TestNodesCache(t *testing.T) {
	inv := newInventory(t, 4)
	clk := clock.NewManual(time.Unix(0, 0))
	sc := New(inv, clk, Options{Refresh: 30 * time.Second})
	for range 3 {
		nodes, err := sc.Nodes(context.Background())
		if err != nil || len(nodes) != 4 {
			t.Fatalf("nodes %d, %v", len(nodes), err)
		}
	}
	if inv.lists() != 1 {
		t.Fatalf("%d listings for 3 reads, want 1", inv.lists())
	}
	clk.Advance(31 * time.Second)
	if _, err := sc.Nodes(context.Background()); err != nil || inv.lists() != 2 {
		t.Fatalf("after Refresh: %d listings, %v", inv.lists(), err)
	}
}
