package volume

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// The Cinder-shaped volume API of the embedded registry, a subset of the
// Block Storage API v3 (no microversions beyond 3.0):
//
//	GET    /volume/  /volume/v3/                         version documents
//	POST   /volume/v3/{project_id}/volumes               create → 202
//	GET    /volume/v3/{project_id}/volumes[/detail]      limit, marker
//	GET    /volume/v3/{project_id}/volumes/{id}
//	DELETE /volume/v3/{project_id}/volumes/{id}          → 202; 400 while held
//
// The project in the path must be the caller's (400 otherwise, as Cinder
// answers); a volume of another project is 404 unless the caller is an
// admin. Deliberate differences from Cinder: lists are ordered by id, not by
// created_at descending; a new volume is available at once (the embedded
// backend has nothing to provision); a held volume shows its holder in
// attachments while reserved as well as in-use, so that the server a
// reservation belongs to is visible.
func (s *Service) Register() {
	s.Public("GET /volume", s.volumeVersions)
	s.Public("GET /volume/{$}", s.volumeVersions)
	s.Public("GET /volume/v3", s.volumeVersion)
	s.Public("GET /volume/v3/{$}", s.volumeVersion)
	s.Plain("POST /volume/v3/{project}/volumes", s.createVolume)
	s.Plain("GET /volume/v3/{project}/volumes", s.listVolumes)
	s.Plain("GET /volume/v3/{project}/volumes/detail", s.listVolumesDetail)
	s.Plain("GET /volume/v3/{project}/volumes/{id}", s.showVolume)
	s.Plain("DELETE /volume/v3/{project}/volumes/{id}", s.deleteVolume)
}

// volumeVersion is Cinder's v3 version document (members in byte order, as
// the map it replaced wrote them).
type volumeVersionDoc struct {
	ID         string           `json:"id"`
	Links      []core.Link      `json:"links"`
	MediaTypes []core.MediaType `json:"media-types"`
	MinVersion string           `json:"min_version"`
	Status     string           `json:"status"`
	Updated    string           `json:"updated"`
	Version    string           `json:"version"`
}

func volumeVersionObject(r *http.Request) volumeVersionDoc {
	return volumeVersionDoc{ID: "v3.0", Status: "CURRENT", Version: "3.0", MinVersion: "3.0",
		Updated: "2023-03-01T00:00:00Z",
		Links:   []core.Link{{Rel: "self", Href: core.BaseURL(r) + "/volume/v3/"}},
		MediaTypes: []core.MediaType{{Base: "application/json",
			Type: "application/vnd.openstack.volume+json;version=3"}}}
}

type volumeBody struct {
	Volume *volumeView `json:"volume"`
}

// volumeList is a page of volumes, with the next link on a full page.
type volumeList[T any] struct {
	Volumes []T         `json:"volumes"`
	Links   []core.Link `json:"volumes_links,omitempty"`
}

// volumeRef is a volume in the plain list.
type volumeRef struct {
	ID    string      `json:"id"`
	Links []core.Link `json:"links"`
	Name  string      `json:"name"`
}

// volumeVersions answers GET /volume/: the list the SDK reads when a
// volume endpoint override points at the service root.
func (s *Service) volumeVersions(w http.ResponseWriter, r *core.Request) error {
	core.WriteJSON(w, http.StatusOK, struct {
		Versions []volumeVersionDoc `json:"versions"`
	}{[]volumeVersionDoc{volumeVersionObject(r.Request)}})
	return nil
}

func (s *Service) volumeVersion(w http.ResponseWriter, r *core.Request) error {
	core.WriteJSON(w, http.StatusOK, struct {
		Version volumeVersionDoc `json:"version"`
	}{volumeVersionObject(r.Request)})
	return nil
}

// Members of a Cinder create body that ingot accepts only empty: it has
// no snapshots, backups, groups or volume types, and it does not keep
// metadata (refused rather than dropped).
var emptyVolumeFields = []string{"snapshot_id", "source_volid", "backup_id",
	"consistencygroup_id", "group_id", "volume_type", "source_replica", "scheduler_hints", "metadata"}

// maxVolumeGB bounds a volume's size (Cinder's default per-volume quota
// is unlimited; a bound keeps the number sane in an int).
const maxVolumeGB = 1 << 20

// createVolume answers POST …/volumes with 202 and the new (available) volume.
func (s *Service) createVolume(w http.ResponseWriter, r *core.Request) error {
	if err := s.VolumeProject(r, policy.VolumeCreate); err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	raw, ok := top["volume"]
	if !ok {
		return core.BadRequest("Missing required element 'volume' in request body.")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return core.BadRequest("Invalid input for field/attribute volume: it must be an object.")
	}
	for k, v := range fields {
		switch k {
		case "size", "name", "display_name", "description", "display_description", "availability_zone", "multiattach", "imageRef":
		default:
			if !slices.Contains(emptyVolumeFields, k) {
				return core.BadRequest("Invalid input for field/attribute volume. Additional properties are not allowed ('%s' was unexpected).", k)
			}
			if !core.EmptyValue(v) {
				return core.BadRequest("Invalid input for field/attribute %s. Value: %s. ingot does not support %s on volumes (they are blank, without description or metadata).", k, v, k)
			}
		}
	}
	size, err := volumeSize(fields["size"])
	if err != nil {
		return err
	}
	name, err := core.OptionalString(fields, "name", 255)
	if err != nil {
		return err
	}
	if name == "" {
		if name, err = core.OptionalString(fields, "display_name", 255); err != nil {
			return err
		}
	}
	if core.HasControl(name) {
		return core.BadRequest("Invalid input for field/attribute name: it must not contain control characters.")
	}
	desc, err := core.OptionalString(fields, "description", 255)
	if err != nil {
		return err
	}
	if desc == "" {
		if desc, err = core.OptionalString(fields, "display_description", 255); err != nil {
			return err
		}
	}
	if core.HasControl(desc) {
		return core.BadRequest("Invalid input for field/attribute description: it must not contain control characters.")
	}
	if az, err := core.OptionalString(fields, "availability_zone", 255); err != nil {
		return err
	} else if az != "" && az != core.AvailabilityZone {
		return core.BadRequest("Invalid input received: Availability zone '%s' is invalid.", az)
	}
	if v, ok := fields["multiattach"]; ok && string(v) != "null" && string(v) != "false" {
		return core.BadRequest("Invalid input for field/attribute multiattach. Value: %s. A volume attaches to one server.", v)
	}
	image, err := s.volumeImage(r, fields, size)
	if err != nil {
		return err
	}
	now := s.Cfg.Clock.Now().UTC()
	e := s.Cfg.Embedded
	v := store.NewVolumeAt(uuid.NewString(), name, size, e.Portal, e.IQNPrefix, now)
	v.ProjectID, v.UserID, v.Description, v.ImageID = r.Ident.ProjectID, r.Ident.UserID, desc, image
	if err := s.Cfg.Store.CreateVolume(r.Context(), v); err != nil {
		return fmt.Errorf("create volume %s: %w", v.ID, err)
	}
	core.WriteJSON(w, http.StatusAccepted, volumeBody{Volume: volumeDetail(r.Request, v)})
	return nil
}

// volumeSize reads size: a positive integer, or a string of one (Cinder's
// schema accepts both).
func volumeSize(raw json.RawMessage) (int, error) {
	if raw == nil || string(raw) == "null" {
		return 0, core.BadRequest("Invalid input for field/attribute size. Value: None. None is not of type 'integer', 'string'.")
	}
	var str string
	var n json.Number
	switch {
	case json.Unmarshal(raw, &n) == nil:
		str = n.String()
	case json.Unmarshal(raw, &str) == nil:
	default:
		return 0, core.BadRequest("Invalid input for field/attribute size. Value: %s. It is not of type 'integer', 'string'.", raw)
	}
	size, err := strconv.Atoi(strings.TrimSpace(str))
	if err != nil || size < 1 || size > maxVolumeGB {
		return 0, core.BadRequest("Invalid input for field/attribute size. Value: %s. It must be an integer from 1 to %d.", raw, maxVolumeGB)
	}
	return size, nil
}

// volumeByID loads a volume and checks rule on it: 404 in Cinder's words
// for non-UUIDs, unknown ids and another project's volumes (unless admin).
func (s *Service) volumeByID(r *core.Request, id, rule string) (store.Volume, error) {
	if err := s.VolumeProject(r, ""); err != nil {
		return store.Volume{}, err
	}
	if !core.IsUUID(id) {
		return store.Volume{}, core.NotFound("Volume %s could not be found.", id)
	}
	v, err := s.Cfg.Store.GetVolume(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Volume{}, core.NotFound("Volume %s could not be found.", id)
	}
	if err != nil {
		return store.Volume{}, fmt.Errorf("get volume %s: %w", id, err)
	}
	if v.ProjectID != "" && !r.Sees(v.ProjectID) {
		return store.Volume{}, core.NotFound("Volume %s could not be found.", id)
	}
	if rule != "" {
		if err := r.Authorize(rule, core.Target(v.ProjectID, v.UserID)); err != nil {
			return store.Volume{}, err
		}
	}
	return v, nil
}

// VolumeProject checks the project in the path is the caller's, and rule
// (if any) on the caller's own project.
func (s *Service) VolumeProject(r *core.Request, rule string) error {
	if p := r.PathValue("project"); p != r.Ident.ProjectID {
		return core.BadRequest("Malformed request url: the project in the URL (%s) is not the token's.", p)
	}
	if rule == "" {
		return nil
	}
	return r.Authorize(rule, r.Own())
}

func (s *Service) showVolume(w http.ResponseWriter, r *core.Request) error {
	v, err := s.volumeByID(r, r.PathValue("id"), policy.VolumeGet)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, volumeBody{Volume: volumeDetail(r.Request, v)})
	return nil
}

// deleteVolume deletes an available volume (202). A held one is refused
// with Cinder's 400; an unknown one is 404.
func (s *Service) deleteVolume(w http.ResponseWriter, r *core.Request) error {
	v, err := s.volumeByID(r, r.PathValue("id"), policy.VolumeDelete)
	if err != nil {
		return err
	}
	err = s.Cfg.Store.DeleteVolume(r.Context(), v.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return core.NotFound("Volume %s could not be found.", v.ID)
	case errors.Is(err, store.ErrVolumeInUse):
		// Reread for the status it has now (it may have been reserved
		// since the first read).
		if cur, gerr := s.Cfg.Store.GetVolume(r.Context(), v.ID); gerr == nil {
			v = cur
		}
		status := v.Status
		if status == store.VolumeAvailable {
			status = store.VolumeReserved
		}
		return core.BadRequest("Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer, but current status is: %s.", status)
	case err != nil:
		return fmt.Errorf("delete volume %s: %w", v.ID, err)
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// volumePage reads limit and marker and loads one page by id.
func (s *Service) volumePage(r *core.Request) ([]store.Volume, int, error) {
	if err := s.VolumeProject(r, policy.VolumeGetAll); err != nil {
		return nil, 0, err
	}
	q := r.URL.Query()
	all, err := core.AllTenants(q)
	if err != nil {
		return nil, 0, err
	}
	if all && !r.Can(policy.ContextIsAdmin, r.Own()) {
		all = false // Cinder ignores all_tenants for non-admins
	}
	limit := DefaultVolumePage
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return nil, 0, core.BadRequest("Invalid input received: limit must be a non-negative integer, got %q.", l)
		}
		limit = min(n, DefaultVolumePage)
	}
	if limit == 0 {
		return []store.Volume{}, 0, nil
	}
	marker := q.Get("marker")
	if marker != "" {
		if _, err := s.volumeByID(r, marker, ""); err != nil {
			if _, ok := core.AsAPIError(err); ok {
				return nil, 0, core.BadRequest("Invalid input received: marker %s not found.", marker)
			}
			return nil, 0, err
		}
	}
	var vols []store.Volume
	if all {
		vols, err = s.Cfg.Store.ListVolumes(r.Context(), marker, limit)
	} else {
		vols, err = s.Cfg.Store.ListProjectVolumes(r.Context(), r.Ident.ProjectID, marker, limit)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("list volumes: %w", err)
	}
	return vols, limit, nil
}

// DefaultVolumePage is Cinder's osapi_max_limit default.
const DefaultVolumePage = 1000

// volumesLinks is the next-page link when the page is full.
func volumesLinks(r *core.Request, vols []store.Volume, limit int) []core.Link {
	if limit == 0 || len(vols) < limit {
		return nil
	}
	q := url.Values{}
	q.Set("limit", strconv.Itoa(limit))
	q.Set("marker", vols[len(vols)-1].ID)
	return []core.Link{{Rel: "next", Href: core.BaseURL(r.Request) + r.URL.Path + "?" + q.Encode()}}
}

func (s *Service) listVolumes(w http.ResponseWriter, r *core.Request) error {
	vols, limit, err := s.volumePage(r)
	if err != nil {
		return err
	}
	out := make([]volumeRef, 0, len(vols))
	for _, v := range vols {
		out = append(out, volumeRef{ID: v.ID, Name: v.Name, Links: volumeLinks(r.Request, v.ID)})
	}
	core.WriteJSON(w, http.StatusOK, volumeList[volumeRef]{Volumes: out, Links: volumesLinks(r, vols, limit)})
	return nil
}

func (s *Service) listVolumesDetail(w http.ResponseWriter, r *core.Request) error {
	vols, limit, err := s.volumePage(r)
	if err != nil {
		return err
	}
	out := make([]*volumeView, 0, len(vols))
	for _, v := range vols {
		out = append(out, volumeDetail(r.Request, v))
	}
	core.WriteJSON(w, http.StatusOK, volumeList[*volumeView]{Volumes: out, Links: volumesLinks(r, vols, limit)})
	return nil
}
