package volume

import (
	"encoding/json"
	"errors"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/glance"
)

// errBadImage is Cinder's 400 for an imageRef the caller cannot see.
var errBadImage = core.BadRequest("Invalid image identifier or unable to access requested image.")

// volumeImage reads a create's imageRef: "" for a blank volume, else the
// image's id once Cinder's checks pass (the image is visible to the
// caller, active, and fits the volume; Cinder's texts). The embedded
// registry records the image only: it has no data path to copy bytes.
func (s *Service) volumeImage(r *core.Request, fields map[string]json.RawMessage, sizeGB int) (string, error) {
	raw, ok := fields["imageRef"]
	if !ok || core.EmptyValue(raw) {
		return "", nil
	}
	var ref string
	if err := json.Unmarshal(raw, &ref); err != nil {
		return "", errBadImage
	}
	if s.Cfg.Images == nil {
		img, ok := s.Cfg.Catalog.Image(ref)
		if !ok {
			return "", errBadImage
		}
		if sizeGB < img.MinDisk {
			return "", minDiskError(sizeGB, img.MinDisk)
		}
		return img.ID, nil
	}
	img, err := s.Cfg.Images.GetImage(r.Context(), r.Token(), ref)
	if errors.Is(err, glance.ErrImageNotFound) {
		return "", errBadImage
	}
	if err != nil {
		return "", core.GlanceError(err, errBadImage)
	}
	const gb = 1 << 30
	switch {
	case img.Status != glance.Active:
		return "", core.BadRequest("Invalid input received: Image %s is not active.", img.ID)
	case (img.SizeBytes+gb-1)/gb > int64(sizeGB):
		return "", core.BadRequest("Invalid input received: Size of specified image %dGB is larger than volume size %dGB.",
			(img.SizeBytes+gb-1)/gb, sizeGB)
	case sizeGB < img.MinDiskGB:
		return "", minDiskError(sizeGB, img.MinDiskGB)
	}
	return img.ID, nil
}

func minDiskError(sizeGB, minGB int) error {
	return core.BadRequest("Invalid input received: Volume size %dGB cannot be smaller than the image minDisk size %dGB.", sizeGB, minGB)
}
