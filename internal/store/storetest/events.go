package storetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func utcEvents(evs []lifecycle.Event) []lifecycle.Event {
	out := slices.Clone(evs)
	for i := range out {
		out[i].Start, out[i].Finish = out[i].Start.UTC(), out[i].Finish.UTC()
	}
	return out
}

func requireEvents(t *testing.T, what string, got []lifecycle.Event, err error, want []lifecycle.Event) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(utcEvents(got), utcEvents(want)) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func testEventsActions(t *testing.T, st store.Store) {
	s := mustCreate(t, st, MinimalServer("s1", T0))
	acts, err := st.Actions(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	wantCreate := store.ActionRecord{ServerID: "s1", RequestID: s.CreateRequestID, Action: lifecycle.ActionCreate,
		StartTime: T0.UTC(), ProjectID: "project", UserID: "user"}
	if len(acts) != 1 || !sameAction(acts[0], wantCreate) {
		t.Fatalf("Actions after create = %+v, want [%+v]", acts, wantCreate)
	}
	evs, err := st.Events(ctx(t), "s1", s.CreateRequestID)
	requireEvents(t, "Events before any", evs, err, nil)

	e1 := lifecycle.Event{RequestID: s.CreateRequestID, Action: lifecycle.ActionCreate, Name: "schedule",
		Node: "node-1", Result: lifecycle.ResultSuccess, Details: "picked node-1",
		Start: T0.Add(time.Nanosecond), Finish: T0.Add(2 * time.Nanosecond)}
	e2 := lifecycle.Event{ServerID: "s1", RequestID: s.CreateRequestID, Action: lifecycle.ActionCreate,
		Name: "reserve_node", Node: "node-1", Start: T0.Add(time.Second)} // in progress: no result, no finish
	s.Phase, s.NodeID = lifecycle.PhaseReserving, "node-1"
	mustSave(t, st, s, e1, e2)
	e1.ServerID = "s1" // filled from the server

	evs, err = st.Events(ctx(t), "s1", s.CreateRequestID)
	requireEvents(t, "Events of create", evs, err, []lifecycle.Event{e1, e2})

	del := T0.Add(time.Hour)
	if err := st.RequestDelete(ctx(t), "s1", "req-del", del); err != nil {
		t.Fatal(err)
	}
	evs, err = st.Events(ctx(t), "s1", "req-del")
	requireEvents(t, "Events of a fresh delete", evs, err, nil)
	s = mustGet(t, st, "s1")
	e3 := lifecycle.Event{ServerID: "s1", RequestID: "req-del", Action: lifecycle.ActionDelete, Name: "release",
		Node: "node-1", Result: lifecycle.ResultError, Details: "ironic said no", Start: del, Finish: del.Add(time.Millisecond)}
	s.Phase, s.NodeID = lifecycle.PhaseDeleted, ""
	mustSave(t, st, s, e3)

	evs, err = st.Events(ctx(t), "s1", "req-del")
	requireEvents(t, "Events of delete", evs, err, []lifecycle.Event{e3})
	evs, err = st.AllEvents(ctx(t), "s1")
	requireEvents(t, "AllEvents", evs, err, []lifecycle.Event{e1, e2, e3})

	// Newest first, and still there once the server is deleted.
	acts, err = st.Actions(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	wantDel := store.ActionRecord{ServerID: "s1", RequestID: "req-del", Action: lifecycle.ActionDelete,
		StartTime: del, ProjectID: "project", UserID: "user"}
	if len(acts) != 2 || !sameAction(acts[0], wantDel) || !sameAction(acts[1], wantCreate) {
		t.Fatalf("Actions = %+v", acts)
	}

	_, err = st.Actions(ctx(t), "nope")
	wantErr(t, "Actions of an unknown server", err, store.ErrNotFound)
	_, err = st.AllEvents(ctx(t), "nope")
	wantErr(t, "AllEvents of an unknown server", err, store.ErrNotFound)
	_, err = st.Events(ctx(t), "s1", "no-such-request")
	wantErr(t, "Events of an unknown action", err, store.ErrNotFound)

	// A server with no events yet has an empty history, not an error.
	mustCreate(t, st, MinimalServer("s2", T0))
	evs, err = st.AllEvents(ctx(t), "s2")
	requireEvents(t, "AllEvents of a new server", evs, err, nil)
}

func sameAction(a, b store.ActionRecord) bool {
	if !a.StartTime.Equal(b.StartTime) {
		return false
	}
	a.StartTime, b.StartTime = time.Time{}, time.Time{}
	return a == b
}
