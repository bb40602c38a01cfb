package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// TestEventsReadAsNova: a step recorded as a start and later an outcome is
// one event with start, finish and result (as Nova's event rows are), a
// step still running keeps finish and result null, and an action with a
// failed event carries the message "Error", as `openstack server event
// list` shows it for Nova.
func TestEventsReadAsNova(t *testing.T) {
	f := newFixture(t)
	id := f.create("ev1")
	ctx := context.Background()
	sv, err := f.store.GetServer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	req := sv.CreateRequestID
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ev := func(name, node, result, details string, start, finish int) lifecycle.Event {
		e := lifecycle.Event{ServerID: id, RequestID: req, Action: lifecycle.ActionCreate, Name: name, Node: node,
			Result: result, Details: details, Start: at(start)}
		if finish >= 0 {
			e.Finish = at(finish)
		}
		return e
	}
	const build = "compute__do_build_and_run_instance"
	events := []lifecycle.Event{
		ev(build, "n1", "", "deploy requested on node n1", 1, -1),
		ev("other_step", "n1", lifecycle.ResultSuccess, "", 2, 2),
		ev(build, "n1", lifecycle.ResultError, "node_deleted: node n1 was deleted while deploying", 5, 5),
		ev(build, "n2", "", "deploy requested on node n2", 6, -1),
	}
	for _, e := range events {
		if err := f.store.SaveServer(ctx, sv, e); err != nil {
			t.Fatalf("save: %v", err)
		}
	}

	acts := list(t, f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions", "2.1", nil).want(t, 200).body, "instanceActions")
	if len(acts) != 1 || acts[0].(map[string]any)["message"] != "Error" {
		t.Errorf("actions %v: want one create with message Error", acts)
	}
	detail := obj(t, f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions/"+req, "2.90", nil).want(t, 200).body, "instanceAction")
	if detail["message"] != "Error" {
		t.Errorf("action message %v, want Error", detail["message"])
	}
	var got []map[string]any
	for _, e := range detail["events"].([]any) {
		m := e.(map[string]any)
		if m["event"] == build {
			got = append(got, m)
		}
	}
	if len(got) != 2 {
		t.Fatalf("build events %v: want the n1 attempt merged and the running n2 one", got)
	}
	if got[0]["host"] != "n1" || got[0]["result"] != "Error" || got[0]["start_time"] != "2026-11-30T01:00:01.000000" ||
		got[0]["finish_time"] != "2026-11-30T01:00:05.000000" ||
		got[0]["details"] != "deploy requested on node n1; node_deleted: node n1 was deleted while deploying" {
		t.Errorf("failed attempt %v", got[0])
	}
	if got[1]["host"] != "n2" || got[1]["result"] != nil || got[1]["finish_time"] != nil ||
		got[1]["start_time"] != "2026-11-30T01:00:06.000000" {
		t.Errorf("running attempt %v", got[1])
	}
}
