package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
)

// NodeLister lists every node, whatever its state (implemented by
// *ironic.Client): what os-hypervisors shows.
type NodeLister interface {
	ListNodes(ctx context.Context) ([]ironic.Node, error)
}

// allNodes caches the whole inventory for the admin API, refreshed when
// older than Options.Refresh; one listing at a time.
type allNodes struct {
	mu        sync.Mutex
	nodes     []ironic.Node
	fetchedAt time.Time
}

// Nodes returns every Ironic node from a cache no older than
// Options.Refresh (one Ironic listing per refresh, however many callers).
// An inventory that cannot list every node gives none.
func (sc *Scheduler) Nodes(ctx context.Context) ([]ironic.Node, error) {
	l, ok := sc.inv.(NodeLister)
	if !ok {
		return nil, nil
	}
	sc.all.mu.Lock()
	defer sc.all.mu.Unlock()
	if sc.all.nodes != nil && sc.clock.Now().Sub(sc.all.fetchedAt) < sc.opts.Refresh {
		return sc.all.nodes, nil
	}
	nodes, err := l.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	if nodes == nil {
		nodes = []ironic.Node{}
	}
	sc.all.nodes, sc.all.fetchedAt = nodes, sc.clock.Now()
	return nodes, nil
}
