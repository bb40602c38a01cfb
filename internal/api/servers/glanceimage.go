package servers

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/glance"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// With image.backend glance, imageRef is read from Glance with the
// caller's token on create and rebuild, and checked as Nova's
// _check_requested_image checks it (status, then the flavor's memory,
// then its disk against the image's size and min_disk), with Nova's
// answers. The server records the Glance id as image_source: Ironic reads
// the image (format, checksum, kernel and ramdisk) from Glance itself.

// glanceImage is a bootable Glance image for a flavor's disk (GiB; 0: the
// root is a volume, or the flavor sets none) and memory (MiB), with the
// traits it requires; notFound answers an image the caller may not see.
func (s *Service) glanceImage(r *core.Request, ref string, diskGB, ramMB int, notFound error) (catalog.Image, []string, error) {
	if !core.IsUUID(ref) {
		return catalog.Image{}, nil, core.BadRequest("Invalid imageRef provided.")
	}
	img, err := s.Cfg.Images.GetImage(r.Context(), r.Token(), ref)
	if err != nil {
		return catalog.Image{}, nil, core.GlanceError(err, notFound)
	}
	if img.Status != glance.Active {
		return catalog.Image{}, nil, core.BadRequest("Image %s is not active.", img.ID)
	}
	switch err := img.CheckFlavor(diskGB, ramMB); {
	case errors.Is(err, glance.ErrFlavorMemoryTooSmall):
		return catalog.Image{}, nil, core.BadRequest("Flavor's memory is too small for requested image.")
	case errors.Is(err, glance.ErrFlavorDiskSmallerThanImage):
		return catalog.Image{}, nil, core.BadRequest("Flavor's disk is too small for requested image. Flavor disk is %d bytes, image is %d bytes.",
			int64(diskGB)<<30, img.SizeBytes)
	case errors.Is(err, glance.ErrFlavorDiskTooSmall):
		return catalog.Image{}, nil, core.BadRequest("Flavor's disk is smaller than the minimum size specified in image metadata. Flavor disk is %d bytes, minimum size is %d bytes.",
			int64(diskGB)<<30, int64(img.MinDiskGB)<<30)
	case err != nil:
		return catalog.Image{}, nil, err
	}
	// Nova reads only trait:NAME=required from an image (traits_required);
	// forbidden traits are the flavor's alone.
	required, _ := img.Traits()
	return catalog.Image{ID: img.ID, Name: img.Name, URL: img.ID, MinDisk: img.MinDiskGB}, required, nil
}

// resolveGlanceImage resolves a create's imageRef (recorded by
// resolveImage) against the flavor resolved before it.
func (s *Service) resolveGlanceImage(r *core.Request, c *createRequest) error {
	if s.Cfg.Images == nil || c.glanceRef == "" {
		return nil
	}
	disk := c.flavor.DiskGB
	if slices.ContainsFunc(c.volumes, func(v lifecycle.VolumeRef) bool { return v.BootIndex == 0 }) {
		disk = 0 // the root is a volume: Nova checks min_disk against the volume
	}
	img, traits, err := s.glanceImage(r, c.glanceRef, disk, c.flavor.RAMMB, core.BadRequest("Can not find requested image"))
	if err != nil {
		return err
	}
	c.image, c.imageTraits = img, traits
	return nil
}

// rebuildGlanceImage resolves a rebuild's imageRef against the server's
// flavor (its sizes as recorded at create). The server stays on its node,
// so the image's traits must be the node's: Nova's conductor refuses
// otherwise with NoValidHost; ingot answers the same reason at once.
func (s *Service) rebuildGlanceImage(r *core.Request, sv *lifecycle.Server, rb *rebuildRequest) error {
	if s.Cfg.Images == nil {
		return nil
	}
	img, traits, err := s.glanceImage(r, rb.image.ID, sv.Spec.RootGB, sv.Spec.RAMMB, core.BadRequest("Cannot find image for rebuild"))
	if err != nil {
		return err
	}
	missing, err := s.missingNodeTraits(r, sv, traits)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return core.BadRequest("No valid host was found. Image traits cannot be satisfied by the current resource providers. Either specify a different image during rebuild or create a new server with the specified image.")
	}
	rb.image, rb.imageTraits, rb.glance = img, traits, true
	return nil
}

// missingNodeTraits are the traits of want that the server's node lacks
// (those it was scheduled with it has; the rest are read from Ironic).
func (s *Service) missingNodeTraits(r *core.Request, sv *lifecycle.Server, want []string) ([]string, error) {
	var unsure []string
	for _, t := range want {
		if !slices.Contains(sv.Spec.RequiredTraits, t) {
			unsure = append(unsure, t)
		}
	}
	if len(unsure) == 0 || s.Cfg.Nodes == nil || sv.NodeID == "" {
		return unsure, nil
	}
	nodes, err := s.Cfg.Nodes(r.Context())
	if err != nil {
		return nil, fmt.Errorf("traits of node %s: %w", sv.NodeID, err)
	}
	for _, n := range nodes {
		if n.UUID == sv.NodeID {
			return slices.DeleteFunc(unsure, func(t string) bool { return slices.Contains(n.Traits, t) }), nil
		}
	}
	return unsure, nil
}

// addImageTraits adds the image's required traits to the flavor's (the
// scheduler filters on them and the deploy passes them in
// instance_info.traits, as Nova's Ironic driver does), remembering which
// it added.
func addImageTraits(spec *lifecycle.Spec, traits []string) {
	for _, t := range traits {
		if !slices.Contains(spec.RequiredTraits, t) {
			spec.RequiredTraits = append(spec.RequiredTraits, t)
			spec.ImageTraits = append(spec.ImageTraits, t)
		}
	}
	slices.Sort(spec.RequiredTraits)
}

// replaceImageTraits swaps the old image's added traits for the new one's.
func replaceImageTraits(spec *lifecycle.Spec, traits []string) {
	spec.RequiredTraits = slices.DeleteFunc(spec.RequiredTraits, func(t string) bool { return slices.Contains(spec.ImageTraits, t) })
	spec.ImageTraits = nil
	addImageTraits(spec, traits)
}
