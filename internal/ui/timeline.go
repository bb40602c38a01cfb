package ui

import (
	"fmt"
	"strings"
	"time"
)

// The timeline of a server: one lane per node it was tried on (and one for
// what happened on no node), each step of the API's instance-action events
// a bar from its start to its finish coloured by its result, markers for
// out-of-band events, a line for the delete request and for the deadlines.
// Pure: it lays out the API's answers; the template draws the SVG.

const (
	tlWidth     = 1000.0 // viewBox units
	tlLabel     = 230.0  // lane label column
	tlRight     = 12.0
	tlTop       = 28.0 // axis
	tlLaneH     = 36.0
	tlBarH      = 16.0
	tlMinBar    = 3.0
	tlOffScaleK = 0.5 // a deadline further than half the span past the end is drawn at the edge
)

// outOfBand are the reasons that mean someone acted on the node behind
// ingot's back (or Ironic did on its own).
var outOfBand = map[string]string{
	"node_deleted":       "node deleted out-of-band",
	"node_torn_down":     "node torn down out-of-band",
	"node_disassociated": "instance_uuid removed out-of-band",
	"node_maintenance":   "node put in maintenance",
}

type timelineInput struct {
	Created        time.Time
	Actions        []apiAction // oldest first, with events
	Attempts       []apiAttempt
	Deadline       time.Time
	DeleteDeadline time.Time
	Now            time.Time
	Live           bool // the server is still changing: open steps run to now
}

type timeline struct {
	Width, Height float64
	LabelX        float64
	Lanes         []lane
	Ticks         []tick
	Lines         []vline
	Summary       string
	Start, End    time.Time
	// LineTop and LineBottom bound the vertical lines; LabelY is their labels'.
	LineTop, LineBottom, LabelY float64
	LaneW, LaneH, BarH          float64
}

type lane struct {
	Index   int
	Y       float64 // top of the lane
	BarY    float64
	TextY   float64
	SubY    float64
	Label   string
	Sub     string // outcome line
	Node    string
	Attempt int    // 1-based; 0 when the lane is no attempt
	Outcome string // the attempt's reason, "" when it did not fail
	Bars    []bar
	Marks   []mark
}

type bar struct {
	X, W          float64
	Class, Title  string
	Event, Result string
}

type mark struct {
	X           float64
	Class       string
	Title, Text string
}

type tick struct {
	X      float64
	Text   string
	Anchor string
}

type vline struct {
	X            float64
	Class, Label string
	Title        string
	OffScale     bool
}

type tlEvent struct {
	apiEvent
	action        string
	start, finish time.Time
}

func buildTimeline(in timelineInput) *timeline {
	var evs []tlEvent
	t0, t1 := in.Created, in.Created
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if t0.IsZero() || t.Before(t0) {
			t0 = t
		}
		if t.After(t1) {
			t1 = t
		}
	}
	var deleteAt time.Time
	for _, a := range in.Actions {
		see(apiTime(a.StartTime))
		if a.Action == "delete" && deleteAt.IsZero() {
			deleteAt = apiTime(a.StartTime)
		}
		for _, e := range a.Events {
			te := tlEvent{apiEvent: e, action: a.Action, start: apiTime(str(e.StartTime)), finish: apiTime(str(e.FinishTime))}
			if te.start.IsZero() {
				te.start = te.finish
			}
			see(te.start)
			see(te.finish)
			evs = append(evs, te)
		}
	}
	if len(evs) == 0 && in.Created.IsZero() {
		return nil
	}
	if in.Live && in.Now.After(t1) {
		t1 = in.Now
	}
	for _, a := range in.Attempts {
		see(a.At)
	}
	span := t1.Sub(t0)
	if span < time.Second {
		span = time.Second
	}
	onScale := func(d time.Time) bool {
		return !d.IsZero() && !d.After(t1.Add(time.Duration(float64(span)*tlOffScaleK)))
	}
	for _, d := range []time.Time{in.Deadline, in.DeleteDeadline} {
		if onScale(d) && d.After(t1) {
			t1 = d
		}
	}
	span = t1.Sub(t0)
	if span < time.Second {
		span = time.Second
	}
	pad := time.Duration(float64(span) * 0.02)
	t0, t1 = t0.Add(-pad), t1.Add(pad)
	span = t1.Sub(t0)
	x := func(t time.Time) float64 {
		return tlLabel + (tlWidth-tlLabel-tlRight)*float64(t.Sub(t0))/float64(span)
	}

	// Lanes, in the order their node first appears.
	tl := &timeline{Width: tlWidth, LabelX: 8, Start: t0, End: t1}
	index := map[string]int{}
	keyOf := func(e apiEvent) (key, label string) {
		if h := str(e.Host); h != "" {
			return "n:" + h, h
		}
		if e.HostID != "" {
			return "h:" + e.HostID, "host " + e.HostID[:min(8, len(e.HostID))]
		}
		return "", ""
	}
	for _, e := range evs {
		key, label := keyOf(e.apiEvent)
		if _, ok := index[key]; !ok {
			index[key] = len(tl.Lanes)
			l := lane{Node: label}
			if key == "" {
				l.Label = "no node"
			}
			tl.Lanes = append(tl.Lanes, l)
		}
		l := &tl.Lanes[index[key]]
		finish, class := e.finish, resultClass(str(e.Result))
		if finish.IsZero() {
			finish = t1
			if in.Live {
				finish = in.Now
			}
		}
		b := bar{X: x(e.start), Class: class, Event: e.Event, Result: str(e.Result)}
		b.W = max(x(finish)-b.X, tlMinBar)
		b.Title = fmt.Sprintf("%s (%s): %s → %s, %s", stepName(e.Event), e.action, e.start.Format("15:04:05.000"),
			finishText(e.finish), resultText(str(e.Result)))
		if d := str(e.Details); d != "" {
			b.Title += " — " + d
		}
		l.Bars = append(l.Bars, b)
		switch e.Event {
		case "power_sync", "node_maintenance":
			l.Marks = append(l.Marks, mark{X: x(e.start), Class: "oob", Title: stepName(e.Event) + ": " + str(e.Details), Text: "◆"})
		}
	}
	attachAttempts(tl, in.Attempts, x)
	// Lane geometry and labels.
	for i := range tl.Lanes {
		l := &tl.Lanes[i]
		l.Index = i + 1
		l.Y = tlTop + float64(i)*tlLaneH
		l.BarY = l.Y + (tlLaneH-tlBarH)/2
		l.TextY = l.Y + tlLaneH/2 - 2
		l.SubY = l.TextY + 13
		if l.Label == "" {
			l.Label = "node " + shortNode(l.Node)
			if l.Attempt > 0 {
				l.Label = fmt.Sprintf("attempt %d · %s", l.Attempt, shortNode(l.Node))
			}
		}
		switch {
		case l.Outcome != "":
			l.Sub = "ended: " + l.Outcome
		case l.Node != "" && i == len(tl.Lanes)-1:
			l.Sub = "current node"
		}
	}
	tl.Height = tlTop + float64(len(tl.Lanes))*tlLaneH + 22
	tl.LineTop, tl.LineBottom, tl.LabelY = tlTop-8, tl.Height-18, tl.Height-5
	tl.LaneW, tl.LaneH, tl.BarH = tlWidth, tlLaneH, tlBarH
	layout := "15:04:05"
	if span < 20*time.Second {
		layout = "15:04:05.0" // whole seconds would put a label a fraction away from its tick
	}
	for i := 0; i <= 4; i++ {
		t := t0.Add(time.Duration(float64(span) * float64(i) / 4))
		anchor := "middle"
		if i == 4 {
			anchor = "end"
		}
		tl.Ticks = append(tl.Ticks, tick{X: x(t), Text: t.UTC().Format(layout), Anchor: anchor})
	}
	if !deleteAt.IsZero() {
		tl.Lines = append(tl.Lines, vline{X: x(deleteAt), Class: "delete", Label: "delete", Title: "delete requested at " + deleteAt.Format("15:04:05.000")})
	}
	addDeadline := func(d time.Time, label string) {
		if d.IsZero() {
			return
		}
		v := vline{X: x(d), Class: "deadline", Label: label, Title: label + " " + d.UTC().Format("2006-01-02 15:04:05Z")}
		if !onScale(d) {
			v.X, v.OffScale = tlWidth-tlRight, true
			v.Label = label + " →"
			v.Title += " (off the scale: " + d.Sub(t1).Round(time.Second).String() + " after the end)"
		}
		tl.Lines = append(tl.Lines, v)
	}
	addDeadline(in.Deadline, "build deadline")
	addDeadline(in.DeleteDeadline, "delete deadline")
	tl.Summary = summary(tl)
	return tl
}

// attachAttempts gives each failed attempt its lane: by node where the API
// shows the node, else in order among the lanes that have a failed step.
func attachAttempts(tl *timeline, attempts []apiAttempt, x func(time.Time) float64) {
	used := map[int]bool{}
	for ai, a := range attempts {
		li := -1
		for i, l := range tl.Lanes {
			if !used[i] && l.Node != "" && l.Node == a.Node {
				li = i
				break
			}
		}
		if li < 0 {
			for i, l := range tl.Lanes {
				if !used[i] && strings.HasPrefix(l.Node, "host ") && hasError(l) {
					li = i
					break
				}
			}
		}
		if li < 0 {
			continue
		}
		used[li] = true
		l := &tl.Lanes[li]
		l.Attempt, l.Outcome = ai+1, a.Reason
		if strings.HasPrefix(l.Node, "host ") && a.Node != "" {
			l.Node = a.Node // the attempt history names the node
		}
		if what, ok := outOfBand[a.Reason]; ok {
			l.Marks = append(l.Marks, mark{X: x(a.At), Class: "oob", Title: what + ": " + a.Message, Text: "✕"})
		}
	}
	// Lanes after the failed ones are the next attempts.
	next := len(attempts) + 1
	for i := range tl.Lanes {
		l := &tl.Lanes[i]
		if l.Attempt == 0 && l.Node != "" && i == len(tl.Lanes)-1 {
			l.Attempt = next
		}
	}
}

// shortNode keeps a lane label clear of the bars: a UUID's first block
// (the full name is in the lane's data-node and the events table).
func shortNode(n string) string {
	if len(n) > 24 {
		if i := strings.IndexByte(n, '-'); i > 0 && i <= 12 {
			return n[:i] + "…"
		}
		return n[:20] + "…"
	}
	return n
}

func hasError(l lane) bool {
	for _, b := range l.Bars {
		if b.Result == "Error" {
			return true
		}
	}
	return false
}

func summary(tl *timeline) string {
	var parts []string
	for _, l := range tl.Lanes {
		if l.Node == "" {
			continue
		}
		s := l.Label
		if l.Outcome != "" {
			s += " ended " + l.Outcome
		} else if l.Sub != "" {
			s += " (" + l.Sub + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "No node was tried yet."
	}
	return strings.Join(parts, "; ") + "."
}

func resultClass(r string) string {
	switch r {
	case "Success":
		return "ok"
	case "Error":
		return "err"
	}
	return "run"
}

func resultText(r string) string {
	if r == "" {
		return "in progress"
	}
	return r
}

func finishText(t time.Time) string {
	if t.IsZero() {
		return "…"
	}
	return t.Format("15:04:05.000")
}

// stepName makes Nova's event names readable.
func stepName(e string) string {
	switch e {
	case "conductor_schedule_and_build_instances":
		return "schedule"
	case "compute_reserve_node":
		return "reserve"
	case "compute_attach_networks":
		return "networks"
	case "compute_attach_volumes":
		return "volumes"
	case "compute__do_build_and_run_instance":
		return "deploy"
	case "compute_terminate_instance":
		return "terminate"
	}
	return strings.TrimPrefix(e, "compute_")
}
