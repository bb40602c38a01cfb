package ironicsim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// port is an Ironic port (a physical NIC of a node).
type port struct {
	UUID                string
	Address             string
	nodeUUID            string
	Extra               map[string]any
	InternalInfo        map[string]any
	LocalLinkConnection map[string]any
	PhysicalNetwork     string
	PXEEnabled          bool
	IsSmartNIC          bool
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

const vifKey = "tenant_vif_port_id"

func (p *port) vif() string {
	v, _ := p.InternalInfo[vifKey].(string)
	return v
}

// addPortLocked creates a port. Caller holds s.mu.
func (s *Sim) addPortLocked(n *node, mac string, now time.Time) *port {
	p := &port{UUID: s.newUUID(), Address: mac, nodeUUID: n.UUID, PXEEnabled: true, CreatedAt: now}
	s.ports[p.UUID] = p
	s.macs[p.Address] = p
	s.portOrd = append(s.portOrd, p)
	n.ports = append(n.ports, p)
	return p
}

// removePort deletes a port. Caller holds s.mu.
func (s *Sim) removePort(p *port) {
	delete(s.ports, p.UUID)
	delete(s.macs, p.Address)
	for i, x := range s.portOrd {
		if x == p {
			s.portOrd = append(s.portOrd[:i], s.portOrd[i+1:]...)
			break
		}
	}
	if n := s.nodes[p.nodeUUID]; n != nil {
		for i, x := range n.ports {
			if x == p {
				n.ports = append(n.ports[:i:i], n.ports[i+1:]...)
				break
			}
		}
	}
}

// nodeVIFs lists the VIFs recorded on the node's ports. Caller holds s.mu.
func (s *Sim) nodeVIFs(n *node) []string {
	var out []string
	for _, p := range n.ports {
		if v := p.vif(); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// detachAllVIFs removes every tenant VIF from the node's ports.
func (s *Sim) detachAllVIFs(n *node) {
	for _, p := range n.ports {
		delete(p.InternalInfo, vifKey)
	}
}

// storesVIFs tells whether the node's network interface records VIFs.
func storesVIFs(n *node) bool { return n.NetworkInterface != "noop" }

func renderPort(p *port, fields []string, ver int, base string) map[string]any {
	all := map[string]any{
		"uuid": p.UUID, "created_at": pyTime(p.CreatedAt), "updated_at": timeOrNil(p.UpdatedAt),
		"address": p.Address, "extra": mapOrEmpty(p.Extra), "node_uuid": p.nodeUUID,
	}
	if ver >= 18 {
		all["internal_info"] = mapOrEmpty(p.InternalInfo)
	}
	if ver >= 19 {
		all["local_link_connection"] = mapOrEmpty(p.LocalLinkConnection)
		all["pxe_enabled"] = p.PXEEnabled
	}
	if ver >= 24 {
		all["portgroup_uuid"] = nil
	}
	if ver >= 34 {
		all["physical_network"] = strOrNil(p.PhysicalNetwork)
	}
	if ver >= 53 {
		all["is_smartnic"] = p.IsSmartNIC
	}
	if fields != nil {
		m := make(map[string]any, len(fields)+1)
		for _, f := range fields {
			if v, ok := all[f]; ok {
				m[f] = v
			}
		}
		all = m
	}
	all["links"] = links(base, "ports", p.UUID)
	return all
}

// handleCreatePort serves POST /v1/ports.
func (s *Sim) handleCreatePort(c *rctx) {
	body, e := readBody(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	schema := map[string][]string{"address": {"string"}, "extra": {"object", "null"},
		"is_smartnic": {"string", "boolean", "null"}, "local_link_connection": {"null", "object"},
		"node_uuid": {"string"}, "physical_network": {"string", "null"}, "portgroup_uuid": {"string", "null"},
		"pxe_enabled": {"string", "boolean", "null"}, "uuid": {"string", "null"}}
	for _, k := range sortedKeys(body) {
		types, ok := schema[k]
		if !ok {
			writeErr(c.w, badRequest("Schema error for port: Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
		if e := checkType("port", body[k], types...); e != nil {
			writeErr(c.w, e)
			return
		}
	}
	for _, k := range []string{"address", "node_uuid"} {
		if _, ok := body[k]; !ok {
			writeErr(c.w, badRequest("Schema error for port: '%s' is a required property", k))
			return
		}
	}
	addr := body["address"].(string)
	if !macRe.MatchString(addr) {
		writeErr(c.w, badRequest("Expected valid MAC address for address: %s", addr))
		return
	}
	addr = strings.ToLower(strings.ReplaceAll(addr, "-", ":"))
	nodeUUID := body["node_uuid"].(string)
	if !isUUIDLike(nodeUUID) {
		writeErr(c.w, badRequest("Expected UUID for node_uuid: %s", nodeUUID))
		return
	}
	minVer := map[string]int{"local_link_connection": 19, "pxe_enabled": 19, "portgroup_uuid": 24,
		"physical_network": 34, "is_smartnic": 53}
	for k, v := range minVer {
		if _, ok := body[k]; ok && c.ver < v {
			writeErr(c.w, errNotAcceptable())
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := s.nodes[canonicalUUID(nodeUUID)]
	if n == nil {
		writeErr(c.w, badRequest("Node %s could not be found.", nodeUUID))
		return
	}
	if s.macs[addr] != nil {
		writeErr(c.w, conflict("A port with MAC address %s already exists.", addr))
		return
	}
	if id, ok := body["uuid"].(string); ok {
		if !isUUIDLike(id) {
			writeErr(c.w, badRequest("Expected UUID for uuid: %s", id))
			return
		}
		if s.ports[canonicalUUID(id)] != nil {
			writeErr(c.w, conflict("A port with UUID %s already exists.", canonicalUUID(id)))
			return
		}
	}
	p := s.addPortLocked(n, addr, now)
	if id, ok := body["uuid"].(string); ok {
		delete(s.ports, p.UUID)
		p.UUID = canonicalUUID(id)
		s.ports[p.UUID] = p
	}
	if m, ok := body["extra"].(map[string]any); ok {
		p.Extra = cloneMap(m)
	}
	if m, ok := body["local_link_connection"].(map[string]any); ok {
		p.LocalLinkConnection = cloneMap(m)
	}
	if v, ok := body["physical_network"].(string); ok {
		p.PhysicalNetwork = v
	}
	if v, ok := body["pxe_enabled"]; ok && v != nil {
		b, e := boolValue("pxe_enabled", v)
		if e != nil {
			s.removePort(p)
			writeErr(c.w, e)
			return
		}
		p.PXEEnabled = b
	}
	c.w.Header().Set("Location", c.base+"/v1/ports/"+p.UUID)
	writeRaw(c.w, http.StatusCreated, encodeJSON(renderPort(p, nil, c.ver, c.base)))
}

func (s *Sim) handleListPorts(c *rctx)       { s.listPorts(c, false, "") }
func (s *Sim) handleListPortsDetail(c *rctx) { s.listPorts(c, true, "") }

// handleListNodePorts serves GET /v1/nodes/{node}/ports. NOTE: with a node
// name Ironic answers 404 "Portgroup None could not be found." (docs/ironic.md §0).
func (s *Sim) handleListNodePorts(c *rctx) {
	ident := c.params["node"]
	if !isUUIDLike(ident) {
		writeErr(c.w, clientErr(http.StatusNotFound, "Portgroup None could not be found."))
		return
	}
	s.listPorts(c, false, ident)
}

// listPorts serves the port collections.
func (s *Sim) listPorts(c *rctx, detailURL bool, parent string) {
	q := c.query
	allowed := []string{"node", "node_uuid", "address", "marker", "limit", "sort_key", "sort_dir", "portgroup", "shard"}
	if !detailURL {
		allowed = append(allowed, "fields", "detail")
	}
	if e := checkArgs(q, allowed...); e != nil {
		writeErr(c.w, e)
		return
	}
	fields := queryFields(q)
	limit, e := queryLimit(q)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	detail, e := queryBool(q, "detail")
	if e != nil {
		writeErr(c.w, e)
		return
	}
	renderFields := fields
	if !detailURL && (detail == nil || !*detail) && fields == nil {
		renderFields = []string{"uuid", "address"}
	}
	nodeIdent := parent
	if nodeIdent == "" {
		nodeIdent = q.Get("node")
		if nodeIdent == "" {
			nodeIdent = q.Get("node_uuid")
		}
	}
	marker := q.Get("marker")
	addr := strings.ToLower(q.Get("address"))

	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.portOrd
	if nodeIdent != "" {
		n, e := s.findNode(c, nodeIdent, s.now())
		if e != nil {
			writeErr(c.w, e)
			return
		}
		src = n.ports
	}
	start := 0
	if marker != "" {
		start = -1
		for i, p := range src {
			if p.UUID == marker {
				start = i + 1
				break
			}
		}
		if start < 0 {
			writeErr(c.w, clientErr(http.StatusNotFound, "Port %s could not be found.", marker))
			return
		}
	}
	items := []any{}
	last := ""
	for i := start; i < len(src) && len(items) < limit; i++ {
		p := src[i]
		if addr != "" && p.Address != addr {
			continue
		}
		items = append(items, renderPort(p, renderFields, c.ver, c.base))
		last = p.UUID
	}
	body := map[string]any{"ports": items}
	if len(items) > 0 && len(items) == limit {
		url := c.base + "/v1/ports?"
		if detailURL {
			url = c.base + "/v1/ports/detail?"
		}
		if detail != nil {
			url += "detail=" + pyBool(*detail) + "&"
		}
		if len(fields) > 0 {
			url += "fields=" + strings.Join(fields, ",") + "&"
		}
		body["next"] = url + "limit=" + strconv.Itoa(limit) + "&marker=" + last
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(body))
}

// findPort resolves a port UUID (or MAC address). Caller holds s.mu.
func (s *Sim) findPort(ident string) (*port, *apiErr) {
	if p := s.ports[canonicalUUID(ident)]; p != nil {
		return p, nil
	}
	if p := s.macs[strings.ToLower(ident)]; p != nil {
		return p, nil
	}
	return nil, clientErr(http.StatusNotFound, "Port %s could not be found.", ident)
}

// handleGetPort serves GET /v1/ports/{port}.
func (s *Sim) handleGetPort(c *rctx) {
	fields := queryFields(c.query)
	s.mu.Lock()
	defer s.mu.Unlock()
	p, e := s.findPort(c.params["port"])
	if e != nil {
		writeErr(c.w, e)
		return
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(renderPort(p, fields, c.ver, c.base)))
}

// handleDeletePort serves DELETE /v1/ports/{port}.
func (s *Sim) handleDeletePort(c *rctx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, e := s.findPort(c.params["port"])
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if n := s.nodes[p.nodeUUID]; n != nil {
		s.advance(n, s.now())
		if n.Reservation != "" {
			writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
			return
		}
	}
	s.removePort(p)
	writeEmpty(c.w, http.StatusNoContent)
}
