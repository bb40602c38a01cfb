package reconciler

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestTakeInOrder: take returns the due items earliest first (ties by
// id), at most limit of them, leaves a busy one due until it is free,
// keeps only the earliest of two times set for one server, and says when
// the next item falls due.
func TestTakeInOrder(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	q := newQueue(4)
	q.at("c", now.Add(-time.Second))
	q.at("b", now.Add(-2*time.Second))
	q.at("a", now.Add(-time.Second))
	q.at("d", now.Add(time.Minute))
	q.at("d", now.Add(-3*time.Second)) // earlier: it wins
	q.at("d", now.Add(time.Hour))      // later: ignored
	q.at("e", now.Add(5*time.Second))
	q.acquire("a")

	got, next := q.take(now, 2)
	if !slices.Equal(got, []string{"d", "b"}) || !next.Equal(now) {
		t.Fatalf("first take: %v, next %v; want [d b], next now (more are due)", got, next)
	}
	got, next = q.take(now, 10)
	if !slices.Equal(got, []string{"c"}) || !next.Equal(now.Add(5*time.Second)) {
		t.Fatalf("second take: %v, next %v; want [c] (a is busy), next in 5s", got, next)
	}
	q.release("a")
	got, _ = q.take(now, 10)
	if !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after the release: %v, want [a]", got)
	}
	got, next = q.take(now.Add(time.Hour), 10)
	if !slices.Equal(got, []string{"e"}) || !next.IsZero() {
		t.Fatalf("an hour on: %v, next %v; want [e] and nothing after (d's later time was not kept)", got, next)
	}
	if len(q.due) != 0 {
		t.Errorf("left due: %v", q.due)
	}
}

// BenchmarkTake: workers take a burst of 10,000 due items a few at a time
// (a slot each), as under a burst of builds.
func BenchmarkTake(b *testing.B) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	}
	for b.Loop() {
		q := newQueue(16)
		for i, id := range ids {
			q.at(id, now.Add(-time.Duration(i%100)*time.Millisecond))
		}
		for n := 0; n < len(ids); {
			got, _ := q.take(now, 16)
			n += len(got)
		}
	}
}

// TestWakeSlot: a quiet server's notification wakes it at once; those
// within the debounce of a wake share one slot at its end; a stream never
// pushes the wake further than one debounce past the last one that passed.
func TestWakeSlot(t *testing.T) {
	q := newQueue(1)
	const d = 20 * time.Millisecond
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		after time.Duration // since t0
		want  time.Duration // the slot, since t0
	}{
		{0, 0},                    // quiet: at once
		{5 * time.Millisecond, d}, // within the debounce: at its end
		{6 * time.Millisecond, d}, // the slot still to come is shared
		{19 * time.Millisecond, d},
		{25 * time.Millisecond, 2 * d}, // the slot passed less than d ago
		{30 * time.Millisecond, 2 * d},
		{100 * time.Millisecond, 100 * time.Millisecond}, // quiet again
		{100 * time.Millisecond, 120 * time.Millisecond}, // the same instant: that slot may have run
	} {
		if got := q.wakeSlot("s", t0.Add(step.after), d).Sub(t0); got != step.want {
			t.Fatalf("notified at +%s: woken at +%s, want +%s", step.after, got, step.want)
		}
	}
	// A flood in one instant costs one slot, not one per notification.
	for range 1000 {
		q.wakeSlot("s", t0.Add(101*time.Millisecond), d)
	}
	if got := q.wakeSlot("s", t0.Add(101*time.Millisecond), d).Sub(t0); got != 120*time.Millisecond {
		t.Fatalf("after a flood: woken at +%s, want +120ms", got)
	}
}
