package adopt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/nova"
	"github.com/ingot-dev/ingot/internal/store"
)

// Cinder is what adoption reads of Cinder (volume.backend cinder), with
// every project's attachments in sight. Read only.
type Cinder interface {
	GetVolume(ctx context.Context, id string) (cinder.Volume, error)
	ListAttachments(ctx context.Context, serverID, volumeID string) ([]cinder.Attachment, error)
}

// adoptedVolumes are an instance's volumes as ingot records them: the
// server's references, and the registry rows held in-use on its node with
// the Cinder attachment the release deletes.
type adoptedVolumes struct {
	refs []lifecycle.VolumeRef
	rows []store.Volume
	// targets are the Ironic volume targets, by volume (the report's).
	targets map[string]string
}

// volumes matches what the three services show of an instance's volumes:
// every volume Nova lists (fromNova; from Ironic alone, the targets' volumes,
// none deleted with the server) must have one Ironic volume target on the
// node and one Cinder attachment for the server, attached, and every
// target must be one of them. A reason when they do not match: ingot would
// not release what it did not record (I11).
func (a *Adopter) volumes(ctx context.Context, n ironic.Deployed, projectID string, targets []ironic.VolumeTarget, fromNova []nova.Volume, haveNova bool) (adoptedVolumes, string, error) {
	out := adoptedVolumes{targets: map[string]string{}}
	if len(targets) == 0 && len(fromNova) == 0 {
		return out, "", nil
	}
	if a.d.Cinder == nil {
		return out, fmt.Sprintf("%d volume targets on the node, %d volumes attached: adopting volumes needs volume.backend: cinder",
			len(targets), len(fromNova)), nil
	}
	byVol := map[string]ironic.VolumeTarget{}
	for _, t := range targets {
		if _, dup := byVol[t.VolumeID]; dup {
			return out, fmt.Sprintf("volume %s: two volume targets on the node", t.VolumeID), nil
		}
		byVol[t.VolumeID] = t
	}
	want := fromNova
	if !haveNova {
		for _, t := range targets {
			want = append(want, nova.Volume{ID: t.VolumeID})
		}
	}
	listed := map[string]bool{}
	for _, w := range want {
		listed[w.ID] = true
	}
	for _, t := range targets {
		if !listed[t.VolumeID] {
			return out, fmt.Sprintf("volume %s: the node has volume target %s of it, Nova does not show it attached", t.VolumeID, t.UUID), nil
		}
	}
	for _, w := range want {
		t, ok := byVol[w.ID]
		if !ok {
			return out, fmt.Sprintf("volume %s: Nova shows it attached, the node has no volume target of it", w.ID), nil
		}
		row, why, err := a.volume(ctx, n, projectID, w, t)
		if why != "" || err != nil {
			return adoptedVolumes{}, why, err
		}
		boot := -1
		if t.BootIndex == 0 {
			boot = 0
		}
		out.refs = append(out.refs, lifecycle.VolumeRef{ID: w.ID, BootIndex: boot, DeleteOnTermination: w.DeleteOnTermination})
		out.rows = append(out.rows, row)
		out.targets[w.ID] = t.UUID
	}
	slices.SortFunc(out.refs, func(x, y lifecycle.VolumeRef) int { return strings.Compare(x.ID, y.ID) })
	return out, "", nil
}

// volume checks one volume in Cinder and returns its registry row.
func (a *Adopter) volume(ctx context.Context, n ironic.Deployed, projectID string, w nova.Volume, t ironic.VolumeTarget) (store.Volume, string, error) {
	v, err := a.d.Cinder.GetVolume(ctx, w.ID)
	switch {
	case errors.Is(err, cinder.ErrVolumeNotFound):
		return store.Volume{}, fmt.Sprintf("volume %s: Cinder has no such volume", w.ID), nil
	case err != nil:
		return store.Volume{}, "", fmt.Errorf("Cinder volume %s: %w", w.ID, err)
	case v.ProjectID != "" && v.ProjectID != projectID:
		return store.Volume{}, fmt.Sprintf("volume %s: project %s's, the server is project %s's", w.ID, v.ProjectID, projectID), nil
	case v.Status != "in-use":
		return store.Volume{}, fmt.Sprintf("volume %s: Cinder shows it %s, not in-use", w.ID, v.Status), nil
	}
	atts, err := a.d.Cinder.ListAttachments(ctx, n.InstanceUUID, w.ID)
	if err != nil {
		return store.Volume{}, "", fmt.Errorf("Cinder attachments of volume %s: %w", w.ID, err)
	}
	if len(atts) != 1 {
		return store.Volume{}, fmt.Sprintf("volume %s: %d Cinder attachments for the server, want 1", w.ID, len(atts)), nil
	}
	if atts[0].Status != "attached" {
		return store.Volume{}, fmt.Sprintf("volume %s: Cinder attachment %s is %s, not attached", w.ID, atts[0].ID, atts[0].Status), nil
	}
	held, err := a.d.Store.GetVolume(ctx, w.ID)
	switch {
	case err == nil && held.ServerID != "" && held.ServerID != n.InstanceUUID:
		return store.Volume{}, fmt.Sprintf("conflict: volume %s is held by ingot server %s", w.ID, held.ServerID), nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return store.Volume{}, "", fmt.Errorf("volume %s: %w", w.ID, err)
	}
	return store.Volume{ID: v.ID, Name: v.Name, Description: v.Description, ImageID: v.ImageID, SizeGB: max(v.SizeGB, 1),
		ProjectID: firstOf(v.ProjectID, projectID), CreatedAt: v.CreatedAt, AttachmentID: atts[0].ID, AttachmentNode: n.UUID,
		BootIndex: t.BootIndex, DeleteOnTermination: w.DeleteOnTermination}, "", nil
}

// enterVolumes puts the volumes in ingot's registry, free, for
// AdoptServer to hold (a row a run stopped before its adoption left is
// taken as it is).
func (a *Adopter) enterVolumes(ctx context.Context, rows []store.Volume, userID string) error {
	for _, v := range rows {
		r := v
		r.UserID = userID
		if r.CreatedAt.IsZero() {
			r.CreatedAt = a.d.Now().UTC()
		}
		if err := a.d.Store.CreateVolume(ctx, r); err != nil && !errors.Is(err, store.ErrExists) {
			return fmt.Errorf("volume %s: %w", v.ID, err)
		}
	}
	return nil
}

// describe is a volume as the report lists it.
func (av adoptedVolumes) describe() []string {
	var out []string
	for _, r := range av.rows {
		fate := "detached, kept, when the server goes"
		if r.DeleteOnTermination {
			fate = "deleted with the server (delete_on_termination)"
		}
		out = append(out, fmt.Sprintf("%s boot_index %d attachment %s target %s (%s)", r.ID, r.BootIndex, r.AttachmentID, av.targets[r.ID], fate))
	}
	return out
}
