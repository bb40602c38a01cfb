// Package serve runs the `ingot serve` binary the way a user does and checks
// what only the whole process shows: one process owns a database, so a
// second `serve` on it exits at once, naming the first (S25); and
// `serve --dev` keeps its servers across a restart, graceful or kill -9,
// even mid-deploy, because the built-in simulator keeps its state in the
// data directory.
//
//	go test ./test/serve
package serve
