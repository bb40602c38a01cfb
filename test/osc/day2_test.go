package osc

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// runCLIDay2 is the day-2 CLI session at 2.90: reboot --hard --wait, stop, start,
// rebuild --image --wait, set/unset of name, properties and tags, list
// by tag and changes-since, lock/unlock, rescue/unrescue, the events of
// all of it, and the delete. Sessions are split where the CLI cannot wait
// (stop, start, rescue, unrescue): the test waits on the API in between.
func runCLIDay2(t *testing.T, s *stack) {
	ctx := context.Background()
	cl := newCLI(t, s, "2.90", "")
	name, renamed := "day2-cli", "day2-cli-renamed"
	session := func(wantJSON int, commands ...string) []map[string]any {
		t.Helper()
		docs, stderr, err := cl.session(ctx, wantJSON, commands...)
		if err != nil {
			t.Fatalf("session %q: %v\nstderr:\n%s", commands, err, stderr)
		}
		if strings.Contains(stderr, "rror") || strings.Contains(stderr, "Traceback") {
			t.Errorf("session %q: CLI stderr:\n%s", commands, stderr)
		}
		var out []map[string]any
		for _, d := range docs {
			if len(d) > 0 && d[0] == '[' {
				out = append(out, asList(t, d)...)
				out = append(out, nil) // a list ends with a nil entry
				continue
			}
			out = append(out, asObject(t, d))
		}
		return out
	}
	created := session(1, "server create --flavor "+flavorName+" --image "+imageName+" --network "+netName+" --wait -f json "+name)
	expect(t, "create --wait", created[0], map[string]any{"name": name, "status": "ACTIVE"})
	id := created[0]["id"].(string)
	since := time.Now().UTC().Add(-time.Second).Format("2006-01-02T15:04:05")

	start := time.Now()
	// The CLI's --wait polls every 5 s: one reboot waits (hard), the soft
	// one is gophercloud's (TestGophercloud).
	session(0, "server reboot --hard --wait "+name, "server stop "+name)
	t.Logf("reboot --hard --wait, stop: %s", time.Since(start).Round(time.Millisecond))
	if a := s.lastAction(t, id, "reboot"); a == "" {
		t.Error("no reboot action")
	}
	s.waitStatus(t, name, "SHUTOFF")
	if sv := s.get(t, id); sv["OS-EXT-STS:power_state"] != 4.0 {
		t.Errorf("stopped: power_state %v", sv["OS-EXT-STS:power_state"])
	}
	session(0, "server start "+name)
	s.waitStatus(t, name, "ACTIVE")

	docs := session(4,
		"server rebuild --image "+imageName+" --wait -f json "+name,
		"server set --name "+renamed+" --property team=a --property tier=web --tag blue --tag red "+name,
		"server unset --property tier --tag red "+renamed,
		"server show -f json "+renamed,
		"server list --tags blue -f json",
		"server list --changes-since "+since+" -f json",
		"server lock --reason audit "+renamed,
		"server rescue --password let-me-in "+renamed,
	)
	// The CLI prints the rebuild's answer (REBUILD) once --wait saw ACTIVE.
	expect(t, "rebuild --wait", docs[0], map[string]any{"id": id, "status": "REBUILD"})
	expect(t, "show after set/unset", docs[1], map[string]any{"name": renamed, "properties": map[string]any{"team": "a"},
		"tags": []any{"blue"}})
	if st := s.get(t, id)["status"]; st != "ACTIVE" && st != "RESCUE" {
		t.Errorf("after rebuild --wait (and a rescue asked): %v", st)
	}
	isEnd := func(m map[string]any) bool { return m == nil }
	tagged := docs[2 : slices.IndexFunc(docs[2:], isEnd)+2]
	if len(tagged) != 1 || tagged[0]["Name"] != renamed {
		t.Errorf("server list --tags blue: %v", tagged)
	}
	rest := docs[len(tagged)+3:]
	if changed := rest[:slices.IndexFunc(rest, isEnd)]; !slices.ContainsFunc(changed, func(r map[string]any) bool { return r["ID"] == id }) {
		t.Errorf("server list --changes-since %s: %v", since, changed)
	}
	s.waitStatus(t, renamed, "RESCUE")
	sv := s.get(t, id)
	if sv["locked"] != true || sv["locked_reason"] != "audit" {
		t.Errorf("after lock: locked %v reason %v", sv["locked"], sv["locked_reason"])
	}
	events := session(1, "server unrescue "+renamed, "server unlock "+renamed, "server event list -f json "+renamed)
	s.waitStatus(t, renamed, "ACTIVE")
	if sv := s.get(t, id); sv["locked"] != false {
		t.Errorf("after unlock: locked %v", sv["locked"])
	}
	session(0, "server delete "+renamed)
	var actions []string
	for _, e := range events {
		if e != nil {
			actions = append(actions, e["Action"].(string))
		}
	}
	for _, a := range []string{"create", "reboot", "stop", "start", "rebuild", "lock", "rescue", "unrescue", "unlock"} {
		if !slices.Contains(actions, a) {
			t.Errorf("server event list lacks %s: %v", a, actions)
		}
	}
	s.waitGone(t, id)
	t.Logf("day-2 CLI session: %s", time.Since(start).Round(time.Second))
}

// lastAction is the request id of the server's latest action named name.
func (s *stack) lastAction(t *testing.T, id, name string) string {
	t.Helper()
	var body struct {
		Actions []struct {
			Action    string `json:"action"`
			RequestID string `json:"request_id"`
		} `json:"instanceActions"`
	}
	if code, err := s.call(context.Background(), "GET", s.url+"/v2.1/servers/"+id+"/os-instance-actions", "2.90", nil, &body); err != nil || code != http.StatusOK {
		t.Fatalf("actions of %s: %d %v", id, code, err)
	}
	for _, a := range body.Actions {
		if a.Action == name {
			return a.RequestID
		}
	}
	return ""
}

// get reads a server at 2.90.
func (s *stack) get(t *testing.T, id string) map[string]any {
	t.Helper()
	var body struct {
		Server map[string]any `json:"server"`
	}
	if code, err := s.call(context.Background(), "GET", s.url+"/v2.1/servers/"+id, "2.90", nil, &body); err != nil || code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", id, code, err)
	}
	return body.Server
}
