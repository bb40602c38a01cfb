package cindersim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
)

type attachment struct {
	id, volumeID, instance, project string
	status                          string // reserved, attaching, attached
	connector                       map[string]any
	connInfo                        map[string]any
	attachedAt                      time.Time
}

func (a *attachment) host() string       { s, _ := a.connector["host"].(string); return s }
func (a *attachment) mountpoint() string { s, _ := a.connector["mountpoint"].(string); return s }

func (a *attachment) view() map[string]any {
	ci := a.connInfo
	if ci == nil {
		ci = map[string]any{}
	}
	out := map[string]any{"id": a.id, "volume_id": a.volumeID, "instance": a.instance, "status": a.status,
		"attach_mode": "rw", "connection_info": ci, "attached_at": nil, "detached_at": nil}
	if !a.attachedAt.IsZero() {
		out["attached_at"] = a.attachedAt.Format(timeFormat)
	}
	return out
}

// connectionInfo is what Cinder's LVM driver behind an iSCSI target
// answers, flat as the attachments API shows it (the same as cindertest's
// fake driver).
func connectionInfo(volumeID, attachmentID string) map[string]any {
	sum := sha256.Sum256([]byte(volumeID))
	secret := hex.EncodeToString(sum[:])
	return map[string]any{"driver_volume_type": "iscsi", "attachment_id": attachmentID, "access_mode": "rw",
		"target_discovered": false, "target_iqn": "iqn.2010-10.org.openstack:volume-" + volumeID,
		"target_portal": "127.0.0.1:3260", "target_lun": 0, "volume_id": volumeID, "auth_method": "CHAP",
		"auth_username": "chap-" + secret[:12], "auth_password": secret[12:28],
		"cacheable": false, "encrypted": false, "qos_specs": nil}
}

func (s *Sim) visibleAttachment(c call, id string) (*attachment, bool) {
	a, ok := s.attachments[id]
	return a, ok && (a.project == c.id.ProjectID || c.id.has("admin"))
}

// attachmentOr404 is the path's attachment, or false after a 404 (s.mu held).
func (s *Sim) attachmentOr404(w http.ResponseWriter, r *http.Request, c call) (*attachment, bool) {
	a, ok := s.visibleAttachment(c, r.PathValue("id"))
	if !ok {
		attachmentNotFound(w, r.PathValue("id"))
	}
	return a, ok
}

func attachmentNotFound(w http.ResponseWriter, id string) {
	fault(w, http.StatusNotFound, "Volume attachment could not be found with filter: attachment_id = "+id+".")
}

func (s *Sim) listAttachments(w http.ResponseWriter, r *http.Request, c call) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, a := range s.attachments {
		// all_tenants: an admin lists every project's (ingot's own calls).
		every := q.Get("all_tenants") != "" && c.id.has("admin")
		if !every && a.project != c.id.ProjectID || q.Get("instance_id") != "" && a.instance != q.Get("instance_id") ||
			q.Get("volume_id") != "" && a.volumeID != q.Get("volume_id") {
			continue
		}
		out = append(out, a.view())
	}
	reply(w, http.StatusOK, map[string]any{"attachments": out})
}

func (s *Sim) getAttachment(w http.ResponseWriter, r *http.Request, c call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.attachmentOr404(w, r, c)
	if !ok {
		return
	}
	reply(w, http.StatusOK, map[string]any{"attachment": a.view()})
}

func (s *Sim) createAttachment(w http.ResponseWriter, r *http.Request, c call) {
	var body struct {
		Attachment struct {
			VolumeUUID   string         `json:"volume_uuid"`
			InstanceUUID string         `json:"instance_uuid"`
			Connector    map[string]any `json:"connector"`
		} `json:"attachment"`
	}
	if !decode(w, r, &body) {
		return
	}
	b := body.Attachment
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.visible(c, b.VolumeUUID)
	if !ok {
		volumeNotFound(w, b.VolumeUUID)
		return
	}
	// Cinder reserves an available volume; a reserved or attached one only
	// for the server it is already attached to.
	if v.status != "available" {
		same := false
		for _, aid := range v.attachments {
			same = same || s.attachments[aid].instance == b.InstanceUUID
		}
		if !same {
			fault(w, http.StatusBadRequest, "Invalid volume: Volume "+v.id+" status must be available or downloading "+
				"to reserve, but the current status is "+v.status+".")
			return
		}
	} else {
		v.status = "reserved"
	}
	a := &attachment{id: uuid.NewString(), volumeID: v.id, instance: b.InstanceUUID, project: v.project, status: "reserved"}
	if b.Connector != nil {
		a.connector, a.connInfo, a.status, v.status = b.Connector, connectionInfo(v.id, a.id), "attaching", "attaching"
	}
	s.attachments[a.id] = a
	v.attachments = append(v.attachments, a.id)
	reply(w, http.StatusOK, map[string]any{"attachment": a.view()})
}

func (s *Sim) updateAttachment(w http.ResponseWriter, r *http.Request, c call) {
	var body struct {
		Attachment struct {
			Connector map[string]any `json:"connector"`
		} `json:"attachment"`
	}
	if !decode(w, r, &body) {
		return
	}
	if body.Attachment.Connector == nil {
		fault(w, http.StatusBadRequest, "Invalid input for field/attribute connector.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.attachmentOr404(w, r, c)
	if !ok {
		return
	}
	v := s.volumes[a.volumeID]
	if len(v.attachments) > 1 {
		for _, aid := range v.attachments {
			if s.attachments[aid].connInfo != nil {
				fault(w, http.StatusInternalServerError, "Unable to update attachment.(Invalid volume: duplicate "+
					"connectors detected on volume "+v.id+").")
				return
			}
		}
	}
	a.connector, a.connInfo, a.status = body.Attachment.Connector, connectionInfo(v.id, a.id), "attaching"
	if v.status == "reserved" {
		v.status = "attaching"
	}
	reply(w, http.StatusOK, map[string]any{"attachment": a.view()})
}

func (s *Sim) attachmentAction(w http.ResponseWriter, r *http.Request, c call) {
	var body map[string]any
	if !decode(w, r, &body) {
		return
	}
	if _, ok := body["os-complete"]; !ok {
		fault(w, http.StatusBadRequest, "There is no such action")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.attachmentOr404(w, r, c)
	if !ok {
		return
	}
	a.status, a.attachedAt = "attached", s.clk.Now().UTC()
	s.volumes[a.volumeID].status = "in-use"
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) deleteAttachment(w http.ResponseWriter, r *http.Request, c call) {
	id := r.PathValue("id")
	s.mu.Lock()
	a, ok := s.visibleAttachment(c, id)
	if !ok {
		s.mu.Unlock()
		attachmentNotFound(w, id)
		return
	}
	ask := !c.service && a.instance != "" && a.connInfo != nil
	instance, volumeID, compute := a.instance, a.volumeID, s.computeURL
	s.mu.Unlock()
	if ask {
		if compute == "" {
			fault(w, http.StatusInternalServerError, "The server has either erred or is incapable of performing the requested operation.")
			return
		}
		using, err := s.computeUses(r.Context(), compute, c.token, instance, volumeID, id)
		if err != nil {
			fault(w, http.StatusInternalServerError, "The server has either erred or is incapable of performing the requested operation.")
			return
		}
		if using {
			fault(w, http.StatusConflict, "ConflictNovaUsingAttachment: Detach volume from instance "+instance+" using the Compute API")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.attachments[id]; !ok {
		attachmentNotFound(w, id)
		return
	}
	delete(s.attachments, id)
	v := s.volumes[volumeID]
	remaining := []map[string]any{}
	kept := v.attachments[:0]
	for _, aid := range v.attachments {
		if aid != id {
			kept = append(kept, aid)
			remaining = append(remaining, s.attachments[aid].view())
		}
	}
	v.attachments = kept
	if len(kept) == 0 {
		v.status = "available"
	}
	reply(w, http.StatusOK, map[string]any{"attachments": remaining})
}

// computeUses asks compute, as Cinder does, whether the server still uses
// the attachment: 404 no; the same attachment_id yes; another no.
func (s *Sim) computeUses(ctx context.Context, compute, token, server, volumeID, attachmentID string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, compute+"/servers/"+server+"/os-volume_attachments/"+volumeID, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("OpenStack-API-Version", "compute 2.89")
	resp, err := s.hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	var out struct {
		VolumeAttachment struct {
			AttachmentID string `json:"attachment_id"`
		} `json:"volumeAttachment"`
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("compute answered %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return false, err
	}
	return out.VolumeAttachment.AttachmentID == attachmentID, nil
}
