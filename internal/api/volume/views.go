package volume

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/store"
)

// volumeView is a volume as Cinder v3 shows it in GET /volumes/{id} and
// /volumes/detail, plus ingot's status reason.
type volumeView struct {
	ID                 string             `json:"id"`
	Name               string             `json:"name"`
	Size               int                `json:"size"`
	Status             string             `json:"status"`
	Attachments        []volumeAttachment `json:"attachments"`
	Bootable           string             `json:"bootable"` // "true"/"false", a string in Cinder
	CreatedAt          string             `json:"created_at"`
	UpdatedAt          *string            `json:"updated_at"`
	VolumeType         *string            `json:"volume_type"`
	AvailabilityZone   string             `json:"availability_zone"`
	Metadata           map[string]string  `json:"metadata"`
	Description        *string            `json:"description"`
	Links              []core.Link        `json:"links"`
	UserID             string             `json:"user_id"`
	Encrypted          bool               `json:"encrypted"`
	Multiattach        bool               `json:"multiattach"`
	ReplicationStatus  *string            `json:"replication_status"`
	SnapshotID         *string            `json:"snapshot_id"`
	SourceVolID        *string            `json:"source_volid"`
	ConsistencyGroupID *string            `json:"consistencygroup_id"`
	// ImageMetadata names the image a volume was made from (absent for a
	// blank volume, as in Cinder).
	ImageMetadata map[string]string `json:"volume_image_metadata,omitempty"`
	// StatusReason says why a held volume is still in-use or deleting.
	StatusReason string `json:"ingot:status_reason,omitempty"`
}

// volumeAttachment is one entry of a volume's attachments.
type volumeAttachment struct {
	ID           string  `json:"id"` // the volume id, as Cinder writes it
	AttachmentID string  `json:"attachment_id"`
	VolumeID     string  `json:"volume_id"`
	ServerID     string  `json:"server_id"`
	HostName     *string `json:"host_name"` // the node carrying the volume target
	Device       *string `json:"device"`
	AttachedAt   string  `json:"attached_at"`
}

// AttachmentID is a stable id for (volume, server): the same on every
// read, distinct for each hold.
func AttachmentID(volumeID, serverID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("ingot:attachment:"+volumeID+"/"+serverID)).String()
}

// Device is the disk a boot index maps to (boot index n → /dev/sd{a+n});
// data volumes have no fixed device until the OS names them.
func Device(bootIndex int) *string {
	if bootIndex < 0 || bootIndex > 25 {
		return nil
	}
	d := "/dev/sd" + string(rune('a'+bootIndex))
	return &d
}

func volumeLinks(r *http.Request, id string) []core.Link {
	return []core.Link{
		{Rel: "self", Href: core.BaseURL(r) + "/volume/v3/volumes/" + id},
		{Rel: "bookmark", Href: core.BaseURL(r) + "/volume/volumes/" + id},
	}
}

func volumeDetail(r *http.Request, v store.Volume) *volumeView {
	out := &volumeView{
		ID: v.ID, Name: v.Name, Size: v.SizeGB, Status: v.Status,
		Attachments:      []volumeAttachment{},
		Bootable:         "false",
		CreatedAt:        v.CreatedAt.UTC().Format(core.NovaUsecTime),
		AvailabilityZone: core.AvailabilityZone,
		Metadata:         map[string]string{},
		Links:            volumeLinks(r, v.ID),
		Description:      core.StrPtr(v.Description),
	}
	if v.ImageID != "" {
		out.Bootable = "true" // Cinder marks a volume made from an image bootable
		out.ImageMetadata = map[string]string{"image_id": v.ImageID}
	}
	if core.WantsExtensions(r) {
		out.StatusReason = v.StatusReason // an extension member (extensionsHeader)
	}
	if !v.UpdatedAt.IsZero() {
		out.UpdatedAt = core.StrPtr(v.UpdatedAt.UTC().Format(core.NovaUsecTime))
	}
	if v.ServerID != "" {
		if v.BootIndex == 0 {
			out.Bootable = "true"
		}
		out.Attachments = append(out.Attachments, volumeAttachment{
			ID: v.ID, AttachmentID: AttachmentID(v.ID, v.ServerID), VolumeID: v.ID, ServerID: v.ServerID,
			HostName: core.StrPtr(v.NodeID), Device: Device(v.BootIndex),
			AttachedAt: v.UpdatedAt.UTC().Format(core.NovaUsecTime),
		})
	}
	return out
}
