package clock

import "time"

// Steady is the clock ingot runs on: it takes the wall time once, when
// made (the host's clock, or the database's), and from then on moves by
// the process's monotonic clock. A step of the host's clock — date -s, a
// VM resumed, NTP stepping after a long drift — does not move it, so a
// deadline or a lease never ends early nor late by the step; NTP's
// slewing does move it, as the kernel slews the monotonic clock too.
type Steady struct {
	wall time.Time // the wall time at mono
	mono time.Time // time.Now() when made: its monotonic reading
}

// NewSteady returns a clock that reads at now and moves by the monotonic
// clock from there.
func NewSteady(at time.Time) *Steady {
	return &Steady{wall: at.Round(0), mono: time.Now()}
}

// Now returns the anchor plus the monotonic time elapsed since. The value
// has no monotonic reading of its own: it compares with recorded times by
// its wall reading, which is the steady one.
func (s *Steady) Now() time.Time { return s.wall.Add(time.Since(s.mono)) }
