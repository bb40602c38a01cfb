// Package testlog is a log sink for tests: what a service under test
// logged, safe to write from its goroutines while the test reads it.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer collects writes; the zero value is ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
