package reconciler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

func TestNextInterval(t *testing.T) {
	const fast, poll = 500 * time.Millisecond, 2 * time.Second
	for _, c := range []struct {
		waiting, calls int
		want           time.Duration
	}{
		{0, 0, poll},                         // stable fleet: the poll interval
		{1, 1, fast},                         // one build: its GET every fast interval
		{2, 1, 1111111111 * time.Nanosecond}, // two share a list: 0.9 calls/s < Nova's 1/s
		{3, 1, 740740740 * time.Nanosecond},
		{5, 1, fast}, // 2 calls/s allowed, 1 per fast tick used
		{4, 4, poll}, // four single GETs: no faster than the poll interval
		{1000, 3, fast},
		{100, 100, poll}, // a hundred power changes fetched alone: the full tick's bulk list is cheaper
	} {
		got := reconciler.NextInterval(c.waiting, c.calls, fast, poll)
		if got != c.want {
			t.Errorf("NextInterval(%d waiting, %d calls) = %s, want %s", c.waiting, c.calls, got, c.want)
		}
		if c.waiting >= 2 && got < poll { // at the poll interval only the full tick's bulk list polls
			// The load promise itself: below Nova's one GET per waiting instance per 2 s.
			if rate, nova := float64(max(c.calls, 1))/got.Seconds(), float64(c.waiting)/2; rate >= nova {
				t.Errorf("%d waiting, %d calls: %.2f calls/s, not below Nova's %.2f", c.waiting, c.calls, rate, nova)
			}
		}
	}
}

// countCalls splits Ironic calls into bulk lists, state lists and the rest.
func countCalls(calls []string) (bulk, lists, other int) {
	for _, c := range calls {
		switch {
		case strings.Contains(c, "associated=True"):
			bulk++
		case strings.Contains(c, "provision_state="):
			lists++
		default:
			other++
		}
	}
	return
}

// Fast ticks between full ones: deploys being watched cost one filtered
// list per tick while nothing changes (no bulk list, no store write), and
// the deploys that finish are seen — and the servers ACTIVE — in the first
// fast ticks after, the nodes that left the list fetched by whichever
// costs fewer calls (here one bulk list rather than five GETs).
func TestFastTickWatchesOnlyWaitedNodes(t *testing.T) {
	r := newRig(t, 20, 10*time.Millisecond, reconciler.Config{})
	ids := r.create(5)
	for range 10 {
		_, d := r.tick()
		if r.phases(ids)[lifecycle.PhaseDeploying] == len(ids) {
			break
		}
		r.clk.Advance(time.Second - d)
	}
	if got := r.rec.Cadence(); got != reconciler.DefaultFastInterval {
		t.Fatalf("5 deploys in flight: cadence %s, want the fast interval", got)
	}
	// The first fast tick sees the nodes the last tick's deploy calls moved.
	r.clk.Advance(500 * time.Millisecond)
	if _, err := r.rec.FastTick(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.takeCalls()
	for range 3 { // deploys still running
		r.clk.Advance(500 * time.Millisecond)
		st, err := r.rec.FastTick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		calls := r.takeCalls()
		if bulk, lists, other := countCalls(calls); bulk != 0 || lists != 1 || other != 0 || st.Servers != 0 {
			t.Fatalf("quiet fast tick: %d bulk, %d lists, %d other calls, %d servers processed; want one list: %v",
				bulk, lists, other, st.Servers, calls)
		}
	}
	r.clk.Advance(10 * time.Second) // every deploy done
	// Seen in the next fast tick; the simulator's fake deploy, like Ironic's,
	// leaves the node off, so the one after sees it powered on.
	var calls []string
	for range 2 {
		if _, err := r.rec.FastTick(context.Background()); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, r.takeCalls()...)
		r.clk.Advance(500 * time.Millisecond)
	}
	gets := 0
	for _, c := range calls {
		if strings.HasPrefix(c, "GET /v1/nodes/") {
			gets++
		}
	}
	// The five nodes that left the deploying list cost one bulk list (fewer
	// calls than five GETs); the GETs are the look right after each power-on.
	if bulk, lists, _ := countCalls(calls); bulk != 1 || lists > 2 || gets > len(ids) {
		t.Fatalf("fast ticks after the deploys: %d bulk, %d lists, %d GETs; want one bulk list for the nodes that left the list, a list a tick, a GET per power-on: %v",
			bulk, lists, gets, calls)
	}
	if got := r.phases(ids); got[lifecycle.PhaseActive] != len(ids) {
		t.Fatalf("after two fast ticks: %v, want all active", got)
	}
	if got := r.rec.Cadence(); got != 2*time.Second {
		t.Fatalf("stable fleet: cadence %s, want the poll interval", got)
	}
	if st, _ := r.rec.FastTick(context.Background()); st.Servers != 0 || len(r.takeCalls()) != 0 {
		t.Fatal("a fast tick with nothing waited on called Ironic")
	}
}

// One lone deploy is fetched by a single GET.
func TestFastTickSingleGET(t *testing.T) {
	r := newRig(t, 5, 10*time.Millisecond, reconciler.Config{})
	ids := r.create(1)
	for range 10 {
		_, d := r.tick()
		if r.phases(ids)[lifecycle.PhaseDeploying] == 1 {
			break
		}
		r.clk.Advance(time.Second - d)
	}
	r.takeCalls()
	r.clk.Advance(500 * time.Millisecond)
	if _, err := r.rec.FastTick(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := r.takeCalls()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "GET /v1/nodes/") {
		t.Fatalf("fast tick of one deploy: %v, want one GET of its node", calls)
	}
}
