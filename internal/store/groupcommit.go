package store

import (
	"context"
	"sync"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// GroupCommit joins SaveServer calls made at the same time (the
// reconciler's workers) into one SaveServers transaction: a commit costs
// about as much as the writes it carries, so under a burst most of a save's
// cost was its own commit. It adds no wait: a save finding no commit under
// way commits at once, alone; saves arriving meanwhile queue, and the first
// of them commits the queue as one batch when the commit ends. Each save
// keeps SaveServer's contract (BatchSaver's), fence included.
type GroupCommit struct {
	bs Batch

	mu    sync.Mutex
	busy  bool // a commit is under way
	queue []*groupSave
}

// Batch is what GroupCommit needs of a store: the batch and the single
// save (one save alone skips the batch's savepoint).
type Batch interface {
	BatchSaver
	SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error
}

type groupSave struct {
	ctx  context.Context
	save Save
	err  error
	// done is closed with err set, or after lead is set: this save then
	// commits the queue.
	done chan struct{}
	lead bool
}

// NewGroupCommit joins concurrent saves to bs.
func NewGroupCommit(bs Batch) *GroupCommit { return &GroupCommit{bs: bs} }

// SaveServer is bs.SaveServer, carried in one transaction with the saves
// made while another commit was under way.
func (g *GroupCommit) SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error {
	me := &groupSave{ctx: ctx, save: Save{Server: s, Events: events}, done: make(chan struct{})}
	if f, ok := FenceOf(ctx); ok {
		me.save.Fence = &f
	}
	g.mu.Lock()
	if g.busy {
		g.queue = append(g.queue, me)
		g.mu.Unlock()
		<-me.done // never abandoned: the save may be written, and s.Version with it
		if !me.lead {
			return me.err
		}
		g.mu.Lock()
		batch := g.queue
		g.queue = nil
		g.mu.Unlock()
		g.commit(batch)
	} else {
		g.busy = true
		g.mu.Unlock()
		g.commit([]*groupSave{me})
	}
	g.handOver()
	return me.err
}

// Waiting is the number of saves queued behind the commit under way.
func (g *GroupCommit) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// commit writes batch and tells each of its saves but the caller (batch's
// first, which reads its own err) how it went.
func (g *GroupCommit) commit(batch []*groupSave) {
	if len(batch) == 1 {
		batch[0].err = g.bs.SaveServer(batch[0].ctx, batch[0].save.Server, batch[0].save.Events...)
		return
	}
	saves := make([]Save, len(batch))
	for i, p := range batch {
		saves[i] = p.save
	}
	// One caller's cancellation, or its fence (each save carries its own),
	// must not fail the others' writes.
	ctx := context.WithValue(context.WithoutCancel(batch[0].ctx), fenceKey{}, nil)
	errs := g.bs.SaveServers(ctx, saves)
	for i, p := range batch {
		p.err = errs[i]
		if i > 0 {
			close(p.done)
		}
	}
}

// handOver ends a commit: the first queued save, if any, commits the queue
// next (so no caller serves others for ever); else nobody is committing.
func (g *GroupCommit) handOver() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.busy = false
		return
	}
	next := g.queue[0]
	next.lead = true
	close(next.done)
}
