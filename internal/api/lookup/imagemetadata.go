package lookup

import (
	"net/http"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Nova's image metadata proxy (≤ 2.38): an image's properties, read and
// written in Glance with the caller's token, so Glance's policy decides who
// may change them (its owner, or an admin). The configured images of the
// embedded backend are read-only.

// mvNoImageMetadata is 2.39: the image metadata proxy gone.
const mvNoImageMetadata = 39

// registerImageMetadata adds …/images/{id}/metadata[/{key}] and the
// proxy's DELETE.
func (s *Service) registerImageMetadata() {
	for pattern, h := range map[string]core.HandlerFunc{
		"GET /v2.1/images/{id}/metadata":          s.imageMetadataIndex,
		"POST /v2.1/images/{id}/metadata":         s.imageMetadataWrite(false),
		"PUT /v2.1/images/{id}/metadata":          s.imageMetadataWrite(true),
		"GET /v2.1/images/{id}/metadata/{key}":    s.imageMetadataShow,
		"PUT /v2.1/images/{id}/metadata/{key}":    s.imageMetadataSetItem,
		"DELETE /v2.1/images/{id}/metadata/{key}": s.imageMetadataDelete,
	} {
		s.Compute(pattern, core.OwnRule(policy.Images, h))
	}
	s.Compute("DELETE /v2.1/images/{id}", core.OwnRule(policy.Images, s.deleteImage))
}

// deleteImage is Nova's image proxy's DELETE (≤ 2.35): the image deleted
// in Glance with the caller's token, so Glance decides who may; the
// configured images cannot be.
func (s *Service) deleteImage(w http.ResponseWriter, r *core.Request) error {
	if err := proxyGone(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if s.Cfg.Images == nil {
		for _, img := range s.Cfg.Catalog.Images {
			if strings.EqualFold(img.ID, id) {
				return core.Forbidden("The configured images are read-only (image.backend: embedded).")
			}
		}
		return core.NotFound("Image not found.")
	}
	if !core.IsUUID(id) {
		return core.NotFound("Image not found.")
	}
	if err := s.Cfg.Images.DeleteImage(r.Context(), r.Token(), id); err != nil {
		return core.GlanceError(err, core.NotFound("Image not found."))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// imageProperties are image id's properties as the caller sees them.
func (s *Service) imageProperties(r *core.Request) (map[string]string, error) {
	if r.MV.AtLeast(mvNoImageMetadata) {
		return nil, core.NotFound("The resource could not be found.")
	}
	id := r.PathValue("id")
	if s.Cfg.Images == nil {
		for _, img := range s.Cfg.Catalog.Images {
			if strings.EqualFold(img.ID, id) {
				return s.novaImage(r, img).Metadata, nil
			}
		}
		return nil, core.NotFound("Image not found.")
	}
	if !core.IsUUID(id) {
		return nil, core.NotFound("Image not found.")
	}
	img, err := s.Cfg.Images.GetImage(r.Context(), r.Token(), id)
	if err != nil {
		return nil, core.GlanceError(err, core.NotFound("Image not found."))
	}
	return img.Properties, nil
}

// writeImageProperties makes the image's properties want (Nova's
// purge_props), within the project's metadata_items quota.
func (s *Service) writeImageProperties(r *core.Request, have, want map[string]string) error {
	if s.Cfg.Images == nil {
		return core.Forbidden("The configured images are read-only (image.backend: embedded); their properties are set in ingot's configuration.")
	}
	if len(want) > 0 && s.limits != nil {
		lim, err := s.limits(r, r.Ident.ProjectID)
		if err != nil {
			return err
		}
		if n := lim.Get(store.ResMetadataItems); n >= 0 && len(want) > n {
			return core.Forbidden("Image metadata limit exceeded")
		}
	}
	set := map[string]string{}
	for k, v := range want {
		if old, ok := have[k]; !ok || old != v {
			set[k] = v
		}
	}
	var remove []string
	for k := range have {
		if _, ok := want[k]; !ok {
			remove = append(remove, k)
		}
	}
	if _, err := s.Cfg.Images.UpdateProperties(r.Context(), r.Token(), r.PathValue("id"), set, remove); err != nil {
		return core.GlanceError(err, core.NotFound("Image not found."))
	}
	return nil
}

func (s *Service) imageMetadataIndex(w http.ResponseWriter, r *core.Request) error {
	md, err := s.imageProperties(r)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, map[string]map[string]string{"metadata": orEmpty(md)})
	return nil
}

// imageMetadataWrite is POST (merge) or PUT (replace) of …/metadata.
func (s *Service) imageMetadataWrite(replace bool) core.HandlerFunc {
	return func(w http.ResponseWriter, r *core.Request) error {
		have, err := s.imageProperties(r)
		if err != nil {
			return err
		}
		md, err := core.MetadataBody(r, "metadata")
		if err != nil {
			return err
		}
		want := md
		if !replace {
			want = map[string]string{}
			for k, v := range have {
				want[k] = v
			}
			for k, v := range md {
				want[k] = v
			}
		}
		if err := s.writeImageProperties(r, have, want); err != nil {
			return err
		}
		core.WriteJSON(w, http.StatusOK, map[string]map[string]string{"metadata": want})
		return nil
	}
}

func (s *Service) imageMetadataShow(w http.ResponseWriter, r *core.Request) error {
	md, err := s.imageProperties(r)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	v, ok := md[key]
	if !ok {
		return core.NotFound("The resource could not be found.")
	}
	core.WriteJSON(w, http.StatusOK, map[string]map[string]string{"meta": {key: v}})
	return nil
}

func (s *Service) imageMetadataSetItem(w http.ResponseWriter, r *core.Request) error {
	have, err := s.imageProperties(r)
	if err != nil {
		return err
	}
	meta, err := core.MetaItem(r)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	want := map[string]string{key: meta[key]}
	for k, v := range have {
		if k != key {
			want[k] = v
		}
	}
	if err := s.writeImageProperties(r, have, want); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, map[string]map[string]string{"meta": meta})
	return nil
}

func (s *Service) imageMetadataDelete(w http.ResponseWriter, r *core.Request) error {
	have, err := s.imageProperties(r)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	if _, ok := have[key]; !ok {
		return core.NotFound("Invalid metadata key")
	}
	want := map[string]string{}
	for k, v := range have {
		if k != key {
			want[k] = v
		}
	}
	if err := s.writeImageProperties(r, have, want); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func orEmpty(md map[string]string) map[string]string {
	if md == nil {
		return map[string]string{}
	}
	return md
}
