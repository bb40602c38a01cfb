// Package clock gives the lifecycle, the reconciler and the Ironic simulator
// one source of time that tests can drive by hand.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time. Real uses the wall clock; Manual moves only when told.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Manual is a clock for tests: it starts at a fixed instant and moves only by
// Advance or Set. Safe for concurrent use.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's current reading.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d (negative d is ignored: time never goes back).
func (m *Manual) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	m.mu.Lock()
	m.now = m.now.Add(d)
	m.mu.Unlock()
}

// Set moves the clock to t if t is later than the current reading.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	if t.After(m.now) {
		m.now = t
	}
	m.mu.Unlock()
}
