package lookup

import (
	"net/http"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/catalog"
)

// Nova's image proxy (GET /images, /images/detail, /images/{id}) until
// 2.35, over ingot's image catalogue; from 2.36 it is gone (404), as in
// Nova. /v2.1/images and /v2.1/images/{id} also answer Glance's shapes to
// the OpenStack CLI's image look-ups, which name no compute microversion:
// a request that names one gets Nova's.

// mvNoImageProxy is 2.36: the image proxy gone.
const mvNoImageProxy = 36

// novaProxy answers with Nova's proxy when the request names a compute
// microversion, else with glance (the CLI's Glance look-ups).
func (s *Service) novaProxy(glance, nova core.HandlerFunc) core.HandlerFunc {
	return func(w http.ResponseWriter, r *core.Request) error {
		mv, named, err := core.RequestedVersion(r.Header)
		if !named {
			return glance(w, r)
		}
		if err != nil {
			return err
		}
		r.MV = mv
		core.SetVersionHeaders(w.Header(), mv)
		return nova(w, r)
	}
}

func proxyGone(r *core.Request) error {
	if r.MV.AtLeast(mvNoImageProxy) {
		return core.NotFound("The resource could not be found.")
	}
	return nil
}

type novaImageLinks []core.Link

func novaLinks(r *core.Request, id string) novaImageLinks {
	base := core.BaseURL(r.Request)
	return novaImageLinks{
		{Rel: "self", Href: base + "/v2.1/images/" + id},
		{Rel: "bookmark", Href: base + "/images/" + id},
		{Rel: "alternate", Href: base + "/image/v2/images/" + id, Type: "application/vnd.openstack.image"},
	}
}

// novaImage is Nova's detailed image view (views/images.py).
type novaImage struct {
	Created  string            `json:"created"`
	ID       string            `json:"id"`
	Links    novaImageLinks    `json:"links"`
	Metadata map[string]string `json:"metadata"`
	MinDisk  int               `json:"minDisk"`
	MinRAM   int               `json:"minRam"`
	Name     string            `json:"name"`
	Size     *int64            `json:"OS-EXT-IMG-SIZE:size"`
	Progress int               `json:"progress"`
	Status   string            `json:"status"`
	Updated  string            `json:"updated"`
}

type novaImageRef struct {
	ID    string         `json:"id"`
	Links novaImageLinks `json:"links"`
	Name  string         `json:"name"`
}

func (s *Service) novaImage(r *core.Request, img catalog.Image) novaImage {
	md := map[string]string{}
	if img.OSDistro != "" {
		md["os_distro"] = img.OSDistro
	}
	return novaImage{ID: img.ID, Name: img.Name, Links: novaLinks(r, img.ID), Metadata: md, MinDisk: img.MinDisk,
		Status: "ACTIVE", Progress: 100, Created: s.Started, Updated: s.Started}
}

// novaImages lists the catalogue as Nova's index filters Glance: name,
// status (ACTIVE), minDisk, then marker (an image id; unknown is 400) and
// limit.
func (s *Service) novaImages(r *core.Request) ([]catalog.Image, error) {
	q := r.URL.Query()
	limit, err := core.IntParam(q.Get("limit"), "limit")
	if err != nil {
		return nil, err
	}
	minDisk, err := core.IntParam(q.Get("minDisk"), "minDisk")
	if err != nil {
		return nil, err
	}
	out := []catalog.Image{}
	marker := q.Get("marker")
	seen := marker == ""
	for _, img := range s.Cfg.Catalog.Images {
		if !seen {
			seen = strings.EqualFold(img.ID, marker)
			continue
		}
		if q.Has("name") && img.Name != q.Get("name") || q.Has("status") && !strings.EqualFold(q.Get("status"), "active") ||
			img.MinDisk < minDisk {
			continue
		}
		out = append(out, img)
	}
	if !seen {
		return nil, core.BadRequest("Marker %s could not be found.", marker)
	}
	if q.Has("limit") && limit < len(out) {
		out = out[:limit]
	}
	return out, nil
}

// novaImageList is the proxy's list, over the configured images or Glance.
func (s *Service) novaImageList(r *core.Request) ([]novaImage, error) {
	if err := proxyGone(r); err != nil {
		return nil, err
	}
	var out []novaImage
	if s.Cfg.Images != nil {
		imgs, err := s.novaGlanceImages(r)
		for _, img := range imgs {
			out = append(out, s.novaGlanceImage(r, img))
		}
		return out, err
	}
	imgs, err := s.novaImages(r)
	for _, img := range imgs {
		out = append(out, s.novaImage(r, img))
	}
	return out, err
}

func (s *Service) novaImagesDetail(w http.ResponseWriter, r *core.Request) error {
	imgs, err := s.novaImageList(r)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Images []novaImage `json:"images"`
	}{append([]novaImage{}, imgs...)})
	return nil
}

func (s *Service) novaImagesIndex(w http.ResponseWriter, r *core.Request) error {
	imgs, err := s.novaImageList(r)
	if err != nil {
		return err
	}
	out := make([]novaImageRef, 0, len(imgs))
	for _, img := range imgs {
		out = append(out, novaImageRef{ID: img.ID, Name: img.Name, Links: img.Links})
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Images []novaImageRef `json:"images"`
	}{out})
	return nil
}

func (s *Service) novaImageShow(w http.ResponseWriter, r *core.Request) error {
	if err := proxyGone(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	for _, img := range s.Cfg.Catalog.Images {
		if strings.EqualFold(img.ID, id) {
			core.WriteJSON(w, http.StatusOK, struct {
				Image novaImage `json:"image"`
			}{s.novaImage(r, img)})
			return nil
		}
	}
	return core.NotFound("Image not found.")
}
