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
	for _, pg := range n.Portgroups {
		if pg.vif() == id {
			writeErr(c.w, conflict("Unable to attach VIF because VIF %s is already attached to Ironic Portgroup %s", id, pg.UUID))
			return
		}
	}
	wantPort, wantPG := "", ""
	if c.ver >= 67 {
		wantPort, _ = body["port_uuid"].(string)
		wantPG, _ = body["portgroup_uuid"].(string)
	}
	free := freePortLikes(n, wantPort, wantPG)
	if len(free) == 0 {
		writeErr(c.w, badRequest("Unable to attach VIF %s, not enough free physical ports.", id))
		return
	}
	// Ironic prefers portgroups, then PXE-enabled ports (no physical
	// networks here: the simulator has no Neutron to name them).
	sort.SliceStable(free, func(i, j int) bool { return free[i].key() > free[j].key() })
	if p := free[0].port; p != nil {
		p.InternalInfo = setKey(p.InternalInfo, vifKey, id)
		p.UpdatedAt = now
	} else {
		pg := free[0].pg
		pg.InternalInfo = setKey(pg.InternalInfo, vifKey, id)
		pg.UpdatedAt = now
	}
	writeEmpty(c.w, http.StatusNoContent)
}

// portLike is a port or a portgroup a VIF can go to.
type portLike struct {
	port *port
	pg   *portgroup
}

func (pl portLike) key() int {
	if pl.pg != nil {
		return 2
	}
	if pl.port.PXEEnabled {
		return 1
	}
	return 0
}

// freePortLikes is _get_free_portgroups_and_ports: ports outside
// portgroups without a VIF, and portgroups with ports and without a VIF (a
// portgroup one of whose ports carries a VIF is replaced by its free
// ports); port_uuid or portgroup_uuid narrows the choice to that one.
func freePortLikes(n *node, wantPort, wantPG string) []portLike {
	var out []portLike
	byPG := map[string][]*port{}
	unusable := map[string]bool{}
	for _, p := range n.ports {
		if wantPort != "" && p.UUID != wantPort {
			continue
		}
		if p.vif() != "" {
			unusable[p.PortgroupUUID] = true
			continue
		}
		if p.PortgroupUUID == "" && wantPG == "" {
			out = append(out, portLike{port: p})
		} else if p.PortgroupUUID != "" {
			byPG[p.PortgroupUUID] = append(byPG[p.PortgroupUUID], p)
		}
	}
	if wantPort != "" {
		return out
	}
	for _, pg := range n.Portgroups {
		if (wantPG != "" && pg.UUID != wantPG) || pg.vif() != "" {
			continue
		}
		switch {
		case unusable[pg.UUID]:
			if wantPG == "" {
				for _, p := range byPG[pg.UUID] {
					out = append(out, portLike{port: p})
				}
			}
		case len(byPG[pg.UUID]) > 0:
			out = append(out, portLike{pg: pg})
		}
	}
	return out
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
		found := false
		for _, p := range n.ports {
			if p.vif() == id {
				delete(p.InternalInfo, vifKey)
				p.UpdatedAt, found = now, true
				break
			}
		}
		for _, pg := range n.Portgroups {
			if !found && pg.vif() == id {
				delete(pg.InternalInfo, vifKey)
				pg.UpdatedAt, found = now, true
			}
		}
		if !found {
			writeErr(c.w, badRequest("Unable to detach VIF %s from node %s because it is not attached to it.", id, n.UUID))
			return
		}
	}
	writeEmpty(c.w, http.StatusNoContent)
}
