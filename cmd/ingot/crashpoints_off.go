//go:build !crashpoints

package main

// crashStep is nil in normal builds: the crash points of the kill -9 suite
// exist only in binaries built with -tags crashpoints (see crashpoints.go).
func crashStep() func(point string) { return nil }
