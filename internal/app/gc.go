package app

import (
	"runtime/debug"
	"strconv"
)

// DefaultGCPercent is the collector's target ingot serves with unless
// GOGC is set. An API under load spends its CPU on short-lived rows,
// views and JSON; at Go's 100 the collector took 14-15 % of ingot's CPU
// (a mixed load of 1,000 req/s on SQLite), at 200 about half of that, for
// a heap up to three times the live one. GOMEMLIMIT, when set, still caps
// the heap: the collector then runs earlier, whatever the target.
const DefaultGCPercent = 200

// TuneGC sets the collector's target to DefaultGCPercent when lookup (the
// environment: os.LookupEnv) leaves GOGC unset or empty, and returns the
// target in effect and whether GOGC chose it. A GOGC the runtime cannot
// read ("fast") is the runtime's business: it keeps its default then.
func TuneGC(lookup func(string) (string, bool)) (percent int, fromEnv bool) {
	if v, ok := lookup("GOGC"); ok && v != "" {
		if v == "off" {
			return -1, true
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			n = 100
		}
		return n, true
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent, false
}
