package reconciler

import (
	"context"
	"errors"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/portbind"
	"github.com/ingot-dev/ingot/internal/store"
)

// guardedIronic lets an Ironic call that changes a node go out only under a
// shard lease still valid with margin (the fence in its context), bounded by
// the lease's local deadline; reads pass through. It is the last check
// before each effect: a replica paused past its lease and continued finds
// its lease gone here and sends nothing (docs/DESIGN.md §2.10).
type guardedIronic struct {
	Ironic
	k *Keeper
}

func (g guardedIronic) do(ctx context.Context, call func(context.Context) error) error {
	ctx, done, err := g.k.begin(ctx)
	if err != nil {
		return err
	}
	defer done()
	return call(ctx)
}

func (g guardedIronic) Reserve(ctx context.Context, nodeID, instanceUUID string, info map[string]any) (ironic.Node, error) {
	var n ironic.Node
	err := g.do(ctx, func(ctx context.Context) (err error) {
		n, err = g.Ironic.Reserve(ctx, nodeID, instanceUUID, info)
		return err
	})
	return n, err
}

func (g guardedIronic) Unreserve(ctx context.Context, nodeID string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.Unreserve(ctx, nodeID) })
}

func (g guardedIronic) AttachVIFTo(ctx context.Context, nodeID, vifID string, to portbind.Target) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.AttachVIFTo(ctx, nodeID, vifID, to) })
}

func (g guardedIronic) DetachVIF(ctx context.Context, nodeID, vifID string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.DetachVIF(ctx, nodeID, vifID) })
}

func (g guardedIronic) Deploy(ctx context.Context, nodeID string, req ironic.DeployRequest) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.Deploy(ctx, nodeID, req) })
}

func (g guardedIronic) Undeploy(ctx context.Context, nodeID string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.Undeploy(ctx, nodeID) })
}

func (g guardedIronic) SetPowerOff(ctx context.Context, nodeID string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.SetPowerOff(ctx, nodeID) })
}

func (g guardedIronic) SetPowerOn(ctx context.Context, nodeID string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.SetPowerOn(ctx, nodeID) })
}

func (g guardedIronic) Reboot(ctx context.Context, nodeID string, hard bool) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.Reboot(ctx, nodeID, hard) })
}

func (g guardedIronic) Rebuild(ctx context.Context, nodeID string, req ironic.DeployRequest) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.Rebuild(ctx, nodeID, req) })
}

func (g guardedIronic) Rescue(ctx context.Context, nodeID, password string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.Rescue(ctx, nodeID, password) })
}

func (g guardedIronic) Unrescue(ctx context.Context, nodeID string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.Unrescue(ctx, nodeID) })
}

func (g guardedIronic) SetStorageInterface(ctx context.Context, nodeID, iface string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.SetStorageInterface(ctx, nodeID, iface) })
}

func (g guardedIronic) CreateVolumeConnector(ctx context.Context, nodeID, connType, connectorID string) (string, error) {
	var id string
	err := g.do(ctx, func(ctx context.Context) (err error) {
		id, err = g.Ironic.CreateVolumeConnector(ctx, nodeID, connType, connectorID)
		return err
	})
	return id, err
}

func (g guardedIronic) DeleteVolumeConnector(ctx context.Context, uuid string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.DeleteVolumeConnector(ctx, uuid) })
}

func (g guardedIronic) CreateVolumeTarget(ctx context.Context, t ironic.VolumeTarget) (string, error) {
	var id string
	err := g.do(ctx, func(ctx context.Context) (err error) {
		id, err = g.Ironic.CreateVolumeTarget(ctx, t)
		return err
	})
	return id, err
}

func (g guardedIronic) DeleteVolumeTarget(ctx context.Context, uuid string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Ironic.DeleteVolumeTarget(ctx, uuid) })
}

// owned keeps the servers whose shard lease this replica holds with margin
// (every server when the reconciler runs without leases).
func (r *Reconciler) owned(servers []*lifecycle.Server) []*lifecycle.Server {
	if r.leases == nil {
		return servers
	}
	out := servers[:0]
	for _, s := range servers {
		if _, ok := r.leases.Fence(s.ID); ok {
			out = append(out, s)
		}
	}
	clear(servers[len(out):])
	return out
}

// fenced returns ctx carrying the fence of s's shard lease, so that every
// store write for s is made only while the lease holds; false when this
// replica does not hold it, or holds it under another epoch than the one
// ctx's reads were made under (readEpochs; none taken: refused too). A
// replica paused between its read of a record and its step, whose lease
// lapsed and came back meanwhile, would otherwise act on the stale record
// with a fresh fence (another replica may have moved the server on).
func (r *Reconciler) fenced(ctx context.Context, id string) (context.Context, bool) {
	if r.leases == nil {
		return ctx, true
	}
	f, ok := r.leases.Fence(id)
	if !ok {
		return ctx, false
	}
	if read, ok := ctx.Value(readEpochsKey{}).(map[int]int64); !ok || read[f.Shard] != f.Epoch {
		return ctx, false // read under another epoch (or none): read again
	}
	return store.WithFence(ctx, f), true
}

// readEpochs returns ctx carrying the epoch of every lease held now. Every
// path that reads servers to act on takes it before the read (a tick before
// its load, a fast tick before its look at Ironic, a work item before its
// record), and fenced admits a step only under those epochs.
func (r *Reconciler) readEpochs(ctx context.Context) context.Context {
	if r.leases == nil {
		return ctx
	}
	return context.WithValue(ctx, readEpochsKey{}, r.leases.Epochs())
}

// readEpochsKey carries Keeper.Epochs as taken before a read (readEpochs).
type readEpochsKey struct{}

// leaseHeld reports whether ctx's fence is still valid with margin.
func (r *Reconciler) leaseHeld(ctx context.Context) bool {
	if r.leases == nil {
		return true
	}
	f, ok := store.FenceOf(ctx)
	return ok && r.leases.Valid(f)
}

// fencedOut handles a write refused by its fence: the shard went to another
// replica, so this one forgets the lease at once and leaves the server.
func (r *Reconciler) fencedOut(ctx context.Context, err error) bool {
	if r.leases == nil || !errors.Is(err, store.ErrFenced) {
		return false
	}
	if f, ok := store.FenceOf(ctx); ok {
		r.leases.Lost(f)
	}
	return true
}
