package ui

import (
	"testing"
	"time"
)

func sp(s string) *string { return &s }

// TestTimelineLanes: the S3 story as the API tells it — to an admin (event
// hosts) and to a member (only hostIds; the attempt history names the
// node) — gives two attempt lanes, the first ending node_deleted with an
// error bar and an out-of-band mark, the second the current node; the
// delete is a line, the deadline too (at the edge when far off).
func TestTimelineLanes(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(ms int) *string {
		return sp(t0.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02T15:04:05.000000"))
	}
	ev := func(name string, start, finish int, result, host, hostID string) apiEvent {
		e := apiEvent{Event: name, StartTime: at(start), HostID: hostID}
		if finish >= 0 {
			e.FinishTime = at(finish)
		}
		if result != "" {
			e.Result = sp(result)
		}
		if host != "" {
			e.Host = sp(host)
		}
		return e
	}
	story := func(admin bool) []apiAction {
		h := func(n string) (string, string) {
			if admin {
				return n, "hid-" + n
			}
			return "", "hid-" + n
		}
		n1, i1 := h("node-1")
		n2, i2 := h("node-2")
		return []apiAction{
			{Action: "create", StartTime: *at(0), Events: []apiEvent{
				ev("conductor_schedule_and_build_instances", 10, 10, "Success", n1, i1),
				ev("compute_reserve_node", 20, 20, "Success", n1, i1),
				ev("compute__do_build_and_run_instance", 30, 900, "Error", n1, i1),
				ev("reschedule", 950, 950, "Success", "", ""),
				ev("conductor_schedule_and_build_instances", 960, 960, "Success", n2, i2),
				ev("compute__do_build_and_run_instance", 970, 3000, "Success", n2, i2),
			}},
			{Action: "delete", StartTime: *at(4000), Events: []apiEvent{ev("compute_terminate_instance", 4000, -1, "", n2, i2)}},
		}
	}
	attempts := []apiAttempt{{Node: "node-1", Step: "deploy", Reason: "node_deleted", Message: "gone", At: t0.Add(900 * time.Millisecond)}}
	for _, admin := range []bool{true, false} {
		tl := buildTimeline(timelineInput{Created: t0, Actions: story(admin), Attempts: attempts,
			Deadline: t0.Add(time.Hour), Now: t0.Add(5 * time.Second), Live: true})
		var lanes []lane
		for _, l := range tl.Lanes {
			if l.Attempt > 0 {
				lanes = append(lanes, l)
			}
		}
		if len(lanes) != 2 {
			t.Fatalf("admin=%v: lanes %+v, want two attempts", admin, tl.Lanes)
		}
		first, second := lanes[0], lanes[1]
		if first.Attempt != 1 || first.Node != "node-1" || first.Outcome != "node_deleted" || !hasError(first) || len(first.Marks) != 1 {
			t.Errorf("admin=%v: first lane %+v", admin, first)
		}
		if second.Attempt != 2 || second.Outcome != "" || hasError(second) || second.Sub != "current node" {
			t.Errorf("admin=%v: second lane %+v", admin, second)
		}
		if admin && second.Node != "node-2" {
			t.Errorf("admin sees node %q, want node-2", second.Node)
		}
		// The open terminate step runs to now; the deploy bar spans its time.
		var deploy bar
		for _, b := range second.Bars {
			if b.Event == "compute__do_build_and_run_instance" {
				deploy = b
			}
		}
		if deploy.W < 100 {
			t.Errorf("admin=%v: a 2 s deploy drawn %.1f wide of %.0f", admin, deploy.W, tlWidth-tlLabel)
		}
		var del, dl int
		for _, v := range tl.Lines {
			switch v.Class {
			case "delete":
				del++
			case "deadline":
				dl++
				if !v.OffScale {
					t.Errorf("an hour-away deadline drawn on a 5 s scale")
				}
			}
		}
		if del != 1 || dl != 1 {
			t.Errorf("admin=%v: %d delete and %d deadline lines", admin, del, dl)
		}
	}
}
