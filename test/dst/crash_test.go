package dst

import (
	"context"
	"errors"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// kill is kill -9 of replica r at this instant: from now on nothing it does
// reaches the database or Ironic; the tick in progress unwinds on errors
// and its in-memory state is thrown away by restart.
func (w *world) kill(r *replica) {
	r.dead = true
	r.cst.dead = true
	if r.cancel != nil {
		r.cancel()
	}
}

// crashStore is the real store, cut off from the moment ingot is killed.
type crashStore struct {
	store.Store
	leases store.Leases
	w      *world
	dead   bool
}

var errKilled = errors.New("dst: process killed")

func (c *crashStore) SaveServer(ctx context.Context, s *lifecycle.Server, ev ...lifecycle.Event) error {
	if c.dead {
		return errKilled
	}
	if _, ok := store.FenceOf(ctx); !ok {
		c.w.violate("the reconciler saved %s with no lease fence", c.w.sname(s.ID))
	}
	err := c.Store.SaveServer(ctx, s, ev...)
	switch {
	case errors.Is(err, store.ErrNodeTaken):
		c.w.nodeTaken++ // two replicas chose one node: the loser chooses again
	case errors.Is(err, store.ErrFenced):
		c.w.fenced++
	}
	return err
}

func (c *crashStore) ClaimLeases(ctx context.Context, cl store.Claim) (store.Claimed, error) {
	if c.dead {
		return store.Claimed{}, errKilled
	}
	return c.leases.ClaimLeases(ctx, cl)
}

func (c *crashStore) ReleaseLeases(ctx context.Context, host string, shards []int) error {
	if c.dead {
		return errKilled
	}
	return c.leases.ReleaseLeases(ctx, host, shards)
}

func (c *crashStore) ListLeases(ctx context.Context) ([]store.Lease, error) {
	if c.dead {
		return nil, errKilled
	}
	return c.leases.ListLeases(ctx)
}

func (c *crashStore) CreatePort(ctx context.Context, p store.Port) error {
	if c.dead {
		return errKilled
	}
	return c.Store.CreatePort(ctx, p)
}

func (c *crashStore) SetPortVIF(ctx context.Context, portID, node string) error {
	if c.dead {
		return errKilled
	}
	return c.Store.SetPortVIF(ctx, portID, node)
}

func (c *crashStore) BindPort(ctx context.Context, portID, node, mac string, b store.Binding) error {
	if c.dead {
		return errKilled
	}
	return c.Store.BindPort(ctx, portID, node, mac, b)
}

func (c *crashStore) DeletePort(ctx context.Context, portID string) error {
	if c.dead {
		return errKilled
	}
	return c.Store.DeletePort(ctx, portID)
}

func (c *crashStore) UpdateVolume(ctx context.Context, v store.Volume) error {
	if c.dead {
		return errKilled
	}
	return c.Store.UpdateVolume(ctx, v)
}

func (c *crashStore) ReleaseVolume(ctx context.Context, id, serverID string, destroy bool) error {
	if c.dead {
		return errKilled
	}
	return c.Store.ReleaseVolume(ctx, id, serverID, destroy)
}
