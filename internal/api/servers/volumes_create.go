package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// Members of a block_device_mapping_v2 entry. Those past the first five
// describe the guest's view of the disk and are accepted and ignored (the
// node's firmware and OS name its disks).
var bdmFields = []string{"source_type", "destination_type", "uuid", "boot_index", "delete_on_termination",
	"device_name", "disk_bus", "device_type", "tag", "volume_size", "guest_format"}

const bdmSupported = `ingot attaches existing volumes (source_type "volume" with destination_type "volume"), makes volumes from an image or blank (source_type "image" or "blank" with destination_type "volume" and a volume_size) and boots an image given as source_type "image" with destination_type "local" at boot_index 0`

// parseBlockDevices maps block_device_mapping_v2 to volume references:
// each entry an existing volume by uuid, boot_index absent, null or
// negative for a data volume (-1). Boot indexes that are set must be
// 0, 1, … without gaps or repeats, as Nova requires (and Ironic refuses
// two targets with one boot index on a node, docs/ironic.md §5).
func parseBlockDevices(raw json.RawMessage) ([]lifecycle.VolumeRef, string, error) {
	if raw == nil || string(raw) == "null" {
		return nil, "", nil
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, "", core.BadRequest("Invalid input for field/attribute block_device_mapping_v2. Value: %s. It must be a list of objects.", raw)
	}
	var refs []lifecycle.VolumeRef
	image := ""
	for i, item := range list {
		if item == nil {
			return nil, "", core.BadRequest("Invalid input for field/attribute block_device_mapping_v2: entry %d is not an object.", i)
		}
		if id, ok, err := imageLocal(item); err != nil || ok {
			if err != nil {
				return nil, "", err
			}
			if image != "" {
				return nil, "", core.BadRequest("Invalid block device mapping: more than one image has boot_index 0; a server boots from one image.")
			}
			image = id
			continue
		}
		ref, err := parseBlockDevice(item)
		if err != nil {
			return nil, "", err
		}
		if !ref.Made() && slices.ContainsFunc(refs, func(r lifecycle.VolumeRef) bool { return r.ID == ref.ID }) {
			return nil, "", core.BadRequest("Invalid block device mapping: volume %s is requested twice.", ref.ID)
		}
		refs = append(refs, ref)
	}
	var boots []int
	if image != "" {
		boots = append(boots, 0) // the image is the boot disk
	}
	for _, r := range refs {
		if r.BootIndex >= 0 {
			boots = append(boots, r.BootIndex)
		}
	}
	slices.Sort(boots)
	for i, b := range boots {
		if b == i {
			continue
		}
		if i > 0 && boots[i-1] == b {
			if b == 0 {
				return nil, "", core.BadRequest("Invalid block device mapping: more than one volume has boot_index 0; a server boots from one volume.")
			}
			return nil, "", core.BadRequest("Invalid block device mapping: more than one volume has boot_index %d.", b)
		}
		return nil, "", core.BadRequest("Boot sequence for the instance and image/block device mapping combination is not valid: boot_index values must be 0, 1, … without gaps (got %d).", b)
	}
	return refs, image, nil
}

// imageLocal reads an entry {source_type: image, destination_type: local,
// uuid, boot_index: 0}: the image to boot, as Nova treats it for Ironic
// (ok false for any other entry). At another boot index it is Nova's 400.
func imageLocal(item map[string]json.RawMessage) (string, bool, error) {
	src, _ := core.OptionalString(item, "source_type", 255)
	dst, _ := core.OptionalString(item, "destination_type", 255)
	if src != "image" || dst != "local" {
		return "", false, nil
	}
	boot, err := bootIndex(item["boot_index"])
	if err != nil {
		return "", false, err
	}
	if boot != 0 {
		return "", false, core.BadRequest("Block Device Mapping is Invalid: Mapping image to local is not supported.")
	}
	id, err := core.OptionalString(item, "uuid", 255)
	if err != nil {
		return "", false, err
	}
	if id == "" {
		return "", false, core.BadRequest("Block Device Mapping is Invalid: an image entry needs a uuid.")
	}
	return id, true, nil
}

func parseBlockDevice(item map[string]json.RawMessage) (lifecycle.VolumeRef, error) {
	for k := range item {
		if !slices.Contains(bdmFields, k) {
			return lifecycle.VolumeRef{}, core.BadRequest("Block device mapping member %q is not supported; %s.", k, bdmSupported)
		}
	}
	src, err := core.OptionalString(item, "source_type", 255)
	if err != nil {
		return lifecycle.VolumeRef{}, err
	}
	dst, err := core.OptionalString(item, "destination_type", 255)
	if err != nil {
		return lifecycle.VolumeRef{}, err
	}
	if dst == "" {
		dst = "volume" // Nova's default for a volume source
	}
	if err := novaNewVolumeChecks(item, src, dst); err != nil {
		return lifecycle.VolumeRef{}, err
	}
	tag, err := core.OptionalString(item, "tag", 60)
	if err != nil {
		return lifecycle.VolumeRef{}, err
	}
	if dst == "volume" && (src == lifecycle.SourceImage || src == lifecycle.SourceBlank) {
		ref, err := newVolumeRef(item, src)
		ref.Tag = tag
		return ref, err
	}
	if src != "volume" || dst != "volume" {
		return lifecycle.VolumeRef{}, core.BadRequest("Block device mapping with source_type %q and destination_type %q is not supported: %s.",
			src, dst, bdmSupported)
	}
	id, err := core.OptionalString(item, "uuid", 255)
	if err != nil {
		return lifecycle.VolumeRef{}, err
	}
	if id == "" {
		return lifecycle.VolumeRef{}, core.BadRequest("Invalid block device mapping: a volume entry needs a uuid.")
	}
	if !core.IsUUID(id) {
		return lifecycle.VolumeRef{}, core.BadRequest("Invalid input for field/attribute uuid. Value: %s. It is not a volume UUID.", id)
	}
	boot, err := bootIndex(item["boot_index"])
	if err != nil {
		return lifecycle.VolumeRef{}, err
	}
	dot, err := core.BoolValue(item["delete_on_termination"], "delete_on_termination")
	if err != nil {
		return lifecycle.VolumeRef{}, err
	}
	return lifecycle.VolumeRef{ID: strings.ToLower(id), BootIndex: boot, DeleteOnTermination: dot, Tag: tag}, nil
}

// newVolumeRef reads an image→volume or blank→volume entry (Nova's 400s
// already answered): a volume the build makes of volume_size GB, from
// the image uuid names, bootable at boot_index or a data volume,
// delete_on_termination as given (Nova's default: false).
func newVolumeRef(item map[string]json.RawMessage, src string) (lifecycle.VolumeRef, error) {
	ref := lifecycle.VolumeRef{Source: src}
	var err error
	if ref.SizeGB, err = bdmVolumeSize(item["volume_size"]); err != nil {
		return ref, err
	}
	if ref.BootIndex, err = bootIndex(item["boot_index"]); err != nil {
		return ref, err
	}
	if ref.DeleteOnTermination, err = core.BoolValue(item["delete_on_termination"], "delete_on_termination"); err != nil {
		return ref, err
	}
	if src == lifecycle.SourceImage {
		if ref.ImageID, err = core.OptionalString(item, "uuid", 255); err != nil {
			return ref, err
		}
	}
	return ref, nil
}

// novaNewVolumeChecks answers Nova's 400s for the entries that would make
// a volume (image or blank to volume), which are checked before ingot's
// own refusal: a blank entry names no uuid, an image one does, and both
// need a volume_size above 0.
func novaNewVolumeChecks(item map[string]json.RawMessage, src, dst string) error {
	if dst != "volume" || (src != "image" && src != "blank") {
		return nil
	}
	id, err := core.OptionalString(item, "uuid", 255)
	if err != nil {
		return err
	}
	switch {
	case src == "blank" && id != "":
		return core.BadRequest("Block Device Mapping is Invalid: Invalid device UUID.")
	case src == "image" && id == "":
		return core.BadRequest("Block Device Mapping is Invalid: Missing device UUID.")
	}
	size, err := bdmVolumeSize(item["volume_size"])
	if err != nil || size > 0 {
		return err
	}
	if src == "blank" {
		return core.BadRequest("Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size")
	}
	return core.BadRequest("Images with destination_type 'volume' need to have a non-zero size specified")
}

// bdmVolumeSize reads volume_size: absent or null is 0; an integer or a
// string of one, not negative (Nova's schema).
func bdmVolumeSize(raw json.RawMessage) (int, error) {
	if raw == nil || string(raw) == "null" {
		return 0, nil
	}
	str, _ := numberText(raw)
	size, err := strconv.Atoi(strings.TrimSpace(str))
	if err != nil || size < 0 {
		return 0, core.BadRequest("Invalid input for field/attribute volume_size. Value: %s. It is not a non-negative integer.", raw)
	}
	return size, nil
}

// numberText is a JSON number's text, or a JSON string's (ok false for
// anything else).
func numberText(raw json.RawMessage) (string, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	var str string
	return str, json.Unmarshal(raw, &str) == nil
}

// bootIndex reads boot_index: an integer or a string of one; absent, null,
// "none" and negative values mean a data volume (-1).
func bootIndex(raw json.RawMessage) (int, error) {
	if raw == nil || string(raw) == "null" {
		return -1, nil
	}
	str, ok := numberText(raw)
	if !ok {
		return 0, core.BadRequest("Invalid input for field/attribute boot_index. Value: %s. It is not an integer.", raw)
	}
	if s := strings.TrimSpace(strings.ToLower(str)); s == "" || s == "none" {
		return -1, nil
	}
	b, err := strconv.Atoi(strings.TrimSpace(str))
	if err != nil {
		return 0, core.BadRequest("Invalid input for field/attribute boot_index. Value: %s. It is not an integer.", raw)
	}
	return max(b, -1), nil
}

// resolveBoot reads block_device_mapping_v2 and the image: with a boot
// volume (boot_index 0) imageRef may be absent or "" (boot from volume:
// the Spec's image fields stay empty); otherwise the image is required.
// It checks the volumes exist and are free, so the common mistakes get a
// message naming the volume; CreateServer's reservation stays the fence.
func (s *Service) resolveBoot(r *core.Request, fields map[string]json.RawMessage, c *createRequest) error {
	ctx, project := r.Context(), r.Ident.ProjectID
	if _, ok := fields["block_device_mapping"]; ok {
		return core.BadRequest("The legacy block_device_mapping is not supported: use block_device_mapping_v2 (%s).", bdmSupported)
	}
	if err := bdmTags(fields["block_device_mapping_v2"], r.MV); err != nil {
		return err
	}
	refs, image, err := parseBlockDevices(fields["block_device_mapping_v2"])
	if err != nil {
		return err
	}
	if ref, _ := core.OptionalString(fields, "imageRef", 2048); image != "" && refID(ref) == "" {
		// An image→local boot device is the image boot Nova makes of it:
		// its uuid is the imageRef.
		fields["imageRef"], _ = json.Marshal(image)
	}
	c.volumes = refs
	ref, err := core.OptionalString(fields, "imageRef", 2048)
	if err != nil {
		return err
	}
	bootVolume := slices.ContainsFunc(refs, func(r lifecycle.VolumeRef) bool { return r.BootIndex == 0 })
	existing := slices.DeleteFunc(slices.Clone(refs), func(r lifecycle.VolumeRef) bool { return r.Made() })
	if len(existing) < len(refs) && s.Cfg.Cinder != nil {
		// Cinder makes the volumes in the caller's project, with their token.
		c.volumeToken = r.Header.Get("X-Auth-Token")
	}
	if refID(ref) != "" || !bootVolume {
		if err := s.resolveImage(fields, c); err != nil {
			return err
		}
	}
	if len(refs) > 0 && s.Cfg.Cinder == nil && s.Cfg.Embedded.RecordsOnly {
		return core.BadRequest("Block Device Mapping is Invalid: this cloud's volumes are records only " +
			"(volume.embedded.records_only): no iSCSI target serves them, so no server can boot from or attach one.")
	}
	if s.Cfg.Cinder != nil {
		if err := s.holdCinderVolumes(r, existing); err != nil {
			return err
		}
	}
	for _, r := range existing {
		v, err := s.Cfg.Store.GetVolume(ctx, r.ID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && v.ProjectID != "" && v.ProjectID != project) {
			return core.BadRequest("Invalid block device mapping: volume %s could not be found.", r.ID)
		}
		if err != nil {
			return fmt.Errorf("volume %s: %w", r.ID, err)
		}
		if v.ServerID != "" {
			return core.BadRequest("Invalid volume: volume %s is %s, held by server %s.", r.ID, v.Status, v.ServerID)
		}
	}
	return nil
}

// resolveVolumeImages checks the image of each image→volume entry as Nova
// does before it accepts the create: it exists and the caller may see it
// (Glance with their token, or the configured catalogue), is active, and
// fits the volume (min_disk).
func (s *Service) resolveVolumeImages(r *core.Request, c *createRequest) error {
	for _, ref := range c.volumes {
		if ref.Source != lifecycle.SourceImage {
			continue
		}
		minDisk := 0
		if s.Cfg.Images != nil {
			img, _, err := s.glanceImage(r, ref.ImageID, 0, 0, core.BadRequest("Image %s could not be found.", ref.ImageID))
			if err != nil {
				return err
			}
			minDisk = img.MinDisk
		} else {
			img, ok := s.Cfg.Catalog.Image(ref.ImageID)
			if !ok {
				return core.BadRequest("Image %s could not be found.", ref.ImageID)
			}
			minDisk = img.MinDisk
		}
		if ref.SizeGB < minDisk {
			return core.BadRequest("Volume is smaller than the minimum size specified in image metadata. Volume size is %d bytes, minimum size is %d bytes.",
				int64(ref.SizeGB)<<30, int64(minDisk)<<30)
		}
	}
	return nil
}

// volumeCreateError maps CreateServer's volume errors (a volume deleted
// or taken between resolveBoot and the insert) to 400s; nothing was
// written. Other errors pass unchanged.
func volumeCreateError(err error) error {
	switch {
	case errors.Is(err, store.ErrVolumeInUse):
		return core.BadRequest("Invalid volume: %s.", strings.TrimSuffix(err.Error(), ": "+store.ErrVolumeInUse.Error()))
	case errors.Is(err, store.ErrNotFound):
		return core.BadRequest("Invalid block device mapping: %s could not be found.", strings.TrimSuffix(err.Error(), ": "+store.ErrNotFound.Error()))
	}
	return err
}

// bdmTags refuses a block device's tag where Nova's schema has none: below
// 2.32, and at 2.33–2.41 (removed by mistake there, back at 2.42).
func bdmTags(raw json.RawMessage, mv core.Version) error {
	if mv.AtLeast(42) || (mv.AtLeast(32) && !mv.AtLeast(33)) {
		return nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil // parseBlockDevices says what is wrong
	}
	for i, item := range list {
		if _, ok := item["tag"]; ok {
			return core.BadRequest("Invalid input for field/attribute %d. Value: %s. Additional properties are not allowed ('tag' was unexpected)",
				i, compactJSON(item))
		}
	}
	return nil
}

// compactJSON is v as JSON, for a message.
func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
