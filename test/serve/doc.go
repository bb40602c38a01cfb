// Package serve runs the `ingot serve` binary the way a user does and checks
// what only the whole process shows: one process owns a database, so a
// second `serve` on it exits at once, naming the first (S25).
//
//	go test ./test/serve
package serve
