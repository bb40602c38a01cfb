package app

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	for _, tc := range []struct {
		name    string
		env     map[string]string
		percent int // debug.SetGCPercent's answer afterwards
		tuned   bool
	}{
		{"unset", nil, DefaultGCPercent, true},
		{"empty", map[string]string{"GOGC": ""}, DefaultGCPercent, true},
		{"set", map[string]string{"GOGC": "50"}, 100, false}, // the runtime read GOGC already: left alone
		{"off", map[string]string{"GOGC": "off"}, 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			tuned := TuneGC(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if now := debug.SetGCPercent(100); now != tc.percent || tuned != tc.tuned {
				t.Fatalf("TuneGC = %v; the collector's target %d, want %d, %v", tuned, now, tc.percent, tc.tuned)
			}
		})
	}
}
