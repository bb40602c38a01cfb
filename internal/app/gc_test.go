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
		fromEnv bool
	}{
		{"unset", nil, DefaultGCPercent, false},
		{"empty", map[string]string{"GOGC": ""}, DefaultGCPercent, false},
		{"set", map[string]string{"GOGC": "50"}, 100, true}, // the runtime read GOGC already: left alone
		{"off", map[string]string{"GOGC": "off"}, 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			got, fromEnv := TuneGC(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if now := debug.SetGCPercent(100); now != tc.percent || fromEnv != tc.fromEnv {
				t.Fatalf("TuneGC = %d, %v; the collector's target %d, want %d, %v", got, fromEnv, now, tc.percent, tc.fromEnv)
			}
			if !tc.fromEnv && got != DefaultGCPercent {
				t.Fatalf("TuneGC reports %d, want %d", got, DefaultGCPercent)
			}
		})
	}
}
