package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func testCreateGet(t *testing.T, st store.Store) {
	full := FullServer("s-full")
	mustCreate(t, st, full)
	if full.Version != 1 {
		t.Fatalf("after CreateServer, Version = %d, want 1", full.Version)
	}
	requireServer(t, mustGet(t, st, "s-full"), full)

	// Zero times, nil slices and no fault read back as such.
	minimal := MinimalServer("s-min", T0)
	mustCreate(t, st, minimal)
	got := mustGet(t, st, "s-min")
	requireServer(t, got, minimal)
	if got.Fault != nil || !got.Deadline.IsZero() || !got.LaunchedAt.IsZero() || got.Excluded != nil || got.Attempts != nil {
		t.Fatalf("minimal server gained values: %s", dump(got))
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt read back in %v, want UTC", got.CreatedAt.Location())
	}

	wantErr(t, "CreateServer duplicate", st.CreateServer(ctx(t), MinimalServer("s-min", T0)), store.ErrExists)
	// A duplicate id is ErrExists even when its node is held as well.
	dup := FullServer("s-full")
	wantErr(t, "CreateServer duplicate holding a node", st.CreateServer(ctx(t), dup), store.ErrExists)
	_, err := st.GetServer(ctx(t), "nope")
	wantErr(t, "GetServer unknown", err, store.ErrNotFound)
}

// lifecycleStep changes every field SaveServer owns.
func lifecycleStep(s *lifecycle.Server, d time.Duration) {
	s.Phase = lifecycle.PhaseReleasing
	s.NodeID = s.NodeID + "-2"
	s.VolumesStrandedOn = "node-stranded-" + s.ID
	s.InstanceInfoOn = "node-info-" + s.ID
	s.CapacityWaitSince = T0.Add(d + 8)
	s.OpDone++
	s.OpSent = !s.OpSent
	s.OpFallback = !s.OpFallback
	s.StopAfterRebuild = !s.StopAfterRebuild
	s.DeleteFrom = lifecycle.PhaseActive
	s.PowerSeen = lifecycle.PowerOn
	s.DeployRequested = !s.DeployRequested
	s.PortsAllocated = !s.PortsAllocated
	s.VolumesOnNode = !s.VolumesOnNode
	s.VolumesReleased = !s.VolumesReleased
	s.Excluded = append(s.Excluded, "node-z")
	s.Attempts = append(s.Attempts, lifecycle.Attempt{Node: "node-z", Step: lifecycle.StepNetwork,
		Reason: lifecycle.ReasonVIFAttachFailed, Message: "vif", At: T0.Add(d + 1)})
	s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonVIFAttachFailed, Message: "vif on node-z", Node: "node-z",
		Step: lifecycle.StepNetwork, At: T0.Add(d + 2)}
	s.MaintenanceSince = T0.Add(d + 3)
	s.UpdatedAt = T0.Add(d + 4)
	s.PhaseSince = T0.Add(d + 5)
	s.Deadline = T0.Add(d + 6)
	s.LaunchedAt = T0.Add(d + 7)
}

func testSaveRoundTrip(t *testing.T, st store.Store) {
	s := mustCreate(t, st, MinimalServer("s1", T0))
	s.NodeID = "node-1"
	lifecycleStep(s, time.Minute)
	mustSave(t, st, s)
	if s.Version != 2 {
		t.Fatalf("after SaveServer, Version = %d, want 2", s.Version)
	}
	requireServer(t, mustGet(t, st, "s1"), s)

	// Clearing works too: zero times, no fault, empty lists.
	s.Fault, s.Deadline, s.MaintenanceSince, s.NodeID = nil, time.Time{}, time.Time{}, ""
	s.Excluded, s.Attempts = nil, nil
	s.Phase = lifecycle.PhaseError
	mustSave(t, st, s)
	requireServer(t, mustGet(t, st, "s1"), s)
}

// testReadServer: ReadServer shows what GetServer shows, after every kind
// of write (a kept decode never outlives its row), and ErrNotFound alike.
func testReadServer(t *testing.T, st store.Store) {
	read := func(what string, want *lifecycle.Server) {
		t.Helper()
		for range 2 { // the second read is the kept one
			got, err := st.ReadServer(ctx(t), want.ID)
			if err != nil {
				t.Fatalf("%s: ReadServer: %v", what, err)
			}
			if !EqualServers(got, want) {
				t.Fatalf("%s: ReadServer\n got: %s\nwant: %s", what, dump(got), dump(want))
			}
		}
	}
	s := mustCreate(t, st, FullServer("s1"))
	read("created", mustGet(t, st, "s1"))
	s = mustGet(t, st, "s1")
	s.Phase, s.NodeID = lifecycle.PhaseActive, "node-9"
	lifecycleStep(s, time.Minute)
	mustSave(t, st, s)
	read("saved", mustGet(t, st, "s1"))
	if _, err := st.UpdateServer(ctx(t), "s1", nil, func(s *lifecycle.Server) error {
		s.Name, s.Spec.Metadata = "renamed", map[string]string{"k": "v2"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	read("updated", mustGet(t, st, "s1"))
	if err := st.RequestDelete(ctx(t), "s1", "req-del", T0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	read("delete requested", mustGet(t, st, "s1"))
	_, err := st.ReadServer(ctx(t), "nope")
	wantErr(t, "ReadServer unknown", err, store.ErrNotFound)
}

func testCAS(t *testing.T, st store.Store) {
	mustCreate(t, st, MinimalServer("s1", T0))
	a, b := mustGet(t, st, "s1"), mustGet(t, st, "s1")
	a.Phase, a.NodeID = lifecycle.PhaseReserving, "node-a"
	mustSave(t, st, a, lifecycle.Event{RequestID: a.CreateRequestID, Action: lifecycle.ActionCreate, Name: "schedule",
		Node: "node-a", Result: lifecycle.ResultSuccess, Start: T0, Finish: T0})
	saved := mustGet(t, st, "s1")

	b.Phase, b.NodeID = lifecycle.PhaseError, "node-b"
	err := st.SaveServer(ctx(t), b, lifecycle.Event{RequestID: b.CreateRequestID, Action: lifecycle.ActionCreate,
		Name: "lost", Result: lifecycle.ResultError, Start: T0})
	wantErr(t, "SaveServer on a stale version", err, store.ErrConflict)
	if b.Version != 1 {
		t.Errorf("failed SaveServer changed Version to %d", b.Version)
	}
	requireServer(t, mustGet(t, st, "s1"), saved) // row unchanged
	evs, err := st.AllEvents(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Name != "schedule" {
		t.Fatalf("events after a conflict: %+v, want only the committed one", evs)
	}
	if h, _ := st.NodeHolders(ctx(t)); h["node-b"] != "" {
		t.Errorf("conflicting save took node-b: %v", h)
	}

	err = st.SaveServer(ctx(t), MinimalServer("ghost", T0))
	if !isAny(err, store.ErrNotFound, store.ErrConflict) {
		t.Fatalf("SaveServer of an unknown id: %v, want ErrNotFound or ErrConflict", err)
	}
}

func testSaveKeepsAPIFields(t *testing.T, st store.Store) {
	s := mustCreate(t, st, MinimalServer("s1", T0))
	s.Phase = lifecycle.PhaseActive
	mustSave(t, st, s)
	if err := st.RequestDelete(ctx(t), "s1", "req-del", T0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s = mustGet(t, st, "s1")
	want := s.Clone()
	// A buggy worker that resets the API's fields must not undo the delete.
	s.Desired, s.DeleteRequestedAt, s.DeleteRequestID = lifecycle.DesiredActive, time.Time{}, ""
	s.UpdatedAt = T0.Add(2 * time.Minute)
	mustSave(t, st, s)
	got := mustGet(t, st, "s1")
	want.UpdatedAt, want.Version = s.UpdatedAt, s.Version
	requireServer(t, got, want)
	// needs_work follows the stored desired (deleted): active + delete requested needs work.
	if !slices.Contains(ids(mustNeedingWork(t, st)), "s1") {
		t.Fatalf("active server with a delete requested is not in ServersNeedingWork")
	}
}

func testRequestDelete(t *testing.T, st store.Store) {
	s := mustCreate(t, st, MinimalServer("s1", T0))
	s.Phase, s.LaunchedAt = lifecycle.PhaseActive, T0.Add(time.Minute)
	mustSave(t, st, s) // v2, stable: needs no work
	if slices.Contains(ids(mustNeedingWork(t, st)), "s1") {
		t.Fatal("active server needs work before delete")
	}
	at := T0.Add(time.Hour)
	if err := st.RequestDelete(ctx(t), "s1", "req-del", at); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, st, "s1")
	if got.Desired != lifecycle.DesiredDeleted || !got.DeleteRequestedAt.Equal(at) || got.DeleteRequestID != "req-del" {
		t.Fatalf("after RequestDelete: %s", dump(got))
	}
	if got.Version != 3 {
		t.Fatalf("RequestDelete left version %d, want 3", got.Version)
	}
	if got.Phase != lifecycle.PhaseActive || !got.LaunchedAt.Equal(s.LaunchedAt) {
		t.Fatalf("RequestDelete changed lifecycle fields: %s", dump(got))
	}
	if !slices.Contains(ids(mustNeedingWork(t, st)), "s1") {
		t.Fatal("server with a delete requested is not in ServersNeedingWork")
	}

	// Idempotent: nothing changes on a repeat, even with another request id.
	if err := st.RequestDelete(ctx(t), "s1", "req-del-2", at.Add(time.Hour)); err != nil {
		t.Fatalf("repeated RequestDelete: %v", err)
	}
	requireServer(t, mustGet(t, st, "s1"), got)
	acts, err := st.Actions(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 2 || acts[0].Action != lifecycle.ActionDelete || acts[0].RequestID != "req-del" ||
		!acts[0].StartTime.Equal(at) || acts[0].ProjectID != "project" || acts[0].UserID != "user" {
		t.Fatalf("actions after two deletes: %+v", acts)
	}

	wantErr(t, "RequestDelete unknown", st.RequestDelete(ctx(t), "nope", "r", at), store.ErrNotFound)
	got.Phase = lifecycle.PhaseDeleted
	mustSave(t, st, got)
	wantErr(t, "RequestDelete of a deleted server", st.RequestDelete(ctx(t), "s1", "r", at), store.ErrNotFound)
}

// testDeleteWins: a worker read the server, the user deletes, the worker's
// write based on what it read must fail (I2).
func testDeleteWins(t *testing.T, st store.Store) {
	mustCreate(t, st, MinimalServer("s1", T0))
	worker := mustGet(t, st, "s1")
	if err := st.RequestDelete(ctx(t), "s1", "req-del", T0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	worker.Phase, worker.NodeID = lifecycle.PhaseReserving, "node-1"
	wantErr(t, "in-flight SaveServer after a delete", st.SaveServer(ctx(t), worker), store.ErrConflict)
	got := mustGet(t, st, "s1")
	if got.Phase != lifecycle.PhasePending || got.NodeID != "" || got.Desired != lifecycle.DesiredDeleted {
		t.Fatalf("delete did not win: %s", dump(got))
	}
}

func testNodeTaken(t *testing.T, st store.Store) {
	a := mustCreate(t, st, MinimalServer("a", T0))
	b := mustCreate(t, st, MinimalServer("b", T0))
	a.Phase, a.NodeID = lifecycle.PhaseReserving, "node-1"
	mustSave(t, st, a)
	before := mustGet(t, st, "b")
	b.Phase, b.NodeID = lifecycle.PhaseReserving, "node-1"
	wantErr(t, "second server on node-1", st.SaveServer(ctx(t), b), store.ErrNodeTaken)
	if b.Version != before.Version {
		t.Errorf("failed SaveServer changed Version to %d", b.Version)
	}
	requireServer(t, mustGet(t, st, "b"), before)
	wantErr(t, "CreateServer on a held node", st.CreateServer(ctx(t), &lifecycle.Server{ID: "c",
		Desired: lifecycle.DesiredActive, Phase: lifecycle.PhaseReserving, NodeID: "node-1", CreatedAt: T0}), store.ErrNodeTaken)
	if _, err := st.GetServer(ctx(t), "c"); err == nil {
		t.Error("server c exists after a failed create")
	}

	// Many servers may hold no node.
	b.NodeID = ""
	mustSave(t, st, b)
	// A deleted server still holding its node keeps it (cleanup pending).
	a.Phase = lifecycle.PhaseDeleted
	mustSave(t, st, a)
	b.NodeID = "node-1"
	wantErr(t, "node held by a deleted server", st.SaveServer(ctx(t), b), store.ErrNodeTaken)
	h, err := st.NodeHolders(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h["node-1"] != "a" {
		t.Fatalf("NodeHolders = %v", h)
	}
	// Once released, the node is free.
	a.NodeID = ""
	mustSave(t, st, a)
	mustSave(t, st, b)
	if h, _ := st.NodeHolders(ctx(t)); len(h) != 1 || h["node-1"] != "b" {
		t.Fatalf("NodeHolders after the move = %v", h)
	}
}

func mustNeedingWork(t *testing.T, st store.Store) []*lifecycle.Server {
	t.Helper()
	ss, err := st.ServersNeedingWork(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

var allPhases = []lifecycle.Phase{lifecycle.PhasePending, lifecycle.PhaseReserving, lifecycle.PhaseNetworking,
	lifecycle.PhaseVolumes, lifecycle.PhaseDeploying, lifecycle.PhaseActive, lifecycle.PhaseReleasing, lifecycle.PhaseError,
	lifecycle.PhaseDeleting, lifecycle.PhaseDeleted,
	lifecycle.PhaseStopped, lifecycle.PhaseRescued, lifecycle.PhaseRebooting, lifecycle.PhasePoweringOff,
	lifecycle.PhasePoweringOn, lifecycle.PhaseRebuilding, lifecycle.PhaseRescuing, lifecycle.PhaseUnrescuing}

// combos returns one server per (phase, desired, holds) combination.
func combos() []*lifecycle.Server {
	var out []*lifecycle.Server
	i := 0
	for _, p := range allPhases {
		for _, d := range []lifecycle.Desired{lifecycle.DesiredActive, lifecycle.DesiredDeleted} {
			for _, holds := range []string{"", "node", "ports"} {
				i++
				s := MinimalServer(fmt.Sprintf("c-%s-%s-%s", p, d, holds), T0.Add(time.Duration(i)*time.Millisecond))
				s.Phase, s.Desired = p, d
				switch holds {
				case "node":
					s.NodeID = "node-" + s.ID
				case "ports":
					s.PortsAllocated = true
				}
				out = append(out, s)
			}
		}
	}
	return out
}

func testNeedsWork(t *testing.T, st store.Store) {
	all := combos()
	check := func(when string) {
		t.Helper()
		var want []string
		for _, s := range all {
			if s.NeedsWork() {
				want = append(want, s.ID)
			}
		}
		got := ids(mustNeedingWork(t, st))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: ServersNeedingWork = %v, want %v", when, got, want)
		}
	}
	for _, s := range all {
		mustCreate(t, st, s)
	}
	check("after create")
	// Move every server one phase on and drop what it holds; deletes for the active ones.
	for i, s := range all {
		s.Phase = allPhases[(i+1)%len(allPhases)]
		s.NodeID, s.PortsAllocated = "", i%2 == 0
		mustSave(t, st, s)
		if s.Desired == lifecycle.DesiredActive && s.Phase != lifecycle.PhaseDeleted && i%3 == 0 {
			if err := st.RequestDelete(ctx(t), s.ID, "del", T0); err != nil {
				t.Fatal(err)
			}
			s.Desired = lifecycle.DesiredDeleted
		}
	}
	check("after saves and deletes")
}

func testServersInPhase(t *testing.T, st store.Store) {
	for i := range 25 {
		mustCreate(t, st, MinimalServer(fmt.Sprintf("p-%02d", 24-i), T0)) // created in reverse id order
	}
	for i := range 5 {
		s := mustCreate(t, st, MinimalServer(fmt.Sprintf("a-%02d", i), T0))
		s.Phase = lifecycle.PhaseActive
		mustSave(t, st, s)
	}
	var got []string
	after := ""
	for range 10 {
		page, err := st.ServersInPhase(ctx(t), lifecycle.PhasePending, after, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 10 {
			t.Fatalf("page of %d > limit 10", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, s := range page {
			if s.Phase != lifecycle.PhasePending {
				t.Fatalf("ServersInPhase(pending) returned %s in %s", s.ID, s.Phase)
			}
		}
		got = append(got, ids(page)...)
		after = page[len(page)-1].ID
	}
	want := make([]string, 25)
	for i := range want {
		want[i] = fmt.Sprintf("p-%02d", i)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged ServersInPhase = %v, want %v", got, want)
	}
	counts, err := st.CountByPhase(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if counts[lifecycle.PhasePending] != 25 || counts[lifecycle.PhaseActive] != 5 || counts[lifecycle.PhaseError] != 0 {
		t.Fatalf("CountByPhase = %v", counts)
	}
}

func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

func testUpdateServer(t *testing.T, st store.Store) {
	s := mustCreate(t, st, MinimalServer("s1", T0))
	s.Phase = lifecycle.PhaseActive
	mustSave(t, st, s) // v2, stable
	act := &store.ActionRecord{RequestID: "req-reboot", Action: string(lifecycle.OpReboot), StartTime: T0.Add(time.Minute)}
	got, err := st.UpdateServer(ctx(t), "s1", act, func(s *lifecycle.Server) error {
		s.Name = "renamed"
		s.Spec.Metadata = map[string]string{"a": "b"}
		s.Op = lifecycle.Op{Kind: lifecycle.OpReboot, Hard: true, RequestID: "req-reboot", At: T0.Add(time.Minute)}
		s.OpGen++
		s.Lock = lifecycle.Lock{Locked: true, By: "owner"}
		s.UpdatedAt = T0.Add(time.Minute)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 3 {
		t.Errorf("version = %d, want 3", got.Version)
	}
	stored := mustGet(t, st, "s1")
	requireServer(t, stored, got)
	if !stored.OpPending() || stored.Name != "renamed" || !stored.Lock.Locked {
		t.Fatalf("update not stored: %+v", stored)
	}
	// A stable server with an operation pending needs work.
	if !slices.Contains(ids(mustNeedingWork(t, st)), "s1") {
		t.Fatal("active server with a pending operation is not in ServersNeedingWork")
	}
	acts, err := st.Actions(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) == 0 || acts[0].RequestID != "req-reboot" || acts[0].Action != "reboot" || acts[0].ProjectID != "project" {
		t.Errorf("actions = %+v", acts)
	}
	// A reconciler save from before the update conflicts (it decides again).
	s.Phase = lifecycle.PhaseRebooting
	wantErr(t, "SaveServer after UpdateServer", st.SaveServer(ctx(t), s), store.ErrConflict)
	// SaveServer never writes what the API owns.
	fresh := mustGet(t, st, "s1")
	fresh.Name, fresh.Op, fresh.OpGen, fresh.Lock = "worker", lifecycle.Op{}, 0, lifecycle.Lock{}
	fresh.OpDone = 1
	mustSave(t, st, fresh)
	after := mustGet(t, st, "s1")
	if after.Name != "renamed" || after.OpGen != 1 || after.Op.Kind != lifecycle.OpReboot || !after.Lock.Locked || after.OpDone != 1 {
		t.Errorf("SaveServer clobbered the API's fields or lost its own: %+v", after)
	}
	if slices.Contains(ids(mustNeedingWork(t, st)), "s1") {
		t.Error("operation done, server still needs work")
	}
	// An error from mutate writes nothing.
	boom := errors.New("refused")
	_, err = st.UpdateServer(ctx(t), "s1", act, func(s *lifecycle.Server) error { s.Name = "x"; return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the mutate error", err)
	}
	requireServer(t, mustGet(t, st, "s1"), after)
	_, err = st.UpdateServer(ctx(t), "nope", nil, func(*lifecycle.Server) error { return nil })
	wantErr(t, "UpdateServer unknown", err, store.ErrNotFound)
}
