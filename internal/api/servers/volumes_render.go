package servers

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/volume"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// volumesAttached is a server's os-extended-volumes:volumes_attached:
// the volumes it holds, with delete_on_termination from 2.3 on.
func (rd *renderer) volumesAttached(vols []store.Volume) []attachedVolume {
	out := make([]attachedVolume, 0, len(vols))
	for _, v := range vols {
		a := attachedVolume{ID: v.ID}
		if rd.mv.AtLeast(mvExtendedAttrs) {
			a.DeleteOnTermination = &v.DeleteOnTermination
		}
		out = append(out, a)
	}
	return out
}

// attachVolumes fills volumes_attached of views (views[i] renders
// servers[i]) with one query for the servers that asked for volumes.
func (s *Service) attachVolumes(r *core.Request, servers []*lifecycle.Server, views []*serverView) error {
	var ids []string
	for _, sv := range servers {
		if len(sv.Spec.Volumes) > 0 {
			ids = append(ids, sv.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	on, err := s.Cfg.Store.VolumesOn(r.Context(), ids)
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
func (s *Service) serverVolumeAttachments(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.VolumeAttachmentsIndex)
	if err != nil {
		return err
	}
	vols, err := s.heldVolumes(r, sv)
	if err != nil {
		return err
	}
	out := make([]serverVolumeAttachment, 0, len(vols))
	for _, v := range vols {
		out = append(out, volumeAttachmentView(r, sv, v))
	}
	core.WriteJSON(w, http.StatusOK, volumeAttachmentsBody{VolumeAttachments: out})
	return nil
}

// heldVolumes are the volumes sv holds now, as the registry says
// (Spec.Volumes also keeps those detached after the build).
func (s *Service) heldVolumes(r *core.Request, sv *lifecycle.Server) ([]store.Volume, error) {
	if len(sv.Spec.Volumes) == 0 {
		return nil, nil
	}
	vols, err := s.Cfg.Store.ServerVolumes(r.Context(), sv.ID)
	if err != nil {
		return nil, fmt.Errorf("volumes of %s: %w", sv.ID, err)
	}
	return vols, nil
}

// volumeAttachmentView is one volume of a server in os-volume_attachments'
// shape at the request's microversion. attachment_id (2.89) is the Cinder
// attachment when there is one (Cinder compares it before it deletes an
// attachment a user asks it to). tag (2.70) is the block device's, null
// when it has none.
func volumeAttachmentView(r *core.Request, sv *lifecycle.Server, v store.Volume) serverVolumeAttachment {
	serverID := sv.ID
	a := serverVolumeAttachment{ServerID: serverID, VolumeID: v.ID, Device: volume.Device(v.BootIndex)}
	if !r.MV.AtLeast(mvAttachmentID) {
		a.ID = &v.ID
	}
	if r.MV.AtLeast(mvAttachmentTag) {
		a.Tag = core.JSONNull
		if tag := volumeTag(sv, v.ID); tag != "" {
			a.Tag = tag
		}
	}
	if r.MV.AtLeast(mvAttachmentDeleteFlag) {
		a.DeleteOnTermination = &v.DeleteOnTermination
	}
	if r.MV.AtLeast(mvAttachmentID) {
		attachment, bdm := volume.AttachmentID(v.ID, serverID), volume.AttachmentID(v.ID, serverID+"/bdm")
		if v.AttachmentID != "" {
			attachment = v.AttachmentID
		}
		a.AttachmentID, a.BDMUUID = &attachment, &bdm
	}
	return a
}

// serverVolumeAttachment answers GET
// /servers/{id}/os-volume_attachments/{volume} as Nova: the attachment
// when the server holds the volume, 404 otherwise. Cinder asks it, with
// the user's token, before it deletes an attachment that a call without a
// service token asks it to delete.
func (s *Service) serverVolumeAttachment(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.VolumeAttachmentsShow)
	if err != nil {
		return err
	}
	volID := r.PathValue("volume")
	v, err := s.Cfg.Store.GetVolume(r.Context(), volID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && v.ServerID != sv.ID) {
		return core.NotFound("Instance %s is not attached to volume %s.", sv.ID, volID)
	}
	if err != nil {
		return fmt.Errorf("volume %s: %w", volID, err)
	}
	core.WriteJSON(w, http.StatusOK, volumeAttachmentBody{VolumeAttachment: volumeAttachmentView(r, sv, v)})
	return nil
}
