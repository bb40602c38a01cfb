package reconciler

import (
	"context"

	"github.com/ingot-dev/ingot/internal/cinder"
)

// guardedCinder is guardedIronic for Cinder: a call that changes an
// attachment or a volume goes out only under a shard lease still valid
// with margin; the lists pass through. A replica paused past its lease
// and continued makes no attachment for a server another replica now
// builds, and deletes none it uses.
type guardedCinder struct {
	Cinder
	k *Keeper
}

func (g guardedCinder) do(ctx context.Context, call func(context.Context) error) error {
	return guardedIronic{k: g.k}.do(ctx, call)
}

func (g guardedCinder) CreateAttachment(ctx context.Context, volumeID, serverID string, k *cinder.Connector) (cinder.Attachment, error) {
	var a cinder.Attachment
	err := g.do(ctx, func(ctx context.Context) (err error) {
		a, err = g.Cinder.CreateAttachment(ctx, volumeID, serverID, k)
		return err
	})
	return a, err
}

func (g guardedCinder) UpdateAttachment(ctx context.Context, id string, k cinder.Connector) (cinder.Attachment, error) {
	var a cinder.Attachment
	err := g.do(ctx, func(ctx context.Context) (err error) {
		a, err = g.Cinder.UpdateAttachment(ctx, id, k)
		return err
	})
	return a, err
}

func (g guardedCinder) CompleteAttachment(ctx context.Context, id string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Cinder.CompleteAttachment(ctx, id) })
}

func (g guardedCinder) DeleteAttachment(ctx context.Context, id string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Cinder.DeleteAttachment(ctx, id) })
}

func (g guardedCinder) DeleteVolume(ctx context.Context, id string) error {
	return g.do(ctx, func(ctx context.Context) error { return g.Cinder.DeleteVolume(ctx, id) })
}

func (g guardedCinder) CreateVolumeAs(ctx context.Context, user string, spec cinder.VolumeSpec) (cinder.Volume, error) {
	var v cinder.Volume
	err := g.do(ctx, func(ctx context.Context) (err error) {
		v, err = g.Cinder.CreateVolumeAs(ctx, user, spec)
		return err
	})
	return v, err
}
