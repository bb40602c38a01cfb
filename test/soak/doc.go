// Package soak is the long churn soak (not in CI): ingot serve on SQLite,
// or three replicas on PostgreSQL, in front of a simulated Ironic in its own
// process, every link through a fault proxy; a steady rate of creates,
// deletes and reboots through a history-recording client while a seeded
// schedule injects link faults and kill -9s; each process's RSS, goroutines
// and open files sampled and checked flat; the history checked at the end.
// Skipped unless INGOT_SOAK is set (see soak_test.go, `make soak-churn`).
package soak
