package volume

import (
	"encoding/json"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/cinder"
)

// Nova's snapshot proxy (os-snapshots) until 2.35, over Cinder's snapshots
// with the caller's token, as os-volumes: Cinder scopes every call to the
// token's project, so a user sees and touches only their project's
// snapshots (another's is 404).

// novaSnapshotView is Nova's snapshot proxy view
// (_translate_snapshot_summary_view; the detail view is the same).
type novaSnapshotView struct {
	ID                 string  `json:"id"`
	VolumeID           string  `json:"volumeId"`
	Status             string  `json:"status"`
	Size               int     `json:"size"`
	CreatedAt          *string `json:"createdAt"`
	DisplayName        string  `json:"displayName"`
	DisplayDescription string  `json:"displayDescription"`
}

func novaSnapshot(s cinder.Snapshot) novaSnapshotView {
	return novaSnapshotView{ID: s.ID, VolumeID: s.VolumeID, Status: s.Status, Size: s.SizeGB,
		CreatedAt: novaTime(s.CreatedAt), DisplayName: s.Name, DisplayDescription: s.Description}
}

func (s *Service) novaSnapshots(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	ss, err := c.ListSnapshots(r.Context())
	if err != nil {
		return proxyError(err, "")
	}
	if ss, err = core.Limited(r.URL.Query(), ss); err != nil {
		return err
	}
	out := make([]novaSnapshotView, 0, len(ss))
	for _, sn := range ss {
		out = append(out, novaSnapshot(sn))
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"snapshots": out})
	return nil
}

func (s *Service) novaSnapshot(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	sn, err := c.GetSnapshot(r.Context(), r.PathValue("id"))
	if err != nil {
		return proxyError(err, r.PathValue("id"))
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"snapshot": novaSnapshot(sn)})
	return nil
}

// novaCreateSnapshot answers 200 with the snapshot (creating), as Nova.
// NOTE: Nova answers an unknown volume, or an in-use one without force,
// with a 500 (its expected errors are 400 and 403 only); ingot gives the
// 404 and 400 those mean.
func (s *Service) novaCreateSnapshot(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	fields, err := proxyBody(r, "snapshot", "volume_id", "force", "display_name", "display_description")
	if err != nil {
		return err
	}
	var spec cinder.SnapshotSpec
	if err := json.Unmarshal(fields["volume_id"], &spec.VolumeID); err != nil || spec.VolumeID == "" {
		return core.BadRequest("Invalid input for field/attribute snapshot. 'volume_id' is a required property")
	}
	if spec.Force, err = core.BoolValue(fields["force"], "force"); err != nil {
		return err
	}
	if spec.Name, err = core.OptionalString(fields, "display_name", 255); err != nil {
		return err
	}
	if spec.Description, err = core.OptionalString(fields, "display_description", 255); err != nil {
		return err
	}
	sn, err := c.CreateSnapshot(r.Context(), spec)
	if err != nil {
		return proxyError(err, spec.VolumeID)
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"snapshot": novaSnapshot(sn)})
	return nil
}

func (s *Service) novaDeleteSnapshot(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	if err := c.DeleteSnapshot(r.Context(), r.PathValue("id")); err != nil {
		return proxyError(err, r.PathValue("id"))
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
