package lookup

import (
	"net/http"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/glance"
)

// With image.backend glance the image look-ups are Glance's, read with the
// caller's token: Glance decides what the project sees (its own and shared
// images, public ones, never another project's private ones), as it does
// for Nova's image proxy. Glance's shapes for the CLI, Nova's proxy for
// compute clients (≤ 2.35), as over the configured images.

// glanceView is a Glance v2 image as Glance shows it: its own members and
// the image's properties as top-level keys.
func glanceView(img glance.Image) map[string]any {
	v := map[string]any{}
	for k, p := range img.Properties {
		v[k] = p
	}
	var checksum, size, vsize any
	if img.Checksum != "" {
		checksum = img.Checksum
	}
	if img.SizeBytes > 0 || img.Status == glance.Active {
		size = img.SizeBytes
	}
	if img.VirtualSize > 0 {
		vsize = img.VirtualSize
	}
	tags := img.Tags
	if tags == nil {
		tags = []string{}
	}
	for k, x := range map[string]any{
		"id": img.ID, "name": img.Name, "status": img.Status, "visibility": img.Visibility, "owner": img.Owner,
		"disk_format": nullable(img.DiskFormat), "container_format": nullable(img.ContainerFormat),
		"min_disk": img.MinDiskGB, "min_ram": img.MinRAMMB, "size": size, "virtual_size": vsize,
		"checksum": checksum, "os_hash_algo": nil, "os_hash_value": nil, "protected": img.Protected,
		"os_hidden": img.Hidden, "tags": tags, "created_at": stamp(img.CreatedAt), "updated_at": stamp(img.UpdatedAt),
		"self": "/v2/images/" + img.ID, "file": "/v2/images/" + img.ID + "/file", "schema": "/v2/schemas/image",
	} {
		v[k] = x
	}
	return v
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// stamp is a Glance timestamp (written as Nova writes its own).
func stamp(t time.Time) string { return t.UTC().Format(core.NovaTime) }

// glanceShowImage answers Glance's GET /v2/images/{id} from Glance.
func (s *Service) glanceShowImage(w http.ResponseWriter, r *core.Request) error {
	id := r.PathValue("id")
	if !core.IsUUID(id) {
		// A name: the SDK then lists with ?name=, as Glance answers it.
		return core.NotFound("No image found with ID %s", id)
	}
	img, err := s.Cfg.Images.GetImage(r.Context(), r.Token(), id)
	if err != nil {
		return core.GlanceError(err, core.NotFound("No image found with ID %s", id))
	}
	core.WriteJSON(w, http.StatusOK, glanceView(img))
	return nil
}

// glanceImages lists what Glance shows the caller, with Glance's name,
// status, visibility and owner filters applied by Glance, and id, marker
// and limit here (one page, as over the configured images).
func (s *Service) glanceImages(r *core.Request) ([]glance.Image, error) {
	q := r.URL.Query()
	f := glance.ListFilter{Name: q.Get("name"), Status: q.Get("status"), Visibility: q.Get("visibility"), Owner: q.Get("owner")}
	imgs, err := s.Cfg.Images.ListImages(r.Context(), r.Token(), f)
	if err != nil {
		return nil, core.GlanceError(err, core.NotFound("No image found"))
	}
	if id := q.Get("id"); id != "" {
		var out []glance.Image
		for _, img := range imgs {
			if strings.EqualFold(img.ID, id) {
				out = append(out, img)
			}
		}
		imgs = out
	}
	return imgs, nil
}

// page applies marker (an image id: unknown is 400, as Glance answers)
// and limit.
func page(r *core.Request, imgs []glance.Image, markerMessage string) ([]glance.Image, error) {
	q := r.URL.Query()
	limit, err := core.IntParam(q.Get("limit"), "limit")
	if err != nil {
		return nil, err
	}
	if marker := q.Get("marker"); marker != "" {
		i := 0
		for i < len(imgs) && !strings.EqualFold(imgs[i].ID, marker) {
			i++
		}
		if i == len(imgs) {
			return nil, core.BadRequest(markerMessage, marker)
		}
		imgs = imgs[i+1:]
	}
	if q.Has("limit") && limit < len(imgs) {
		imgs = imgs[:limit]
	}
	return imgs, nil
}

// glanceListImages answers Glance's GET /v2/images from Glance.
func (s *Service) glanceListImages(w http.ResponseWriter, r *core.Request) error {
	imgs, err := s.glanceImages(r)
	if err != nil {
		return err
	}
	if imgs, err = page(r, imgs, "marker %s not found"); err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(imgs))
	for _, img := range imgs {
		out = append(out, glanceView(img))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		First  string           `json:"first"`
		Images []map[string]any `json:"images"`
		Schema string           `json:"schema"`
	}{"/v2/images", out, "/v2/schemas/images"})
	return nil
}
