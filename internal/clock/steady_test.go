package clock

import (
	"testing"
	"time"
)

// A Steady clock moves as time passes, from its anchor, and keeps its
// offset from the host's clock whatever it was (the database's clock as
// anchor, for one).
func TestSteady(t *testing.T) {
	anchor := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	s := NewSteady(anchor)
	first := s.Now()
	if d := first.Sub(anchor); d < 0 || d > time.Second {
		t.Fatalf("first reading %s is %s from its anchor", first, d)
	}
	time.Sleep(20 * time.Millisecond) // time passing is what is measured
	second := s.Now()
	if d := second.Sub(first); d < 20*time.Millisecond || d > 2*time.Second {
		t.Fatalf("moved %s over 20 ms", d)
	}
	host := time.Since(anchor)
	if got := time.Since(second); got-host > time.Second || host-got > time.Second {
		t.Errorf("the offset from the host's clock changed: %s then %s", host, got)
	}
}
