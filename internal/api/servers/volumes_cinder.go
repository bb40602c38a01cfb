package servers

import (
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// holdCinderVolumes checks, with the caller's token, that Cinder gives
// them each volume of refs and that it is available (Nova's 400s
// otherwise), and enters each in the registry, where CreateServer's
// reservation holds it for the server: the reconciler attaches what the
// registry says the server holds (volume.backend: cinder). A row left by
// a create that failed after this is reused by the next.
func (s *Service) holdCinderVolumes(r *core.Request, refs []lifecycle.VolumeRef) error {
	c := s.Cfg.Cinder.WithUser(cinder.StaticToken(r.Header.Get("X-Auth-Token")))
	for _, ref := range refs {
		v, err := c.GetVolume(r.Context(), ref.ID)
		switch {
		case errors.Is(err, cinder.ErrVolumeNotFound), errors.Is(err, cinder.ErrForbidden):
			return core.BadRequest("Block Device Mapping is Invalid: failed to get volume %s.", ref.ID)
		case err != nil:
			return core.CinderError(err, "volume "+ref.ID)
		case v.Status != "available":
			return core.BadRequest("Invalid volume: volume '%s' status must be 'available'. Currently in '%s'", ref.ID, v.Status)
		case ref.BootIndex == 0 && !v.Bootable:
			return core.BadRequest("Block Device %s is not bootable.", ref.ID)
		}
		row := store.Volume{ID: v.ID, Name: v.Name, SizeGB: max(v.SizeGB, 1), ProjectID: v.ProjectID,
			UserID: r.Ident.UserID, CreatedAt: s.Cfg.Clock.Now()}
		if err := s.Cfg.Store.CreateVolume(r.Context(), row); err != nil && !errors.Is(err, store.ErrExists) {
			return fmt.Errorf("volume %s: %w", ref.ID, err)
		}
	}
	return nil
}
