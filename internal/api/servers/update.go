package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// The update paths automation sends on a second run: PUT /servers/{id}
// (name, description from 2.19, hostname from 2.90) and the server
// metadata. What they change is API-owned (Name, Spec) and written with
// store.UpdateServer; none of it touches the node until a rebuild, as in
// Nova (the config drive is written at deploy).

func (s *Service) UpdateRoutes() {
	s.Compute("PUT /v2.1/servers/{id}", s.updateServer)
	s.Compute("POST /v2.1/servers/{id}/metadata", s.metadataWrite(false))
	s.Compute("PUT /v2.1/servers/{id}/metadata", s.metadataWrite(true))
	s.Compute("GET /v2.1/servers/{id}/metadata/{key}", s.metadataItem)
	s.Compute("PUT /v2.1/servers/{id}/metadata/{key}", s.metadataSetItem)
	s.Compute("DELETE /v2.1/servers/{id}/metadata/{key}", s.metadataDeleteItem)
	s.Compute("GET /v2.1/servers/{id}/os-security-groups", s.serverSecurityGroups)
	s.tagRoutes()
}

// updateServer answers PUT /servers/{id} with the server, as Nova does
// (the members of updateView). Nova records no instance action for it and
// checks neither lock nor state.
func (s *Service) updateServer(w http.ResponseWriter, r *core.Request) error {
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	for k := range top {
		if k != "server" {
			return core.BadRequest("Invalid input for field/attribute %s: additional properties are not allowed.", k)
		}
	}
	var fields map[string]json.RawMessage
	if raw, ok := top["server"]; !ok {
		return core.BadRequest("'server' is a required property")
	} else if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return core.BadRequest("Invalid input for field/attribute server. Value: %s. It is not of type 'object'.", raw)
	}
	allowed := map[string]bool{"name": true, "OS-DCF:diskConfig": true, "accessIPv4": true, "accessIPv6": true,
		"description": r.MV.AtLeast(mvDescription), "hostname": r.MV.AtLeast(mvHostname)}
	for k := range fields {
		if !allowed[k] {
			return core.BadRequest("Invalid input for field/attribute server. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	ip4, set4, err := parseAccessIP(fields, "accessIPv4", false)
	if err != nil {
		return err
	}
	ip6, set6, err := parseAccessIP(fields, "accessIPv6", true)
	if err != nil {
		return err
	}
	dc, setDC, err := parseDiskConfig(fields)
	if err != nil {
		return err
	}
	var name, hostname *string
	var description **string
	if _, ok := fields["name"]; ok {
		n, err := core.RequiredString(fields, "name", 255)
		if err != nil {
			return err
		}
		if err := core.CheckName("name", n); err != nil {
			return err
		}
		name = &n
	}
	if v, ok := fields["description"]; ok {
		d, err := parseDescription(v)
		if err != nil {
			return err
		}
		description = &d
	}
	if v, ok := fields["hostname"]; ok {
		var h string
		if json.Unmarshal(v, &h) != nil {
			return core.BadRequest("Invalid input for field/attribute hostname. Value: %s. It is not of type 'string'.", v)
		}
		if err := checkHostname(h); err != nil {
			return err
		}
		hostname = &h
	}
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersUpdate)
	if err != nil {
		return err
	}
	now := s.Cfg.Clock.Now().UTC()
	out, err := s.Cfg.Store.UpdateServer(r.Context(), sv.ID, nil, func(cur *lifecycle.Server) error {
		if !lifecycle.Nova(cur).Visible {
			return core.NotFound("Instance could not be found")
		}
		if name != nil {
			cur.Name = *name
		}
		if description != nil {
			cur.Spec.Description = *description
		}
		if hostname != nil {
			cur.Spec.Hostname = *hostname
		}
		if set4 {
			cur.Spec.AccessIPv4 = ip4
		}
		if set6 {
			cur.Spec.AccessIPv6 = ip6
		}
		if setDC {
			cur.Spec.DiskConfig = dc
		}
		cur.UpdatedAt = now
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Instance could not be found")
	}
	if err != nil {
		return fmt.Errorf("update server %s: %w", sv.ID, err)
	}
	view, err := s.updateView(r, out, false)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, serverBody{Server: view})
	return nil
}

// metadataState is what Nova's metadata writes check: the lock, then
// vm_state active or stopped (ingot has no paused or suspended) and no
// task in progress.
func metadataState(sv *lifecycle.Server, action string, admin bool) error {
	if err := lockConflict(sv, admin); err != nil {
		return err
	}
	st := lifecycle.Nova(sv)
	c := lifecycle.StateConflict{Op: lifecycle.OpKind(action), Attr: "vm_state", State: st.VMState}
	switch {
	case st.VMState != "active" && st.VMState != "stopped":
	case st.TaskState != "" || sv.OpPending():
		c.Attr, c.State = "task_state", st.TaskState
	default:
		return nil
	}
	return core.Conflict("%s", c.Message(sv.ID))
}

// writeMetadata changes the metadata with change on the fresh record,
// within the project's metadata_items quota, and returns the record.
func (s *Service) writeMetadata(r *core.Request, sv *lifecycle.Server, action string, change func(md map[string]string) (map[string]string, error)) (*lifecycle.Server, error) {
	admin := r.IsAdmin()
	if err := metadataState(sv, action, admin); err != nil {
		return nil, err
	}
	limits, err := s.quotas.ProjectLimits(r, sv.ProjectID)
	if err != nil {
		return nil, err
	}
	lim := limits.Get(store.ResMetadataItems)
	now := s.Cfg.Clock.Now().UTC()
	out, err := s.Cfg.Store.UpdateServer(r.Context(), sv.ID, nil, func(cur *lifecycle.Server) error {
		if !lifecycle.Nova(cur).Visible {
			return core.NotFound("Instance %s could not be found.", cur.ID)
		}
		if err := metadataState(cur, action, admin); err != nil {
			return err
		}
		md, err := change(maps.Clone(cur.Spec.Metadata))
		if err != nil {
			return err
		}
		if lim >= 0 && len(md) > lim && action != "delete metadata" {
			return core.Forbidden("Maximum number of metadata items exceeds %d", lim)
		}
		if len(md) == 0 {
			md = nil
		}
		cur.Spec.Metadata = md
		cur.UpdatedAt = now
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, core.NotFound("Instance %s could not be found.", sv.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("%s of server %s: %w", action, sv.ID, err)
	}
	return out, nil
}

// metadataWrite is POST (merge: the given items added or changed) or PUT
// (replace: the given items are the whole metadata) of …/metadata; both
// answer 200 with the whole metadata.
func (s *Service) metadataWrite(replace bool) core.HandlerFunc {
	rule := policy.ServerMetadataCreate
	if replace {
		rule = policy.ServerMetadataUpdAll
	}
	return func(w http.ResponseWriter, r *core.Request) error {
		md, err := core.MetadataBody(r, "metadata")
		if err != nil {
			return err
		}
		sv, err := s.visibleServer(r, r.PathValue("id"), rule)
		if err != nil {
			return err
		}
		out, err := s.writeMetadata(r, sv, "update metadata", func(cur map[string]string) (map[string]string, error) {
			if replace || cur == nil {
				return maps.Clone(md), nil
			}
			maps.Copy(cur, md)
			return cur, nil
		})
		if err != nil {
			return err
		}
		core.WriteJSON(w, http.StatusOK, serverMetadata{Metadata: metadataOf(out)})
		return nil
	}
}

func metadataOf(sv *lifecycle.Server) map[string]string {
	if sv.Spec.Metadata == nil {
		return map[string]string{}
	}
	return sv.Spec.Metadata
}

func (s *Service) metadataItem(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServerMetadataShow)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	v, ok := sv.Spec.Metadata[key]
	if !ok {
		return core.NotFound("Metadata item was not found")
	}
	core.WriteJSON(w, http.StatusOK, metaItem{Meta: map[string]string{key: v}})
	return nil
}

// metadataSetItem is PUT …/metadata/{key} {"meta": {"<key>": "<value>"}}.
func (s *Service) metadataSetItem(w http.ResponseWriter, r *core.Request) error {
	meta, err := core.MetaItem(r)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServerMetadataUpdate)
	if err != nil {
		return err
	}
	if _, err := s.writeMetadata(r, sv, "update metadata", func(cur map[string]string) (map[string]string, error) {
		if cur == nil {
			cur = map[string]string{}
		}
		cur[key] = meta[key]
		return cur, nil
	}); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, metaItem{Meta: meta})
	return nil
}

func (s *Service) metadataDeleteItem(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServerMetadataDelete)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	if _, ok := sv.Spec.Metadata[key]; !ok {
		return core.NotFound("Metadata item was not found")
	}
	if _, err := s.writeMetadata(r, sv, "delete metadata", func(cur map[string]string) (map[string]string, error) {
		if _, ok := cur[key]; !ok {
			return nil, core.NotFound("Metadata item was not found")
		}
		delete(cur, key)
		return cur, nil
	}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
