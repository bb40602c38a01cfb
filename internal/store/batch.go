package store

import (
	"context"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Save is one SaveServer call of a batch.
type Save struct {
	Server *lifecycle.Server
	Events []lifecycle.Event
	// Fence, when set, is checked for this save alone, as WithFence does
	// for a single write (the saves of one batch span several shards).
	Fence *Fence
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

// IDVersion is a server's id and record version.
type IDVersion struct {
	ID      string
	Version int64
}

// WorkLister is implemented by a store that can tell the servers needing
// work by id and version alone, and load a chosen few: the reconciler then
// decodes, each tick, only the records that changed since it last read
// them instead of every one (under a burst of 10,000 builds the full load
// is most of a tick's cost). Optional: the reconciler falls back to
// ServersNeedingWork.
type WorkLister interface {
	// NeedsWorkVersions returns the id and version of every server of the
	// given shards with NeedsWork() true (as ServersNeedingWork would return
	// them, restricted to those shards), by id. An index on the stored
	// shard hash serves it: a replica reads nothing of the others' shards.
	NeedsWorkVersions(ctx context.Context, shards Shards) ([]IDVersion, error)
	// ServersByID returns the servers with these ids, by id; unknown ids
	// are left out.
	ServersByID(ctx context.Context, ids []string) ([]*lifecycle.Server, error)
}
