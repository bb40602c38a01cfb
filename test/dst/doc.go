// Package dst is ingot's deterministic simulation test: the reconciler, the
// Ironic simulator and the SQLite store on one manual clock, driven tick by
// tick by a seeded generator of user requests, Ironic faults, out-of-band
// operator actions, clock jumps and ingot crashes. The invariants of
// docs/DESIGN.md §1 are checked after every step and at quiescence.
//
//	go test ./test/dst                                  # the CI budget of seeds
//	INGOT_DST_SEED=123 go test ./test/dst -run TestDST  # replay one seed
//	INGOT_DST_SEEDS=1000000 go test ./test/dst -run TestDST -timeout 0
//
// Everything runs in one goroutine per seed (reconciler Workers = 1, Ironic
// reached through an in-memory http.RoundTripper), so a seed always produces
// the same run.
package dst
