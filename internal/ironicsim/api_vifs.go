package ironicsim

import (
	"net/http"
	"sort"
)

// VIF endpoints (>= 1.28; below that Ironic answers a routing 404). A node
// with network_interface=noop accepts everything and stores nothing
// (docs/ironic.md §4); any other network interface behaves like flat: one VIF per
// free port, recorded in the port's internal_info.tenant_vif_port_id.

func (s *Sim) vifNode(c *rctx) (*node, *apiErr) {
	if c.ver < 28 {
		return nil, routingErr(http.StatusNotFound, "")
	}
	return s.findNode(c, c.params["node"], s.now())
}

// handleListVIFs serves GET /v1/nodes/{node}/vifs.
func (s *Sim) handleListVIFs(c *rctx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, e := s.vifNode(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	vifs := []any{}
	if storesVIFs(n) {
		for _, v := range s.nodeVIFs(n) {
			vifs = append(vifs, map[string]any{"id": v})
		}
	}
	writeJSON(c.w, http.StatusOK, map[string]any{"vifs": vifs})
}

// handleAttachVIF serves POST /v1/nodes/{node}/vifs.
func (s *Sim) handleAttachVIF(c *rctx) {
	if c.ver < 28 {
		writeErr(c.w, routingErr(http.StatusNotFound, ""))
		return
	}
	body, e := readBody(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	idv, ok := body["id"]
	if !ok {
		writeErr(c.w, badRequest("Schema error for vif: 'id' is a required property"))
		return
	}
	id, ok := idv.(string)
	if !ok {
		writeErr(c.w, badRequest("Schema error for vif: %s is not of type 'string'", pyRepr(idv)))
		return
	}
	if !validUUIDOrName(id) {
		writeErr(c.w, badRequest("Expected UUID or name for id: %s", id))
		return
	}
	_, hasPort := body["port_uuid"]
	_, hasPG := body["portgroup_uuid"]
	if c.ver >= 67 && hasPort && hasPG {
		writeErr(c.w, badRequest("Cannot specify both port_uuid and portgroup_uuid"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n, e := s.vifNode(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	if !storesVIFs(n) {
		writeEmpty(c.w, http.StatusNoContent)
		return
	}
	for _, p := range n.ports {
		if p.vif() == id {
			writeErr(c.w, conflict("Unable to attach VIF because VIF %s is already attached to Ironic Port %s", id, p.UUID))
			return
		}
	}
	var free []*port
	for _, p := range n.ports {
		if p.vif() == "" {
			free = append(free, p)
		}
	}
	if want, ok := body["port_uuid"].(string); ok && c.ver >= 67 {
		var chosen []*port
		for _, p := range free {
			if p.UUID == want {
				chosen = append(chosen, p)
			}
		}
		free = chosen
	}
	if len(free) == 0 {
		writeErr(c.w, badRequest("Unable to attach VIF %s, not enough free physical ports.", id))
		return
	}
	// Ironic prefers PXE-enabled ports.
	sort.SliceStable(free, func(i, j int) bool { return free[i].PXEEnabled && !free[j].PXEEnabled })
	p := free[0]
	p.InternalInfo = setKey(p.InternalInfo, vifKey, id)
	p.UpdatedAt = now
	writeEmpty(c.w, http.StatusNoContent)
}

// handleDetachVIF serves DELETE /v1/nodes/{node}/vifs/{vif}.
func (s *Sim) handleDetachVIF(c *rctx) {
	if c.ver < 28 {
		writeErr(c.w, routingErr(http.StatusNotFound, ""))
		return
	}
	id := c.params["vif"]
	if !validUUIDOrName(id) {
		writeErr(c.w, badRequest("Expected UUID or name for vif_id: %s", id))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n, e := s.vifNode(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	if storesVIFs(n) {
		var found *port
		for _, p := range n.ports {
			if p.vif() == id {
				found = p
				break
			}
		}
		if found == nil {
			writeErr(c.w, badRequest("Unable to detach VIF %s from node %s because it is not attached to it.", id, n.UUID))
			return
		}
		delete(found.InternalInfo, vifKey)
		found.UpdatedAt = now
	}
	writeEmpty(c.w, http.StatusNoContent)
}
