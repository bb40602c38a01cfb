package volume

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/policy"
)

// Nova's volume proxy (os-volumes) until 2.35, over Cinder with the
// caller's token (volume.backend: cinder); from 2.36 it is gone (404), as
// in Nova.

// mvNoVolumeProxy is 2.36: the proxy APIs gone.
const mvNoVolumeProxy = 36

// CinderRoutes registers os-volumes (served with the cinder backend).
func (s *Service) CinderRoutes() {
	s.Compute("GET /v2.1/os-volumes", s.proxied(policy.NovaVolumesList, s.novaVolumes))
	s.Compute("GET /v2.1/os-volumes/detail", s.proxied(policy.NovaVolumesDetail, s.novaVolumes))
	s.Compute("GET /v2.1/os-volumes/{id}", s.proxied(policy.NovaVolumesShow, s.novaVolume))
	s.Compute("POST /v2.1/os-volumes", s.proxied(policy.NovaVolumesCreate, s.novaCreateVolume))
	s.Compute("DELETE /v2.1/os-volumes/{id}", s.proxied(policy.NovaVolumesDelete, s.novaDeleteVolume))
}

type proxiedFunc func(w http.ResponseWriter, r *core.Request, c *cinder.Client) error

// proxied checks the microversion and the rule, then calls h with a
// Cinder client carrying the caller's token.
func (s *Service) proxied(rule string, h proxiedFunc) core.HandlerFunc {
	return core.OwnRule(rule, func(w http.ResponseWriter, r *core.Request) error {
		if r.MV.AtLeast(mvNoVolumeProxy) {
			return core.NotFound("The resource could not be found.")
		}
		return h(w, r, s.Cfg.Cinder.WithUser(cinder.StaticToken(r.Header.Get("X-Auth-Token"))))
	})
}

// novaVolumeView is Nova's volume proxy view (_translate_volume_summary_view).
type novaVolumeView struct {
	ID                 string           `json:"id"`
	Status             string           `json:"status"`
	Size               int              `json:"size"`
	AvailabilityZone   string           `json:"availabilityZone"`
	CreatedAt          *string          `json:"createdAt"`
	Attachments        []map[string]any `json:"attachments"`
	DisplayName        string           `json:"displayName"`
	DisplayDescription string           `json:"displayDescription"`
	VolumeType         *string          `json:"volumeType"`
	SnapshotID         *string          `json:"snapshotId"`
	Metadata           map[string]any   `json:"metadata"`
}

func novaVolume(v cinder.Volume) novaVolumeView {
	out := novaVolumeView{ID: v.ID, Status: v.Status, Size: v.SizeGB, AvailabilityZone: core.AvailabilityZone,
		DisplayName: v.Name, DisplayDescription: v.Description, Metadata: map[string]any{}}
	if !v.CreatedAt.IsZero() {
		at := v.CreatedAt.UTC().Format(core.NovaUsecTime)
		out.CreatedAt = &at
	}
	for _, a := range v.Attachments {
		out.Attachments = append(out.Attachments, map[string]any{"id": v.ID, "volumeId": v.ID, "serverId": a.ServerID, "device": a.Device})
	}
	if len(out.Attachments) == 0 {
		out.Attachments = []map[string]any{{}} // Nova's answer for a volume not attached
	}
	return out
}

func (s *Service) novaVolumes(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	vs, err := c.ListVolumes(r.Context())
	if err != nil {
		return proxyError(err, "")
	}
	out := make([]novaVolumeView, 0, len(vs))
	for _, v := range vs {
		out = append(out, novaVolume(v))
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"volumes": out})
	return nil
}

func (s *Service) novaVolume(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	v, err := c.GetVolume(r.Context(), r.PathValue("id"))
	if err != nil {
		return proxyError(err, r.PathValue("id"))
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"volume": novaVolume(v)})
	return nil
}

func (s *Service) novaCreateVolume(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(top["volume"], &fields); err != nil || fields == nil {
		return core.BadRequest("Invalid input for field/attribute volume: it must be an object.")
	}
	size, err := volumeSize(fields["size"])
	if err != nil {
		return err
	}
	name, err := core.OptionalString(fields, "display_name", 255)
	if err != nil {
		return err
	}
	desc, err := core.OptionalString(fields, "display_description", 255)
	if err != nil {
		return err
	}
	v, err := c.CreateVolume(r.Context(), cinder.VolumeSpec{SizeGB: size, Name: name, Description: desc})
	if err != nil {
		return proxyError(err, "")
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"volume": novaVolume(v)})
	return nil
}

func (s *Service) novaDeleteVolume(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	if err := c.DeleteVolume(r.Context(), r.PathValue("id")); err != nil {
		return proxyError(err, r.PathValue("id"))
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// proxyError answers Cinder's refusals as Nova's proxy does.
func proxyError(err error, id string) error {
	var ce *cinder.Error
	msg := err.Error()
	if errors.As(err, &ce) {
		msg = ce.Message
	}
	switch {
	case errors.Is(err, cinder.ErrVolumeNotFound):
		return core.NotFound("Volume %s could not be found.", id)
	case errors.Is(err, cinder.ErrVolumeNotAvailable), errors.Is(err, cinder.ErrBadRequest):
		return core.BadRequest("Invalid volume: %s", msg)
	case errors.Is(err, cinder.ErrForbidden):
		return &core.APIError{Status: http.StatusForbidden, Message: msg}
	}
	return core.CinderError(err, "cinder")
}
