package history

import (
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Bounds are the deadlines a run's servers must keep (zero: not checked).
type Bounds struct {
	Build  time.Duration // no BUILD seen later than a create's call + Build
	Delete time.Duration // no task_state deleting later than a delete's call + Delete
}

// Verdict is what the check found; every count but Requests, Ambiguous
// and Servers must be 0.
type Verdict struct {
	Requests, Ambiguous, Servers int
	Lost                         int // an accepted create that did not end ACTIVE/ERROR (or deleted), an accepted delete not done
	Resurrected                  int // a server seen as anything but deleting after a delete accepted or a 404
	DoubleHeld                   int // a node two servers held at once, a server on two nodes
	Leaked                       int // a node, VIF, port, attachment or target left to no live server
	PastDeadline                 int // a server seen in BUILD or deleting past its deadline
	NotLinearizable              int // a server whose creates, shows, lists and deletes no order explains
	Undecided                    int // the linearizability search ran out of time
	Problems                     []string
}

// OK reports whether every property holds.
func (v Verdict) OK() bool {
	return v.Lost+v.Resurrected+v.DoubleHeld+v.Leaked+v.PastDeadline+v.NotLinearizable+v.Undecided == 0
}

func (v Verdict) String() string {
	return fmt.Sprintf("history: %d requests (%d ambiguous) on %d servers: lost %d, resurrected %d, double-held %d, leaked %d, past deadline %d, not linearizable %d",
		v.Requests, v.Ambiguous, v.Servers, v.Lost, v.Resurrected, v.DoubleHeld, v.Leaked, v.PastDeadline, v.NotLinearizable+v.Undecided)
}

// Require checks the run, logs the verdict's line and fails the test with
// each problem found.
func (r *Recorder) Require(t testing.TB, f Final, b Bounds) Verdict {
	t.Helper()
	v := r.Check(f, b)
	t.Log(v.String())
	for _, p := range v.Problems {
		t.Error(p)
	}
	return v
}

// obs is one observation of a server: shown as seen, or gone.
type obs struct {
	call, ret time.Time
	seen      *Seen // nil: gone (a 404, or absent at the end)
}

// track is everything the history says of one server.
type track struct {
	creates, maybeCreates, deletes, maybeDeletes, notFound []Op
	obs                                                    []obs
}

// Check checks the history against the final state f.
func (r *Recorder) Check(f Final, b Bounds) Verdict {
	ops := r.Ops()
	r.mu.Lock()
	snaps := append([]Snapshot(nil), r.snaps...)
	r.mu.Unlock()
	if f.Nodes != nil {
		snaps = append(snaps, Snapshot{At: f.At, Nodes: f.Nodes})
	}
	v := Verdict{Requests: len(ops)}
	servers := byServer(ops, f, &v)
	v.Servers = len(servers)
	ids := make([]string, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	c := checker{v: &v, f: f, b: b, servers: servers, ids: ids}
	c.lost()
	c.resurrected()
	c.deadlines()
	c.doubleHeld(snaps)
	c.leaked()
	c.linearizable(ops)
	return v
}

// byServer sorts the history by server.
func byServer(ops []Op, f Final, v *Verdict) map[string]*track {
	servers := map[string]*track{}
	get := func(id string) *track {
		if servers[id] == nil {
			servers[id] = &track{}
		}
		return servers[id]
	}
	byName := map[string][]string{}
	name := func(s Seen) {
		for _, id := range byName[s.Name] {
			if id == s.ID {
				return
			}
		}
		byName[s.Name] = append(byName[s.Name], s.ID)
	}
	for _, op := range ops {
		for _, s := range op.Seen {
			name(s)
		}
	}
	for _, s := range f.Servers {
		name(s)
	}
	for _, op := range ops {
		if op.Ambiguous() {
			v.Ambiguous++
		}
		switch {
		case op.Kind == Create && op.Code == http.StatusAccepted && op.Server != "":
			get(op.Server).creates = append(get(op.Server).creates, op)
		case op.Kind == Create && op.Ambiguous():
			for _, id := range byName[op.Name] {
				get(id).maybeCreates = append(get(id).maybeCreates, op)
			}
		case op.Kind == Delete && op.Code == http.StatusNoContent:
			get(op.Server).deletes = append(get(op.Server).deletes, op)
		case op.Kind == Delete && op.Ambiguous():
			get(op.Server).maybeDeletes = append(get(op.Server).maybeDeletes, op)
		case op.Kind == Delete && op.Code == http.StatusNotFound:
			get(op.Server).notFound = append(get(op.Server).notFound, op)
		case op.Kind == Show && op.Code == http.StatusNotFound:
			get(op.Server).obs = append(get(op.Server).obs, obs{call: op.Call, ret: op.Return})
		case (op.Kind == Show || op.Kind == List) && op.Code == http.StatusOK:
			for i := range op.Seen {
				get(op.Seen[i].ID).obs = append(get(op.Seen[i].ID).obs, obs{call: op.Call, ret: op.Return, seen: &op.Seen[i]})
			}
		}
	}
	for id := range f.Servers {
		get(id)
	}
	for id, tr := range servers {
		o := obs{call: f.At, ret: f.At}
		if s, ok := f.Servers[id]; ok {
			o.seen = &s
		}
		tr.obs = append(tr.obs, o)
	}
	return servers
}

type checker struct {
	v       *Verdict
	f       Final
	b       Bounds
	servers map[string]*track
	ids     []string
}

func (c *checker) problem(count *int, format string, args ...any) {
	*count++
	c.v.Problems = append(c.v.Problems, fmt.Sprintf(format, args...))
}

func (c *checker) live(id string) bool {
	s, ok := c.f.Servers[id]
	return ok && !s.Deleting()
}

func (c *checker) lost() {
	for _, id := range c.ids {
		tr := c.servers[id]
		s, present := c.f.Servers[id]
		switch {
		case len(tr.deletes) > 0 && present:
			c.problem(&c.v.Lost, "lost: delete of %s accepted at %s, still listed at the end (%s, task_state %q)",
				id, clock(tr.deletes[0].Return), s.Status, s.TaskState)
		case len(tr.creates) == 0 || len(tr.deletes)+len(tr.maybeDeletes) > 0:
		case !present:
			c.problem(&c.v.Lost, "lost: create of %s accepted at %s, no delete asked, gone at the end", id, clock(tr.creates[0].Return))
		case s.Deleting() || s.Status != "ACTIVE" && s.Status != "ERROR":
			c.problem(&c.v.Lost, "lost: create of %s accepted at %s, %s (task_state %q) at the end", id, clock(tr.creates[0].Return), s.Status, s.TaskState)
		}
	}
}

// resurrected: after an accepted delete the server is seen only as
// deleting; after a 404, never again.
func (c *checker) resurrected() {
	for _, id := range c.ids {
		tr := c.servers[id]
		deleted := earliest(tr.deletes, true)
		var goneAt time.Time
		for _, o := range tr.obs {
			if o.seen == nil && !o.call.Equal(c.f.At) && (goneAt.IsZero() || o.ret.Before(goneAt)) {
				goneAt = o.ret
			}
		}
		for _, o := range tr.obs {
			if o.seen == nil {
				continue
			}
			why := ""
			switch {
			case !goneAt.IsZero() && o.call.After(goneAt) && o.seen.Status != "DELETED":
				why = "it was shown gone (404) at " + clock(goneAt)
			case !deleted.IsZero() && o.call.After(deleted) && !o.seen.Deleting():
				why = "its delete was accepted at " + clock(deleted)
			}
			if why != "" {
				c.problem(&c.v.Resurrected, "resurrected: %s seen %s (task_state %q) at %s after %s",
					id, o.seen.Status, o.seen.TaskState, clock(o.call), why)
				break
			}
		}
	}
}

func (c *checker) deadlines() {
	for _, id := range c.ids {
		tr := c.servers[id]
		created := earliest(append(append([]Op(nil), tr.creates...), tr.maybeCreates...), false)
		deleted := earliest(tr.deletes, false)
		for _, o := range tr.obs {
			if o.seen == nil {
				continue
			}
			late := ""
			switch {
			case c.b.Build > 0 && !created.IsZero() && o.seen.Status == "BUILD" && !o.seen.Deleting() && o.call.After(created.Add(c.b.Build)):
				late = fmt.Sprintf("in BUILD %s after its create", o.call.Sub(created).Round(time.Millisecond))
			case c.b.Delete > 0 && !deleted.IsZero() && o.seen.Deleting() && o.call.After(deleted.Add(c.b.Delete)):
				late = fmt.Sprintf("deleting %s after its delete", o.call.Sub(deleted).Round(time.Millisecond))
			}
			if late != "" {
				c.problem(&c.v.PastDeadline, "past deadline: %s %s (bounds %+v)", id, late, c.b)
				break
			}
		}
	}
}

// earliest is the first call (or return) among ops; zero when none.
func earliest(ops []Op, ret bool) time.Time {
	var t time.Time
	for _, op := range ops {
		at := op.Call
		if ret {
			at = op.Return
		}
		if t.IsZero() || at.Before(t) {
			t = at
		}
	}
	return t
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }

// linearizable runs Porcupine on each server's existence.
func (c *checker) linearizable(all []Op) {
	origin := time.Now()
	for _, op := range all {
		if op.Call.Before(origin) {
			origin = op.Call
		}
	}
	for _, id := range c.ids {
		tr := c.servers[id]
		var ops []porcupine.Operation
		add := func(in input, list []Op, ambiguous bool) {
			for _, op := range list {
				ops = append(ops, porcupineOp(in, op.Call, op.Return, origin, ambiguous))
			}
		}
		add(inCreate, tr.creates, false)
		add(inCreateMaybe, tr.maybeCreates, true)
		add(inDelete, tr.deletes, false)
		add(inDeleteMaybe, tr.maybeDeletes, true)
		add(inDeleteNotFound, tr.notFound, false)
		for _, o := range tr.obs {
			in := inSeenGone
			switch {
			case o.seen == nil || o.seen.Status == "DELETED":
			case o.seen.Deleting():
				in = inSeenDeleting
			default:
				in = inSeenLive
			}
			ops = append(ops, porcupineOp(in, o.call, o.ret, origin, false))
		}
		switch linearizable(ops, 10*time.Second) {
		case porcupine.Illegal:
			c.problem(&c.v.NotLinearizable, "not linearizable: no order of %s's %d operations (creates %d+%d?, deletes %d+%d?, 404 deletes %d, observations %d) fits create → live → deleting → gone",
				id, len(ops), len(tr.creates), len(tr.maybeCreates), len(tr.deletes), len(tr.maybeDeletes), len(tr.notFound), len(tr.obs))
		case porcupine.Unknown:
			c.problem(&c.v.Undecided, "linearizability of %s undecided in 10 s (%d operations)", id, len(ops))
		}
	}
}
