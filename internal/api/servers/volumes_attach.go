package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/volume"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-volume_attachments' POST, DELETE and PUT, as Nova answers them. An
// attach or detach is a day-2 operation (lifecycle/volumeops.go): checked
// against the lock and state, recorded with its instance action and, for
// an attach, the volume's hold, in one transaction; the reconciler does
// the rest. Ironic attaches a node's volume targets at power-on, so the
// machine sees the volume from its next boot.

func (s *Service) VolumeAttachmentRoutes() {
	s.Compute("POST /v2.1/servers/{id}/os-volume_attachments", s.attachVolume)
	s.Compute("DELETE /v2.1/servers/{id}/os-volume_attachments/{volume}", s.detachVolume)
	s.Compute("PUT /v2.1/servers/{id}/os-volume_attachments/{volume}", s.updateVolumeAttachment)
}

// attachRequest is the POST's volumeAttachment.
type attachRequest struct {
	volumeID, device, tag string
	deleteOnTermination   bool
}

// parseAttach reads the POST body as Nova's schema at the request's
// microversion does (tag from 2.49, delete_on_termination from 2.79).
func parseAttach(r *core.Request) (attachRequest, error) {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return attachRequest{}, err
	}
	var out attachRequest
	raw, ok := body["volumeAttachment"]
	for k := range body {
		if k != "volumeAttachment" {
			return out, core.BadRequest("Invalid input for field/attribute body. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	if !ok {
		return out, core.BadRequest("Invalid input for field/attribute body. 'volumeAttachment' is a required property.")
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil || f == nil {
		return out, core.BadRequest("Invalid input for field/attribute volumeAttachment. Value: %s. It is not of type 'object'.", raw)
	}
	allowed := []string{"volumeId", "device"}
	if r.MV.AtLeast(49) {
		allowed = append(allowed, "tag")
	}
	if r.MV.AtLeast(mvAttachmentDeleteFlag) {
		allowed = append(allowed, "delete_on_termination")
	}
	for k := range f {
		if !slices.Contains(allowed, k) {
			return out, core.BadRequest("Invalid input for field/attribute volumeAttachment. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	if _, ok := f["volumeId"]; !ok {
		return out, core.BadRequest("Invalid input for field/attribute volumeAttachment. 'volumeId' is a required property.")
	}
	if out.volumeID, err = core.OptionalString(f, "volumeId", 36); err != nil || !core.IsUUID(out.volumeID) {
		return out, core.BadRequest("Invalid input for field/attribute volumeId. Value: %s. '%s' is not a 'uuid'", f["volumeId"], out.volumeID)
	}
	if out.device, err = core.OptionalString(f, "device", 255); err != nil {
		return out, err
	}
	if out.tag, err = core.OptionalString(f, "tag", 60); err != nil {
		return out, err
	}
	if raw, ok := f["delete_on_termination"]; ok {
		if out.deleteOnTermination, err = core.BoolValue(raw, "delete_on_termination"); err != nil {
			return out, err
		}
	}
	return out, nil
}

// attachVolume answers POST /servers/{id}/os-volume_attachments: 200 with
// the attachment as Nova's create shows it (Nova answers 200 too).
func (s *Service) attachVolume(w http.ResponseWriter, r *core.Request) error {
	// Nova validates the body before it looks at the server.
	req, err := parseAttach(r)
	if err != nil {
		return err
	}
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.VolumeAttachmentsCreate)
	if err != nil {
		return err
	}
	op := opRequest{kind: lifecycle.OpAttachVolume, volumeID: req.volumeID}
	if err := checkOp(sv, op, r.IsAdmin()); err != nil {
		return err
	}
	if req.tag != "" {
		// Nova's Ironic driver does not report supports_tagged_attach_volume.
		return core.BadRequest("Tagged volume attachment is not supported for this server instance.")
	}
	if err := s.attachable(r, sv, req.volumeID); err != nil {
		return err
	}
	ref := lifecycle.VolumeRef{ID: req.volumeID, BootIndex: -1, DeleteOnTermination: req.deleteOnTermination}
	op.change = func(cur *lifecycle.Server) {
		cur.Spec.Volumes = append(slices.DeleteFunc(cur.Spec.Volumes, func(v lifecycle.VolumeRef) bool { return v.ID == ref.ID }), ref)
	}
	if _, err := s.recordOp(r, sv, op); err != nil {
		switch {
		case errors.Is(err, store.ErrVolumeInUse):
			return core.BadRequest("Invalid volume: %s.", strings.TrimSuffix(errors.Unwrap(err).Error(), ": "+store.ErrVolumeInUse.Error()))
		case errors.Is(err, store.ErrNotFound):
			return core.NotFound("Volume %s could not be found.", req.volumeID)
		}
		return err
	}
	a := map[string]any{"id": req.volumeID, "serverId": sv.ID, "volumeId": req.volumeID, "device": volume.Device(-1)}
	if r.MV.AtLeast(mvAttachmentTag) {
		a["tag"] = nil
	}
	if r.MV.AtLeast(mvAttachmentDeleteFlag) {
		a["delete_on_termination"] = req.deleteOnTermination
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"volumeAttachment": a})
	return nil
}

// attachable is what Nova's compute API checks of the volume before it
// reserves it: it exists for the caller (404), is not attached to this
// server already, and is available (400). With Cinder the volume is read
// with the caller's token and entered in the registry, where the attach's
// write holds it.
func (s *Service) attachable(r *core.Request, sv *lifecycle.Server, volID string) error {
	if s.Cfg.Cinder == nil && s.Cfg.Embedded.RecordsOnly {
		return core.BadRequest("Invalid volume: this cloud's volumes are records only " +
			"(volume.embedded.records_only): no iSCSI target serves them, so no server can attach one.")
	}
	row, err := s.Cfg.Store.GetVolume(r.Context(), volID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("volume %s: %w", volID, err)
	}
	if err == nil && row.ServerID == sv.ID {
		return core.BadRequest("Invalid volume: volume %s already attached", volID)
	}
	status := row.Status
	if s.Cfg.Cinder != nil {
		v, err := s.cinderVolume(r, volID)
		if err != nil {
			return err
		}
		status = v.Status
		if status == store.VolumeAvailable {
			nv := store.Volume{ID: v.ID, Name: v.Name, SizeGB: max(v.SizeGB, 1), ProjectID: v.ProjectID,
				UserID: r.Ident.UserID, CreatedAt: s.Cfg.Clock.Now()}
			if err := s.Cfg.Store.CreateVolume(r.Context(), nv); err != nil && !errors.Is(err, store.ErrExists) {
				return fmt.Errorf("volume %s: %w", volID, err)
			}
		}
	} else if errors.Is(err, store.ErrNotFound) || (row.ProjectID != "" && row.ProjectID != sv.ProjectID) {
		return core.NotFound("Volume %s could not be found.", volID)
	}
	if status != store.VolumeAvailable {
		return core.BadRequest("Invalid volume: volume '%s' status must be 'available'. Currently in '%s'", volID, status)
	}
	return nil
}

// detachVolume answers DELETE /servers/{id}/os-volume_attachments/{volume}:
// 202 once the detach is recorded, from ACTIVE or SHUTOFF (409, Nova's
// state conflict, otherwise). Ironic removes a volume target only from a
// powered-off node, so a detach from ACTIVE powers the machine off and on
// again.
func (s *Service) detachVolume(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.VolumeAttachmentsDelete)
	if err != nil {
		return err
	}
	volID := r.PathValue("volume")
	row, err := s.Cfg.Store.GetVolume(r.Context(), volID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("volume %s: %w", volID, err)
	}
	if s.Cfg.Cinder != nil {
		if _, err := s.cinderVolume(r, volID); err != nil {
			return err
		}
	} else if errors.Is(err, store.ErrNotFound) || (row.ProjectID != "" && row.ProjectID != sv.ProjectID && row.ServerID != sv.ID) {
		return core.NotFound("Volume %s could not be found.", volID)
	}
	if row.ServerID != sv.ID {
		return core.NotFound("Instance %s is not attached to volume %s", sv.ID, volID)
	}
	if row.BootIndex == 0 {
		return core.BadRequest("Cannot detach a root device volume")
	}
	return s.acceptOp(w, r, sv, opRequest{kind: lifecycle.OpDetachVolume, volumeID: volID})
}

// cinderVolume reads a volume in Cinder with the caller's token: Nova's
// 404 when Cinder does not show it to them.
func (s *Service) cinderVolume(r *core.Request, volID string) (cinder.Volume, error) {
	c := s.Cfg.Cinder.WithUser(cinder.StaticToken(r.Header.Get("X-Auth-Token")))
	v, err := c.GetVolume(r.Context(), volID)
	switch {
	case errors.Is(err, cinder.ErrVolumeNotFound), errors.Is(err, cinder.ErrForbidden):
		return v, core.NotFound("Volume %s could not be found.", volID)
	case err != nil:
		return v, core.CinderError(err, "volume "+volID)
	}
	return v, nil
}
