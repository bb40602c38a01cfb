package api_test

import (
	"context"
	"net/url"
	"strings"
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

// TestActionsPaging: from 2.58 the list pages by limit and marker (a
// request id; one that names no action is Nova's 400) with a next link on
// a full page, and filters on updated_at by changes-since (and from 2.66
// changes-before); other parameters are refused. Before 2.58 the query is
// ignored.
func TestActionsPaging(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("pg")
	f.clock.Advance(time.Hour)
	f.action(member, id, "2.90", map[string]any{"reboot": map[string]any{"type": "SOFT"}}).want(t, 202)
	base := "/v2.1/servers/" + id + "/os-instance-actions"
	get := func(mv, q string) string {
		t.Helper()
		var names []string
		for _, a := range list(t, f.doWith(member, "GET", base+q, mv, nil).want(t, 200).body, "instanceActions") {
			names = append(names, a.(map[string]any)["action"].(string))
		}
		return strings.Join(names, ",")
	}
	if got := get("2.57", "?limit=1&foo=1"); got != "reboot,create" {
		t.Errorf("2.57 ignores the query: %s", got)
	}
	r := f.doWith(member, "GET", base+"?limit=1", "2.58", nil).want(t, 200)
	acts := list(t, r.body, "instanceActions")
	links, _ := r.body["links"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["action"] != "reboot" || len(links) != 1 {
		t.Fatalf("limit=1: %s", r.raw)
	}
	marker := acts[0].(map[string]any)["request_id"].(string)
	if href := links[0].(map[string]any)["href"].(string); !strings.Contains(href, "marker="+marker) || !strings.Contains(href, "limit=1") {
		t.Errorf("next link %s", href)
	}
	if got := get("2.58", "?marker="+marker); got != "create" {
		t.Errorf("after the marker: %s", got)
	}
	since := url.QueryEscape(t0.Add(30 * time.Minute).Format(time.RFC3339))
	if got := get("2.58", "?changes-since="+since); got != "reboot" {
		t.Errorf("changes-since: %s", got)
	}
	if got := get("2.66", "?changes-before="+since); got != "create" {
		t.Errorf("changes-before: %s", got)
	}
	wantMsg(t, f.doWith(member, "GET", base+"?marker="+unknownID, "2.58", nil), 400, "badRequest", "Marker "+unknownID+" could not be found.")
	for _, q := range []string{"?limit=-1", "?foo=1", "?changes-since=yesterday", "?changes-before=" + since} {
		f.doWith(member, "GET", base+q, "2.58", nil).novaError(t, 400, "badRequest")
	}
	f.doWith(member, "GET", base+"?changes-since="+since+"&changes-before="+url.QueryEscape(t0.Format(time.RFC3339)), "2.66", nil).novaError(t, 400, "badRequest")
}
