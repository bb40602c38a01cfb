package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/volume"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// mvAttachmentUpdate is 2.85: a PUT of os-volume_attachments may change
// delete_on_termination (below it, a PUT is always a swap).
const mvAttachmentUpdate = 85

// updateVolumeAttachment answers PUT /servers/{id}/os-volume_attachments/{volume}
// as Nova: from 2.85, with the same volumeId, an update of
// delete_on_termination (the other members must not change); otherwise
// Cinder's swap, refused for a volume that is not migrating (Nova's
// Ironic driver cannot swap, and ingot never migrates one).
func (s *Service) updateVolumeAttachment(w http.ResponseWriter, r *core.Request) error {
	volID := r.PathValue("volume")
	att, newID, err := parseUpdate(r)
	if err != nil {
		return err
	}
	regular := r.MV.AtLeast(mvAttachmentUpdate)
	rule := policy.VolumeAttachmentsSwap
	if regular && newID == volID {
		rule = policy.VolumeAttachmentsUpdate
	}
	sv, err := s.visibleServer(r, r.PathValue("id"), rule)
	if err != nil {
		return err
	}
	if regular {
		if err := s.updateAttachment(r, sv, volID, att); err != nil {
			return err
		}
	}
	if !regular || newID != volID {
		return s.swapRefused(r, volID, newID)
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// parseUpdate reads the PUT body as Nova's schema at the microversion
// does: volumeId (a UUID) always, the attachment's other members from 2.85.
func parseUpdate(r *core.Request) (map[string]json.RawMessage, string, error) {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return nil, "", err
	}
	var att map[string]json.RawMessage
	if raw, ok := body["volumeAttachment"]; !ok || json.Unmarshal(raw, &att) != nil || att == nil {
		return nil, "", core.BadRequest("Invalid input for field/attribute volumeAttachment. 'volumeAttachment' is a required object.")
	}
	allowed := []string{"volumeId"}
	if r.MV.AtLeast(mvAttachmentUpdate) {
		allowed = append(allowed, "id", "serverId", "device", "tag", "delete_on_termination")
	}
	for k := range att {
		if !slices.Contains(allowed, k) {
			return nil, "", core.BadRequest("Invalid input for field/attribute volumeAttachment. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	id, err := core.OptionalString(att, "volumeId", 36)
	if err != nil || !core.IsUUID(id) {
		return nil, "", core.BadRequest("Invalid input for field/attribute volumeId. Value: %s. '%s' is not a 'uuid'", att["volumeId"], id)
	}
	return att, id, nil
}

// updateAttachment is Nova's regular update: the volume must be the
// server's, id, serverId, device and tag as they are; delete_on_termination
// is recorded (the registry's flag in the same write).
func (s *Service) updateAttachment(r *core.Request, sv *lifecycle.Server, volID string, att map[string]json.RawMessage) error {
	row, err := s.Cfg.Store.GetVolume(r.Context(), volID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.ServerID != sv.ID) {
		return core.NotFound("No volume Block Device Mapping with id %s.", volID)
	}
	if err != nil {
		return fmt.Errorf("volume %s: %w", volID, err)
	}
	device := ""
	if d := volume.Device(row.BootIndex); d != nil {
		device = *d
	}
	for _, m := range []struct{ key, want string }{{"id", volID}, {"serverId", sv.ID}, {"device", device}, {"tag", volumeTag(sv, volID)}} {
		if _, ok := att[m.key]; !ok {
			continue
		}
		if got, err := core.OptionalString(att, m.key, 255); err != nil || got != m.want {
			return core.BadRequest("The %s property is not mutable", m.key)
		}
	}
	raw, ok := att["delete_on_termination"]
	if !ok {
		return nil
	}
	dot, err := core.BoolValue(raw, "delete_on_termination")
	if err != nil {
		return err
	}
	_, err = s.Cfg.Store.UpdateServer(r.Context(), sv.ID, nil, func(cur *lifecycle.Server) error {
		// By the ids the build recorded too: a volume it made has none in the Spec.
		for i, ref := range cur.Volumes() {
			if ref.ID == volID {
				cur.Spec.Volumes[i].DeleteOnTermination = dot
			}
		}
		cur.UpdatedAt = s.Cfg.Clock.Now().UTC()
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Instance %s could not be found.", sv.ID)
	}
	return err
}

// swapRefused is Nova's answer to a swap outside a volume migration: 404
// for an attached volume (the path's) the caller cannot see, 400 for a new
// one (the body's) they cannot see, else 409.
func (s *Service) swapRefused(r *core.Request, volID, newID string) error {
	if err := s.swapVolumeVisible(r, volID); err != nil {
		return err
	}
	if err := s.swapVolumeVisible(r, newID); err != nil {
		// A missing resource named in the body is the request's fault.
		var e *core.APIError
		if errors.As(err, &e) && e.Status == http.StatusNotFound {
			return core.BadRequest("%s", e.Message)
		}
		return err
	}
	return core.Conflict("volume %s is not migrating; this API should only be called by Cinder", volID)
}

// swapVolumeVisible is 404 when the caller cannot see the volume.
func (s *Service) swapVolumeVisible(r *core.Request, volID string) error {
	if s.Cfg.Cinder != nil {
		_, err := s.cinderVolume(r, volID)
		return err
	}
	if _, err := s.Cfg.Store.GetVolume(r.Context(), volID); errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Volume %s could not be found.", volID)
	} else if err != nil {
		return fmt.Errorf("volume %s: %w", volID, err)
	}
	return nil
}

// volumeTag is the tag of sv's block device volID ("" for none).
func volumeTag(sv *lifecycle.Server, volID string) string {
	for _, ref := range sv.Volumes() {
		if ref.ID == volID && ref.Tag != "" {
			return ref.Tag
		}
	}
	return ""
}
