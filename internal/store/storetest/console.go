package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// testConsoleQueries: CountServers counts live servers by desired state
// and phase, per project or over all; RecentFaults lists the live servers
// with a fault or a failed attempt, newest update first, per project.
func testConsoleQueries(t *testing.T, st store.Store) {
	at := func(i int) time.Time { return T0.Add(time.Duration(i) * time.Minute) }
	mk := func(id, project string, phase lifecycle.Phase, updated int, mutate func(*lifecycle.Server)) {
		s := mustCreate(t, st, projectServer(id, project, 1, 1, "rc"))
		s.Phase, s.UpdatedAt = phase, at(updated)
		if mutate != nil {
			mutate(s)
		}
		mustSave(t, st, s)
	}
	fault := func(r lifecycle.Reason) func(*lifecycle.Server) {
		return func(s *lifecycle.Server) { s.Fault = &lifecycle.Fault{Reason: r, Message: "m", At: T0} }
	}
	attempt := func(s *lifecycle.Server) {
		s.Attempts = []lifecycle.Attempt{{Node: "n1", Step: lifecycle.StepDeploy, Reason: lifecycle.ReasonNodeDeleted, At: T0}}
	}
	mk("a-active", "a", lifecycle.PhaseActive, 1, nil)
	mk("a-rescheduled", "a", lifecycle.PhaseActive, 2, attempt)
	mk("a-error", "a", lifecycle.PhaseError, 3, fault(lifecycle.ReasonNoValidHost))
	mk("a-building", "a", lifecycle.PhaseDeploying, 4, nil)
	mk("a-gone", "a", lifecycle.PhaseDeleted, 9, fault(lifecycle.ReasonDeployFailed))
	mk("b-error", "b", lifecycle.PhaseError, 5, fault(lifecycle.ReasonBuildTimeout))
	mustCreate(t, st, projectServer("b-deleting", "b", 1, 1, "rc"))
	if err := st.RequestDelete(ctx(t), "b-deleting", "req-del", T0); err != nil {
		t.Fatal(err)
	}

	count := func(project string) map[string]int {
		t.Helper()
		got, err := st.CountServers(ctx(t), project)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, c := range got {
			out[string(c.Desired)+"/"+string(c.Phase)] += c.N
		}
		return out
	}
	if got, want := count("a"), map[string]int{"active/active": 2, "active/error": 1, "active/deploying": 1}; !mapsEqual(got, want) {
		t.Errorf("CountServers(a) = %v, want %v (deleted servers are not counted)", got, want)
	}
	if got, want := count(""), map[string]int{"active/active": 2, "active/error": 2, "active/deploying": 1, "deleted/pending": 1}; !mapsEqual(got, want) {
		t.Errorf("CountServers(all) = %v, want %v", got, want)
	}

	recent := func(project string, limit int) []string {
		t.Helper()
		got, err := st.RecentFaults(ctx(t), project, limit)
		if err != nil {
			t.Fatal(err)
		}
		return ids(got)
	}
	if got, want := recent("", 10), []string{"b-error", "a-error", "a-rescheduled"}; !slices.Equal(got, want) {
		t.Errorf("RecentFaults(all) = %v, want %v", got, want)
	}
	if got, want := recent("a", 10), []string{"a-error", "a-rescheduled"}; !slices.Equal(got, want) {
		t.Errorf("RecentFaults(a) = %v, want %v", got, want)
	}
	if got, want := recent("", 1), []string{"b-error"}; !slices.Equal(got, want) {
		t.Errorf("RecentFaults(all, 1) = %v, want %v", got, want)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
