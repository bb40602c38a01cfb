package store

import (
	"context"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Save is one SaveServer call of a batch.
type Save struct {
	Server *lifecycle.Server
	Events []lifecycle.Event
}

// BatchSaver is implemented by a store that can carry many SaveServer
// calls in one transaction (the reconciler's cheap pass under a burst:
// thousands of bookkeeping writes that precede no effect). Each save keeps
// SaveServer's contract on its own — compare-and-swap on its Version, its
// events with it, Version incremented on success — and the returned slice
// holds each one's error (nil: written); one failing save does not undo
// the others. Optional: the reconciler falls back to SaveServer.
type BatchSaver interface {
	SaveServers(ctx context.Context, saves []Save) []error
}
