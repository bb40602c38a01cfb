package volume

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/policy"
)

// Nova's volume proxy (os-volumes) until 2.35, over Cinder with the
// caller's token (volume.backend: cinder); from 2.36 it is gone (404), as
// in Nova.

// mvNoVolumeProxy is 2.36: the proxy APIs gone.
const mvNoVolumeProxy = 36

// CinderRoutes registers os-volumes and os-snapshots (served with the
// cinder backend).
func (s *Service) CinderRoutes() {
	s.Compute("GET /v2.1/os-volumes", s.proxied(policy.NovaVolumesList, s.novaVolumes))
	s.Compute("GET /v2.1/os-volumes/detail", s.proxied(policy.NovaVolumesDetail, s.novaVolumes))
	s.Compute("GET /v2.1/os-volumes/{id}", s.proxied(policy.NovaVolumesShow, s.novaVolume))
	s.Compute("POST /v2.1/os-volumes", s.proxied(policy.NovaVolumesCreate, s.novaCreateVolume))
	s.Compute("DELETE /v2.1/os-volumes/{id}", s.proxied(policy.NovaVolumesDelete, s.novaDeleteVolume))
	s.Compute("GET /v2.1/os-snapshots", s.proxied(policy.NovaSnapshotsList, s.novaSnapshots))
	s.Compute("GET /v2.1/os-snapshots/detail", s.proxied(policy.NovaSnapshotsDetail, s.novaSnapshots))
	s.Compute("GET /v2.1/os-snapshots/{id}", s.proxied(policy.NovaSnapshotsShow, s.novaSnapshot))
	s.Compute("POST /v2.1/os-snapshots", s.proxied(policy.NovaSnapshotsCreate, s.novaCreateSnapshot))
	s.Compute("DELETE /v2.1/os-snapshots/{id}", s.proxied(policy.NovaSnapshotsDelete, s.novaDeleteSnapshot))
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
	ID                 string            `json:"id"`
	Status             string            `json:"status"`
	Size               int               `json:"size"`
	AvailabilityZone   string            `json:"availabilityZone"`
	CreatedAt          *string           `json:"createdAt"`
	Attachments        []map[string]any  `json:"attachments"`
	DisplayName        string            `json:"displayName"`
	DisplayDescription string            `json:"displayDescription"`
	VolumeType         *string           `json:"volumeType"`
	SnapshotID         *string           `json:"snapshotId"`
	Metadata           map[string]string `json:"metadata"`
}

func novaVolume(v cinder.Volume) novaVolumeView {
	out := novaVolumeView{ID: v.ID, Status: v.Status, Size: v.SizeGB, AvailabilityZone: v.AvailabilityZone,
		DisplayName: v.Name, DisplayDescription: v.Description, CreatedAt: novaTime(v.CreatedAt),
		VolumeType: core.StrPtr(v.VolumeType), SnapshotID: core.StrPtr(v.SnapshotID), Metadata: v.Metadata}
	if out.AvailabilityZone == "" {
		out.AvailabilityZone = core.AvailabilityZone
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	// Nova shows the first attachment only, with a device when Cinder
	// names one; a volume not attached has [{}].
	out.Attachments = []map[string]any{{}}
	if len(v.Attachments) > 0 {
		a := v.Attachments[0]
		out.Attachments[0] = map[string]any{"id": v.ID, "volumeId": v.ID, "serverId": a.ServerID}
		if a.Device != "" {
			out.Attachments[0]["device"] = a.Device
		}
	}
	return out
}

// novaTime is Cinder's time as Nova passes it on (null when Cinder gave
// none).
func novaTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	at := t.UTC().Format(core.NovaUsecTime)
	return &at
}

func (s *Service) novaVolumes(w http.ResponseWriter, r *core.Request, c *cinder.Client) error {
	vs, err := c.ListVolumes(r.Context())
	if err != nil {
		return proxyError(err, "")
	}
	if vs, err = core.Limited(r.URL.Query(), vs); err != nil {
		return err
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
	fields, err := proxyBody(r, "volume", "size", "display_name", "display_description", "volume_type",
		"metadata", "snapshot_id", "availability_zone")
	if err != nil {
		return err
	}
	size, err := volumeSize(fields["size"])
	if err != nil {
		return err
	}
	spec := cinder.VolumeSpec{SizeGB: size}
	for key, p := range map[string]*string{"display_name": &spec.Name, "display_description": &spec.Description,
		"volume_type": &spec.VolumeType, "snapshot_id": &spec.SnapshotID, "availability_zone": &spec.AvailabilityZone} {
		if *p, err = core.OptionalString(fields, key, 255); err != nil {
			return err
		}
	}
	if raw, ok := fields["metadata"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &spec.Metadata); err != nil {
			return core.BadRequest("Invalid input for field/attribute metadata. Value: %s. It must be an object of strings.", raw)
		}
	}
	if spec.SnapshotID != "" {
		// Nova reads the snapshot first: an unknown one is its 404.
		if _, err := c.GetSnapshot(r.Context(), spec.SnapshotID); err != nil {
			return proxyError(err, spec.SnapshotID)
		}
	}
	v, err := c.CreateVolume(r.Context(), spec)
	if err != nil {
		return proxyError(err, "")
	}
	w.Header().Set("Location", core.BaseURL(r.Request)+"/v2.1/os-volumes/"+v.ID)
	core.WriteJSON(w, http.StatusOK, map[string]any{"volume": novaVolume(v)})
	return nil
}

// proxyBody reads {top: {…}} with only the allowed members, as Nova's
// schemas for the proxies (additionalProperties false).
func proxyBody(r *core.Request, top string, allowed ...string) (map[string]json.RawMessage, error) {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return nil, err
	}
	for k := range body {
		if k != top {
			return nil, core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed ('%s' was unexpected)", top, k)
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body[top], &fields); err != nil || fields == nil {
		return nil, core.BadRequest("Invalid input for field/attribute %s: it must be an object.", top)
	}
	for k := range fields {
		if !slices.Contains(allowed, k) {
			return nil, core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed ('%s' was unexpected)", top, k)
		}
	}
	return fields, nil
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
	case errors.Is(err, cinder.ErrSnapshotNotFound):
		return core.NotFound("Snapshot %s could not be found.", id)
	case errors.Is(err, cinder.ErrVolumeNotAvailable), errors.Is(err, cinder.ErrBadRequest):
		return core.BadRequest("Invalid volume: %s", msg)
	case errors.Is(err, cinder.ErrForbidden):
		return &core.APIError{Status: http.StatusForbidden, Message: msg}
	}
	return core.CinderError(err, "cinder")
}
