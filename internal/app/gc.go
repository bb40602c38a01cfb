package app

import "runtime/debug"

// DefaultGCPercent is the collector's target ingot serves with unless
// GOGC is set. An API under load spends its CPU on short-lived rows,
// views and JSON; at Go's 100 the collector took 14-15 % of ingot's CPU
// (a mixed load of 1,000 req/s on SQLite), at 200 about half of that, for
// a heap up to three times the live one. GOMEMLIMIT, when set, still caps
// the heap: the collector then runs earlier, whatever the target.
const DefaultGCPercent = 200

// TuneGC sets the collector's target to DefaultGCPercent when lookup (the
// environment: os.LookupEnv) leaves GOGC unset or empty, and reports
// whether it did; a GOGC that is set was the runtime's to read.
func TuneGC(lookup func(string) (string, bool)) bool {
	if v, _ := lookup("GOGC"); v != "" {
		return false
	}
	debug.SetGCPercent(DefaultGCPercent)
	return true
}
