package soak

import (
	"testing"
	"time"
)

// TestFlatRule: the flatness rule fails a figure that grows by more than
// half after the warm-up (and more than its floor), and passes one that
// only wobbles, one that spikes in the middle, and one too short to judge.
func TestFlatRule(t *testing.T) {
	series := func(f func(i int) int) []sample {
		var out []sample
		for i := range 40 {
			out = append(out, sample{at: time.Duration(i) * 10 * time.Second, slot: "ingot-0", rssKB: f(i), goroutines: f(i) / 1000, fds: 20})
		}
		return out
	}
	rssM, gorM := metrics[0], metrics[1]
	for _, tc := range []struct {
		name string
		s    []sample
		m    metric
		ok   bool
	}{
		{"rss flat", series(func(i int) int { return 40000 + i%3*1000 }), rssM, true},
		{"rss spike mid-run", series(func(i int) int { return 40000 + map[bool]int{true: 60000}[i > 15 && i < 25] }), rssM, true},
		{"rss grows", series(func(i int) int { return 40000 + i*2000 }), rssM, false},
		{"goroutines grow past the floor", series(func(i int) int { return 20000 + i*5000 }), gorM, false},
		{"goroutines grow within the floor", series(func(i int) int { return 20000 + i*500 }), gorM, true},
		{"too short", series(func(i int) int { return 40000 + i*2000 })[:12], rssM, true},
	} {
		if msg, ok := flat(tc.s, "ingot-0", tc.m, time.Minute); ok != tc.ok {
			t.Errorf("%s: flat = %v (%s), want %v", tc.name, ok, msg, tc.ok)
		}
	}
}
