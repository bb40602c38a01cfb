package store

import (
	"context"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// GroupCommit joins SaveServer calls made at the same time (the
// reconciler's workers) into one SaveServers transaction (a Joiner): a save
// finding no commit under way commits at once, alone; saves arriving
// meanwhile queue, and the first of them commits the queue as one batch
// when the commit ends. Each save keeps SaveServer's contract
// (BatchSaver's), fence included.
type GroupCommit struct {
	bs Batch
	j  *Joiner[*groupSave]
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
}

// NewGroupCommit joins concurrent saves to bs.
func NewGroupCommit(bs Batch) *GroupCommit {
	g := &GroupCommit{bs: bs}
	g.j = NewJoiner(g.commit)
	return g
}

// SaveServer is bs.SaveServer, carried in one transaction with the saves
// made while another commit was under way.
func (g *GroupCommit) SaveServer(ctx context.Context, s *lifecycle.Server, events ...lifecycle.Event) error {
	me := &groupSave{ctx: ctx, save: Save{Server: s, Events: events}}
	if f, ok := FenceOf(ctx); ok {
		me.save.Fence = &f
	}
	g.j.Do(me)
	return me.err
}

// Waiting is the number of saves queued behind the commit under way.
func (g *GroupCommit) Waiting() int { return g.j.Waiting() }

// commit writes batch, each save's outcome in its err.
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
	}
}
