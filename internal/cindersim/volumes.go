package cindersim

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
)

type volume struct {
	id, project, name, description, status, imageID string
	size                                            int
	bootable                                        bool
	createdAt                                       time.Time
	attachments                                     []string // ids, in creation order
	// reads is how many more reads see it creating before it is final
	// (SetCreating).
	reads int
	final string
}

// SetCreating makes the volumes created from now on stay "creating" for
// reads reads (GETs and lists) and then end final ("available" or
// "error"); reads 0 is the default: available from the first read.
func (s *Sim) SetCreating(reads int, final string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creatingReads, s.creatingFinal = reads, final
}

// read is one read of v: a volume being made moves on.
func (v *volume) read() {
	if v.status != "creating" {
		return
	}
	if v.reads--; v.reads <= 0 {
		v.status = v.final
	}
}

// visible: the volume exists and the caller's project owns it (or an admin asks).
func (s *Sim) visible(c call, id string) (*volume, bool) {
	v, ok := s.volumes[id]
	return v, ok && (v.project == c.id.ProjectID || c.id.has("admin"))
}

func (s *Sim) volumeView(v *volume) map[string]any {
	atts := []map[string]any{}
	for _, aid := range v.attachments {
		a := s.attachments[aid]
		if a.status != "attached" {
			continue
		}
		atts = append(atts, map[string]any{"id": v.id, "attachment_id": a.id, "volume_id": v.id,
			"server_id": a.instance, "host_name": a.host(), "device": a.mountpoint(),
			"attached_at": a.attachedAt.Format(timeFormat)})
	}
	out := map[string]any{"id": v.id, "name": v.name, "description": v.description, "status": v.status,
		"size": v.size, "bootable": fmt.Sprint(v.bootable), "attachments": atts, "multiattach": false,
		"volume_type": "__DEFAULT__", "availability_zone": "nova", "encrypted": false, "metadata": map[string]string{},
		"created_at": v.createdAt.Format(timeFormat), "updated_at": v.createdAt.Format(timeFormat)}
	if v.imageID != "" {
		out["volume_image_metadata"] = map[string]string{"image_id": v.imageID}
	}
	return out
}

func (s *Sim) listVolumes(w http.ResponseWriter, r *http.Request, c call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	// An admin's all_tenants lists every project's (project_id narrows
	// it); name is an exact match, as Cinder's filter.
	all := c.id.has("admin") && q.Get("all_tenants") != "" && q.Get("all_tenants") != "0"
	out := []map[string]any{}
	for _, v := range s.volumes {
		mine := v.project == c.id.ProjectID
		if all {
			mine = q.Get("project_id") == "" || v.project == q.Get("project_id")
		}
		if mine && (q.Get("name") == "" || v.name == q.Get("name")) {
			v.read()
			out = append(out, s.adminView(c, v))
		}
	}
	reply(w, http.StatusOK, map[string]any{"volumes": out})
}

func (s *Sim) createVolume(w http.ResponseWriter, r *http.Request, c call) {
	var body struct {
		Volume struct {
			Size        int    `json:"size"`
			Name        string `json:"name"`
			Description string `json:"description"`
			ImageRef    string `json:"imageRef"`
		} `json:"volume"`
	}
	if !decode(w, r, &body) {
		return
	}
	if n := body.Volume.Size; n < 1 {
		fault(w, http.StatusBadRequest, fmt.Sprintf("Invalid input for field/attribute size. Value: %d. %d is less than the minimum of 1", n, n))
		return
	}
	b := body.Volume
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.ImageRef != "" && !s.images[b.ImageRef] {
		fault(w, http.StatusBadRequest, "Invalid image identifier or unable to access requested image.")
		return
	}
	v := &volume{id: uuid.NewString(), project: c.id.ProjectID, name: b.Name, description: b.Description,
		size: b.Size, imageID: b.ImageRef, bootable: b.ImageRef != "", status: "creating", createdAt: s.clk.Now().UTC()}
	s.volumes[v.id] = v
	view := s.volumeView(v)
	v.status, v.reads, v.final = "available", s.creatingReads, s.creatingFinal
	if v.reads > 0 {
		v.status = "creating"
	}
	reply(w, http.StatusAccepted, map[string]any{"volume": view})
}

func (s *Sim) getVolume(w http.ResponseWriter, r *http.Request, c call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.volumeOr404(w, r, c)
	if !ok {
		return
	}
	v.read()
	reply(w, http.StatusOK, map[string]any{"volume": s.adminView(c, v)})
}

// adminView is volumeView with the owning project, which Cinder shows
// admins only.
func (s *Sim) adminView(c call, v *volume) map[string]any {
	out := s.volumeView(v)
	if c.id.has("admin") {
		out["os-vol-tenant-attr:tenant_id"] = v.project
	}
	return out
}

// volumeOr404 is the path's volume, or false after a 404 (s.mu held).
func (s *Sim) volumeOr404(w http.ResponseWriter, r *http.Request, c call) (*volume, bool) {
	v, ok := s.visible(c, r.PathValue("id"))
	if !ok {
		volumeNotFound(w, r.PathValue("id"))
	}
	return v, ok
}

func volumeNotFound(w http.ResponseWriter, id string) {
	fault(w, http.StatusNotFound, "Volume "+id+" could not be found.")
}

func (s *Sim) deleteVolume(w http.ResponseWriter, r *http.Request, c call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.volumeOr404(w, r, c)
	if !ok {
		return
	}
	if (v.status != "available" && v.status != "error") || len(v.attachments) > 0 {
		fault(w, http.StatusBadRequest, "Invalid volume: Volume status must be available or error or error_restoring "+
			"or error_extending or error_managing and must not be migrating, attached, belong to a group, have "+
			"snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.")
		return
	}
	delete(s.volumes, v.id)
	w.WriteHeader(http.StatusAccepted)
}

func (s *Sim) volumeAction(w http.ResponseWriter, r *http.Request, c call) {
	var body struct {
		SetBootable *struct {
			Bootable bool `json:"bootable"`
		} `json:"os-set_bootable"`
	}
	if !decode(w, r, &body) {
		return
	}
	if body.SetBootable == nil {
		fault(w, http.StatusBadRequest, "There is no such action")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.volumeOr404(w, r, c)
	if !ok {
		return
	}
	v.bootable = body.SetBootable.Bootable
	w.WriteHeader(http.StatusOK)
}
