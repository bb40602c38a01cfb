package api

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
func (s *server) volumeRoutes() {
	s.public("GET /volume", s.volumeVersions)
	s.public("GET /volume/{$}", s.volumeVersions)
	s.public("GET /volume/v3", s.volumeVersion)
	s.public("GET /volume/v3/{$}", s.volumeVersion)
	s.plain("POST /volume/v3/{project}/volumes", s.createVolume)
	s.plain("GET /volume/v3/{project}/volumes", s.listVolumes)
	s.plain("GET /volume/v3/{project}/volumes/detail", s.listVolumesDetail)
	s.plain("GET /volume/v3/{project}/volumes/{id}", s.showVolume)
	s.plain("DELETE /volume/v3/{project}/volumes/{id}", s.deleteVolume)
}

func volumeVersionObject(r *http.Request) map[string]any {
	return map[string]any{
		"id": "v3.0", "status": "CURRENT", "version": "3.0", "min_version": "3.0",
		"updated": "2023-03-01T00:00:00Z",
		"links":   []link{{Rel: "self", Href: baseURL(r) + "/volume/v3/"}},
		"media-types": []mediaType{{Base: "application/json",
			Type: "application/vnd.openstack.volume+json;version=3"}},
	}
}

// volumeVersions answers GET /volume/: the list the SDK reads when a
// volume endpoint override points at the service root.
func (s *server) volumeVersions(w http.ResponseWriter, r *request) error {
	writeJSON(w, http.StatusOK, map[string]any{"versions": []any{volumeVersionObject(r.Request)}})
	return nil
}

func (s *server) volumeVersion(w http.ResponseWriter, r *request) error {
	writeJSON(w, http.StatusOK, map[string]any{"version": volumeVersionObject(r.Request)})
	return nil
}

// Members of a Cinder create body that ingot accepts only empty: it has
// no snapshots, backups, images on volumes, groups or volume types, and it
// does not keep descriptions or metadata (refused rather than dropped).
var emptyVolumeFields = []string{"snapshot_id", "source_volid", "imageRef", "backup_id",
	"consistencygroup_id", "group_id", "volume_type", "source_replica", "scheduler_hints",
	"description", "display_description", "metadata"}

// maxVolumeGB bounds a volume's size (Cinder's default per-volume quota
// is unlimited; a bound keeps the number sane in an int).
const maxVolumeGB = 1 << 20

// createVolume answers POST …/volumes with 202 and the new (available) volume.
func (s *server) createVolume(w http.ResponseWriter, r *request) error {
	if err := s.volumeProject(r, policy.VolumeCreate); err != nil {
		return err
	}
	top, err := readJSONObject(r.Request)
	if err != nil {
		return err
	}
	raw, ok := top["volume"]
	if !ok {
		return badRequest("Missing required element 'volume' in request body.")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return badRequest("Invalid input for field/attribute volume: it must be an object.")
	}
	for k, v := range fields {
		switch k {
		case "size", "name", "display_name", "availability_zone", "multiattach":
		default:
			if !slices.Contains(emptyVolumeFields, k) {
				return badRequest("Invalid input for field/attribute volume. Additional properties are not allowed ('%s' was unexpected).", k)
			}
			if !emptyValue(v) {
				return badRequest("Invalid input for field/attribute %s. Value: %s. ingot does not support %s on volumes (they are blank, without description or metadata).", k, v, k)
			}
		}
	}
	size, err := volumeSize(fields["size"])
	if err != nil {
		return err
	}
	name, err := optionalString(fields, "name", 255)
	if err != nil {
		return err
	}
	if name == "" {
		if name, err = optionalString(fields, "display_name", 255); err != nil {
			return err
		}
	}
	if hasControl(name) {
		return badRequest("Invalid input for field/attribute name: it must not contain control characters.")
	}
	if az, err := optionalString(fields, "availability_zone", 255); err != nil {
		return err
	} else if az != "" && az != availabilityZone {
		return badRequest("Invalid input received: Availability zone '%s' is invalid.", az)
	}
	if v, ok := fields["multiattach"]; ok && string(v) != "null" && string(v) != "false" {
		return badRequest("Invalid input for field/attribute multiattach. Value: %s. A volume attaches to one server.", v)
	}
	now := s.cfg.Clock.Now().UTC()
	v := store.NewVolume(uuid.NewString(), name, size, "", now)
	v.ProjectID, v.UserID = r.ident.ProjectID, r.ident.UserID
	if err := s.cfg.Store.CreateVolume(r.Context(), v); err != nil {
		return fmt.Errorf("create volume %s: %w", v.ID, err)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"volume": volumeDetail(r.Request, v)})
	return nil
}

// volumeSize reads size: a positive integer, or a string of one (Cinder's
// schema accepts both).
func volumeSize(raw json.RawMessage) (int, error) {
	if raw == nil || string(raw) == "null" {
		return 0, badRequest("Invalid input for field/attribute size. Value: None. None is not of type 'integer', 'string'.")
	}
	var str string
	var n json.Number
	switch {
	case json.Unmarshal(raw, &n) == nil:
		str = n.String()
	case json.Unmarshal(raw, &str) == nil:
	default:
		return 0, badRequest("Invalid input for field/attribute size. Value: %s. It is not of type 'integer', 'string'.", raw)
	}
	size, err := strconv.Atoi(strings.TrimSpace(str))
	if err != nil || size < 1 || size > maxVolumeGB {
		return 0, badRequest("Invalid input for field/attribute size. Value: %s. It must be an integer from 1 to %d.", raw, maxVolumeGB)
	}
	return size, nil
}

// volumeByID loads a volume and checks rule on it: 404 in Cinder's words
// for non-UUIDs, unknown ids and another project's volumes (unless admin).
func (s *server) volumeByID(r *request, id, rule string) (store.Volume, error) {
	if err := s.volumeProject(r, ""); err != nil {
		return store.Volume{}, err
	}
	if !isUUID(id) {
		return store.Volume{}, notFound("Volume %s could not be found.", id)
	}
	v, err := s.cfg.Store.GetVolume(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Volume{}, notFound("Volume %s could not be found.", id)
	}
	if err != nil {
		return store.Volume{}, fmt.Errorf("get volume %s: %w", id, err)
	}
	if v.ProjectID != "" && !r.sees(v.ProjectID) {
		return store.Volume{}, notFound("Volume %s could not be found.", id)
	}
	if rule != "" {
		if err := r.authorize(rule, target(v.ProjectID, v.UserID)); err != nil {
			return store.Volume{}, err
		}
	}
	return v, nil
}

// volumeProject checks the project in the path is the caller's, and rule
// (if any) on the caller's own project.
func (s *server) volumeProject(r *request, rule string) error {
	if p := r.PathValue("project"); p != r.ident.ProjectID {
		return badRequest("Malformed request url: the project in the URL (%s) is not the token's.", p)
	}
	if rule == "" {
		return nil
	}
	return r.authorize(rule, r.own())
}

func (s *server) showVolume(w http.ResponseWriter, r *request) error {
	v, err := s.volumeByID(r, r.PathValue("id"), policy.VolumeGet)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"volume": volumeDetail(r.Request, v)})
	return nil
}

// deleteVolume deletes an available volume (202). A held one is refused
// with Cinder's 400; an unknown one is 404.
func (s *server) deleteVolume(w http.ResponseWriter, r *request) error {
	v, err := s.volumeByID(r, r.PathValue("id"), policy.VolumeDelete)
	if err != nil {
		return err
	}
	err = s.cfg.Store.DeleteVolume(r.Context(), v.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("Volume %s could not be found.", v.ID)
	case errors.Is(err, store.ErrVolumeInUse):
		// Reread for the status it has now (it may have been reserved
		// since the first read).
		if cur, gerr := s.cfg.Store.GetVolume(r.Context(), v.ID); gerr == nil {
			v = cur
		}
		status := v.Status
		if status == store.VolumeAvailable {
			status = store.VolumeReserved
		}
		return badRequest("Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer, but current status is: %s.", status)
	case err != nil:
		return fmt.Errorf("delete volume %s: %w", v.ID, err)
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// volumePage reads limit and marker and loads one page by id.
func (s *server) volumePage(r *request) ([]store.Volume, int, error) {
	if err := s.volumeProject(r, policy.VolumeGetAll); err != nil {
		return nil, 0, err
	}
	q := r.URL.Query()
	all, err := allTenants(q)
	if err != nil {
		return nil, 0, err
	}
	if all && !r.can(policy.ContextIsAdmin, r.own()) {
		all = false // Cinder ignores all_tenants for non-admins
	}
	limit := defaultVolumePage
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return nil, 0, badRequest("Invalid input received: limit must be a non-negative integer, got %q.", l)
		}
		limit = min(n, defaultVolumePage)
	}
	if limit == 0 {
		return []store.Volume{}, 0, nil
	}
	marker := q.Get("marker")
	if marker != "" {
		if _, err := s.volumeByID(r, marker, ""); err != nil {
			if _, ok := asAPIError(err); ok {
				return nil, 0, badRequest("Invalid input received: marker %s not found.", marker)
			}
			return nil, 0, err
		}
	}
	var vols []store.Volume
	if all {
		vols, err = s.cfg.Store.ListVolumes(r.Context(), marker, limit)
	} else {
		vols, err = s.cfg.Store.ListProjectVolumes(r.Context(), r.ident.ProjectID, marker, limit)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("list volumes: %w", err)
	}
	return vols, limit, nil
}

// defaultVolumePage is Cinder's osapi_max_limit default.
const defaultVolumePage = 1000

// volumesLinks is the next-page link when the page is full.
func volumesLinks(r *request, vols []store.Volume, limit int) []link {
	if limit == 0 || len(vols) < limit {
		return nil
	}
	q := url.Values{}
	q.Set("limit", strconv.Itoa(limit))
	q.Set("marker", vols[len(vols)-1].ID)
	return []link{{Rel: "next", Href: baseURL(r.Request) + r.URL.Path + "?" + q.Encode()}}
}

func (s *server) listVolumes(w http.ResponseWriter, r *request) error {
	vols, limit, err := s.volumePage(r)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(vols))
	for _, v := range vols {
		out = append(out, map[string]any{"id": v.ID, "name": v.Name, "links": volumeLinks(r.Request, v.ID)})
	}
	body := map[string]any{"volumes": out}
	if links := volumesLinks(r, vols, limit); links != nil {
		body["volumes_links"] = links
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *server) listVolumesDetail(w http.ResponseWriter, r *request) error {
	vols, limit, err := s.volumePage(r)
	if err != nil {
		return err
	}
	out := make([]*volumeView, 0, len(vols))
	for _, v := range vols {
		out = append(out, volumeDetail(r.Request, v))
	}
	body := map[string]any{"volumes": out}
	if links := volumesLinks(r, vols, limit); links != nil {
		body["volumes_links"] = links
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}
