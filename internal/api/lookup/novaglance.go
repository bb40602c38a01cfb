package lookup

import (
	"net/http"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/glance"
)

// Nova's image proxy (≤ 2.35) over Glance: Nova's views of what Glance
// shows the caller.

// novaStatus and novaProgress are Nova's image views' mappings of
// Glance's statuses.
var (
	novaStatus = map[string]string{"active": "ACTIVE", "queued": "SAVING", "saving": "SAVING",
		"deleted": "DELETED", "pending_delete": "DELETED", "killed": "ERROR"}
	novaProgress = map[string]int{"queued": 25, "saving": 50, "active": 100}
)

func (s *Service) novaGlanceImage(r *core.Request, img glance.Image) novaImage {
	status, ok := novaStatus[img.Status]
	if !ok {
		status = "UNKNOWN"
	}
	md := map[string]string{}
	for k, v := range img.Properties {
		md[k] = v
	}
	var size *int64
	if img.SizeBytes > 0 {
		n := img.SizeBytes
		size = &n
	}
	return novaImage{ID: img.ID, Name: img.Name, Links: novaLinks(r, img.ID), Metadata: md, MinDisk: img.MinDiskGB,
		MinRAM: img.MinRAMMB, Size: size, Status: status, Progress: novaProgress[img.Status],
		Created: img.CreatedAt.UTC().Format(core.NovaTime), Updated: img.UpdatedAt.UTC().Format(core.NovaTime)}
}

// novaGlanceImages lists as Nova's index filters: name, status (Nova's or
// Glance's word), minDisk, minRam, then marker and limit.
func (s *Service) novaGlanceImages(r *core.Request) ([]glance.Image, error) {
	q := r.URL.Query()
	minDisk, err := core.IntParam(q.Get("minDisk"), "minDisk")
	if err != nil {
		return nil, err
	}
	minRAM, err := core.IntParam(q.Get("minRam"), "minRam")
	if err != nil {
		return nil, err
	}
	all, err := s.Cfg.Images.ListImages(r.Context(), r.Token(), glance.ListFilter{Name: q.Get("name")})
	if err != nil {
		return nil, core.GlanceError(err, core.NotFound("Image not found."))
	}
	out := []glance.Image{}
	for _, img := range all {
		if st := q.Get("status"); st != "" && !strings.EqualFold(st, img.Status) && !strings.EqualFold(st, novaStatus[img.Status]) {
			continue
		}
		if img.MinDiskGB < minDisk || img.MinRAMMB < minRAM {
			continue
		}
		out = append(out, img)
	}
	return page(r, out, "Marker %s could not be found.")
}

func (s *Service) novaGlanceShow(w http.ResponseWriter, r *core.Request) error {
	if err := proxyGone(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if !core.IsUUID(id) {
		return core.NotFound("Image not found.")
	}
	img, err := s.Cfg.Images.GetImage(r.Context(), r.Token(), id)
	if err != nil {
		return core.GlanceError(err, core.NotFound("Image not found."))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Image novaImage `json:"image"`
	}{s.novaGlanceImage(r, img)})
	return nil
}

// imageHandlers are the look-ups' handlers for the configured backend:
// Glance's list and show, Nova's index, detail and show.
func (s *Service) imageHandlers() (list, show, index, detail, novaShow core.HandlerFunc) {
	if s.Cfg.Images != nil {
		return s.glanceListImages, s.glanceShowImage, s.novaImagesIndex, s.novaImagesDetail, s.novaGlanceShow
	}
	return s.listImages, s.showImage, s.novaImagesIndex, s.novaImagesDetail, s.novaImageShow
}
