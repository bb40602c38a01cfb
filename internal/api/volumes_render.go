package api

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
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
	Links              []link             `json:"links"`
	UserID             string             `json:"user_id"`
	Encrypted          bool               `json:"encrypted"`
	Multiattach        bool               `json:"multiattach"`
	ReplicationStatus  *string            `json:"replication_status"`
	SnapshotID         *string            `json:"snapshot_id"`
	SourceVolID        *string            `json:"source_volid"`
	ConsistencyGroupID *string            `json:"consistencygroup_id"`
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

// attachmentID is a stable id for (volume, server): the same on every
// read, distinct for each hold.
func attachmentID(volumeID, serverID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("ingot:attachment:"+volumeID+"/"+serverID)).String()
}

// device is the disk a boot index maps to (boot index n → /dev/sd{a+n});
// data volumes have no fixed device until the OS names them.
func device(bootIndex int) *string {
	if bootIndex < 0 || bootIndex > 25 {
		return nil
	}
	d := "/dev/sd" + string(rune('a'+bootIndex))
	return &d
}

func volumeLinks(r *http.Request, id string) []link {
	return []link{
		{Rel: "self", Href: baseURL(r) + "/volume/v3/volumes/" + id},
		{Rel: "bookmark", Href: baseURL(r) + "/volume/volumes/" + id},
	}
}

func volumeDetail(r *http.Request, v store.Volume) *volumeView {
	out := &volumeView{
		ID: v.ID, Name: v.Name, Size: v.SizeGB, Status: v.Status,
		Attachments:      []volumeAttachment{},
		Bootable:         "false",
		CreatedAt:        v.CreatedAt.UTC().Format(novaUsecTime),
		AvailabilityZone: availabilityZone,
		Metadata:         map[string]string{},
		Links:            volumeLinks(r, v.ID),
	}
	if wantsExtensions(r) {
		out.StatusReason = v.StatusReason // an extension member (extensionsHeader)
	}
	if !v.UpdatedAt.IsZero() {
		out.UpdatedAt = strPtr(v.UpdatedAt.UTC().Format(novaUsecTime))
	}
	if v.ServerID != "" {
		if v.BootIndex == 0 {
			out.Bootable = "true"
		}
		out.Attachments = append(out.Attachments, volumeAttachment{
			ID: v.ID, AttachmentID: attachmentID(v.ID, v.ServerID), VolumeID: v.ID, ServerID: v.ServerID,
			HostName: strPtr(v.NodeID), Device: device(v.BootIndex),
			AttachedAt: v.UpdatedAt.UTC().Format(novaUsecTime),
		})
	}
	return out
}

// volumesAttached is a server's os-extended-volumes:volumes_attached:
// the volumes it holds, with delete_on_termination from 2.3 on.
func (rd *renderer) volumesAttached(vols []store.Volume) []any {
	out := make([]any, 0, len(vols))
	for _, v := range vols {
		if rd.mv.atLeast(3) {
			out = append(out, map[string]any{"id": v.ID, "delete_on_termination": v.DeleteOnTermination})
		} else {
			out = append(out, map[string]any{"id": v.ID})
		}
	}
	return out
}

// attachVolumes fills volumes_attached of views (views[i] renders
// servers[i]) with one query for the servers that asked for volumes.
func (s *server) attachVolumes(r *request, servers []*lifecycle.Server, views []*serverView) error {
	var ids []string
	for _, sv := range servers {
		if len(sv.Spec.Volumes) > 0 {
			ids = append(ids, sv.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	on, err := s.cfg.Store.VolumesOn(r.Context(), ids)
	if err != nil {
		return fmt.Errorf("volumes of %d servers: %w", len(ids), err)
	}
	rd := s.renderer(r)
	for i, sv := range servers {
		if vols := on[sv.ID]; len(vols) > 0 {
			views[i].Volumes = rd.volumesAttached(vols)
		}
	}
	return nil
}

// serverVolumeAttachments answers GET /servers/{id}/os-volume_attachments
// (what `openstack server volume list` reads) with the volumes the server
// holds, in Nova's shape for the request's microversion.
func (s *server) serverVolumeAttachments(w http.ResponseWriter, r *request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.VolumeAttachmentsIndex)
	if err != nil {
		return err
	}
	var vols []store.Volume
	if len(sv.Spec.Volumes) > 0 {
		if vols, err = s.cfg.Store.ServerVolumes(r.Context(), sv.ID); err != nil {
			return fmt.Errorf("volumes of %s: %w", sv.ID, err)
		}
	}
	out := make([]map[string]any, 0, len(vols))
	for _, v := range vols {
		a := map[string]any{"serverId": sv.ID, "volumeId": v.ID, "device": device(v.BootIndex)}
		if !r.mv.atLeast(89) {
			a["id"] = v.ID
		}
		if r.mv.atLeast(70) {
			a["tag"] = nil
		}
		if r.mv.atLeast(79) {
			a["delete_on_termination"] = v.DeleteOnTermination
		}
		if r.mv.atLeast(89) {
			a["attachment_id"] = attachmentID(v.ID, sv.ID)
			a["bdm_uuid"] = attachmentID(v.ID, sv.ID+"/bdm")
		}
		out = append(out, a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"volumeAttachments": out})
	return nil
}
