package ironicsim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Portgroups (>= 1.23; mode and properties >= 1.26): a bond of a node's
// ports. A port joins one with portgroup_uuid at create; ports of a
// portgroup carry VIFs only through it (flat network interface).

// portgroup is an Ironic portgroup. It lives in its node's Portgroups (so
// whatever keeps nodes keeps it); ports name it by PortgroupUUID.
type portgroup struct {
	UUID            string
	Name            string
	Address         string
	NodeUUID        string
	Mode            string
	Properties      map[string]any
	Extra           map[string]any
	InternalInfo    map[string]any
	StandalonePorts bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// defaultPortgroupMode is Ironic's [DEFAULT]default_portgroup_mode.
const defaultPortgroupMode = "active-backup"

func (pg *portgroup) vif() string {
	v, _ := pg.InternalInfo[vifKey].(string)
	return v
}

// portgroupFields are the fields Ironic 21.4 shows for a portgroup (>= 1.26).
var portgroupFields = []string{"uuid", "address", "name", "node_uuid", "standalone_ports_supported", "mode",
	"properties", "extra", "internal_info", "created_at", "updated_at", "ports", "links"}

func renderPortgroup(pg *portgroup, fields []string, ver int, base string) map[string]any {
	all := map[string]any{
		"uuid": pg.UUID, "address": strOrNil(pg.Address), "name": strOrNil(pg.Name), "node_uuid": pg.NodeUUID,
		"standalone_ports_supported": pg.StandalonePorts, "extra": mapOrEmpty(pg.Extra),
		"internal_info": mapOrEmpty(pg.InternalInfo), "created_at": pyTime(pg.CreatedAt),
		"updated_at": timeOrNil(pg.UpdatedAt), "ports": links(base, "portgroups", pg.UUID+"/ports"),
	}
	if ver >= 26 {
		all["mode"] = pg.Mode
		all["properties"] = mapOrEmpty(pg.Properties)
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
	all["links"] = links(base, "portgroups", pg.UUID)
	return all
}

// checkPortgroupFields is check_allowed_portgroup_fields plus the check for
// unknown fields: 400 naming them.
func checkPortgroupFields(fields []string, ver int) *apiErr {
	var bad []string
	for _, f := range fields {
		known := false
		for _, k := range portgroupFields {
			known = known || k == f
		}
		if (f == "mode" || f == "properties") && ver < 26 {
			return errNotAcceptable()
		}
		if !known {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return badRequest("Field(s) \"%s\" are not valid", strings.Join(bad, ", "))
	}
	return nil
}

// allPortgroups lists every portgroup, node by node in creation order (Ironic
// orders by creation alone). Caller holds s.mu.
func (s *Sim) allPortgroups() []*portgroup {
	var out []*portgroup
	for _, n := range s.order {
		out = append(out, n.Portgroups...)
	}
	return out
}

// findPortgroup resolves a portgroup UUID or name (a scan: portgroups are few
// and looked up rarely). Caller holds s.mu.
func (s *Sim) findPortgroup(ident string) (*portgroup, *apiErr) {
	id := canonicalUUID(ident)
	for _, n := range s.order {
		for _, pg := range n.Portgroups {
			if pg.UUID == id || (pg.Name != "" && pg.Name == ident) {
				return pg, nil
			}
		}
	}
	return nil, clientErr(http.StatusNotFound, "Portgroup %s could not be found.", ident)
}

// removePortgroup deletes a portgroup. Caller holds s.mu.
func (s *Sim) removePortgroup(pg *portgroup) {
	if n := s.nodes[pg.NodeUUID]; n != nil {
		for i, x := range n.Portgroups {
			if x == pg {
				n.Portgroups = append(n.Portgroups[:i:i], n.Portgroups[i+1:]...)
				break
			}
		}
	}
}

func portgroupsBelow(c *rctx) bool {
	if c.ver < 23 {
		writeErr(c.w, clientErr(http.StatusNotFound, "Resource could not be found."))
		return true
	}
	return false
}

// handleCreatePortgroup serves POST /v1/portgroups.
func (s *Sim) handleCreatePortgroup(c *rctx) {
	if portgroupsBelow(c) {
		return
	}
	body, e := readBody(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	schema := map[string][]string{"address": {"string", "null"}, "extra": {"object", "null"}, "mode": {"string", "null"},
		"name": {"string", "null"}, "node_uuid": {"string"}, "properties": {"object", "null"},
		"standalone_ports_supported": {"string", "boolean", "null"}, "uuid": {"string", "null"}}
	for _, k := range sortedKeys(body) {
		types, ok := schema[k]
		if !ok {
			writeErr(c.w, badRequest("Schema error for portgroup: Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
		if e := checkType("portgroup", body[k], types...); e != nil {
			writeErr(c.w, e)
			return
		}
	}
	nodeUUID, ok := body["node_uuid"].(string)
	if !ok {
		writeErr(c.w, badRequest("Schema error for portgroup: 'node_uuid' is a required property"))
		return
	}
	addr, _ := body["address"].(string)
	if addr != "" && !macRe.MatchString(addr) {
		writeErr(c.w, badRequest("Expected valid MAC address for address: %s", addr))
		return
	}
	addr = strings.ToLower(strings.ReplaceAll(addr, "-", ":"))
	if !isUUIDLike(nodeUUID) {
		writeErr(c.w, badRequest("Expected UUID for node_uuid: %s", nodeUUID))
		return
	}
	standalone := true
	if v, ok := body["standalone_ports_supported"]; ok && v != nil {
		b, e := boolValue("standalone_ports_supported", v)
		if e != nil {
			writeErr(c.w, e)
			return
		}
		standalone = b
	}
	mode, _ := body["mode"].(string)
	props, _ := body["properties"].(map[string]any)
	if c.ver < 26 && (mode != "" || len(props) > 0) {
		writeErr(c.w, errNotAcceptable())
		return
	}
	name, _ := body["name"].(string)
	if name != "" && !isValidName(name) {
		writeErr(c.w, badRequest("Cannot create portgroup with invalid name '%s'", name))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[canonicalUUID(nodeUUID)]
	if n == nil {
		writeErr(c.w, badRequest("Node %s could not be found.", nodeUUID))
		return
	}
	id, _ := body["uuid"].(string)
	if id != "" {
		if !isUUIDLike(id) {
			writeErr(c.w, badRequest("Expected UUID for uuid: %s", id))
			return
		}
		id = canonicalUUID(id)
	}
	for _, pg := range s.allPortgroups() {
		switch {
		case name != "" && pg.Name == name:
			writeErr(c.w, conflict("A portgroup with name %s already exists.", name))
			return
		case addr != "" && pg.Address == addr:
			writeErr(c.w, conflict("A portgroup with MAC address %s already exists.", addr))
			return
		case id != "" && pg.UUID == id:
			writeErr(c.w, conflict("A portgroup with UUID %s already exists.", id))
			return
		}
	}
	if id == "" {
		id = s.newUUID()
	}
	if mode == "" {
		mode = defaultPortgroupMode
	}
	pg := &portgroup{UUID: id, Name: name, Address: addr, NodeUUID: n.UUID, Mode: mode,
		StandalonePorts: standalone, CreatedAt: s.now()}
	if props != nil {
		pg.Properties = cloneMap(props)
	}
	if m, ok := body["extra"].(map[string]any); ok {
		pg.Extra = cloneMap(m)
	}
	n.Portgroups = append(n.Portgroups, pg)
	c.w.Header().Set("Location", c.base+"/v1/portgroups/"+pg.UUID)
	writeRaw(c.w, http.StatusCreated, encodeJSON(renderPortgroup(pg, nil, c.ver, c.base)))
}

func (s *Sim) handleListPortgroups(c *rctx)       { s.listPortgroups(c, false, "") }
func (s *Sim) handleListPortgroupsDetail(c *rctx) { s.listPortgroups(c, true, "") }

// handleListNodePortgroups serves GET /v1/nodes/{node}/portgroups.
func (s *Sim) handleListNodePortgroups(c *rctx) { s.listPortgroups(c, false, c.params["node"]) }

func (s *Sim) listPortgroups(c *rctx, detailURL bool, parent string) {
	if portgroupsBelow(c) {
		return
	}
	q := c.query
	allowed := []string{"node", "address", "marker", "limit", "sort_key", "sort_dir"}
	if !detailURL {
		allowed = append(allowed, "fields", "detail")
	}
	if e := checkArgs(q, allowed...); e != nil {
		writeErr(c.w, e)
		return
	}
	fields := queryFields(q)
	if e := checkPortgroupFields(fields, c.ver); e != nil {
		writeErr(c.w, e)
		return
	}
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
		renderFields = []string{"uuid", "address", "name"}
	}
	nodeIdent := parent
	if nodeIdent == "" {
		nodeIdent = q.Get("node")
	}
	addr := strings.ToLower(q.Get("address"))
	marker := q.Get("marker")

	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.allPortgroups()
	if nodeIdent != "" {
		n, e := s.findNode(c, nodeIdent, s.now())
		if e != nil {
			writeErr(c.w, e)
			return
		}
		src = n.Portgroups
	}
	start := 0
	if marker != "" {
		start = -1
		for i, pg := range src {
			if pg.UUID == marker {
				start = i + 1
				break
			}
		}
		if start < 0 {
			writeErr(c.w, clientErr(http.StatusNotFound, "Portgroup %s could not be found.", marker))
			return
		}
	}
	items := []any{}
	last := ""
	for i := start; i < len(src) && len(items) < limit; i++ {
		pg := src[i]
		if addr != "" && pg.Address != addr {
			continue
		}
		items = append(items, renderPortgroup(pg, renderFields, c.ver, c.base))
		last = pg.UUID
	}
	body := map[string]any{"portgroups": items}
	if len(items) > 0 && len(items) == limit {
		url := c.base + "/v1/portgroups?"
		if detailURL {
			url = c.base + "/v1/portgroups/detail?"
		}
		if len(fields) > 0 {
			url += "fields=" + strings.Join(fields, ",") + "&"
		}
		body["next"] = url + "limit=" + strconv.Itoa(limit) + "&marker=" + last
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(body))
}

// handleGetPortgroup serves GET /v1/portgroups/{portgroup}.
func (s *Sim) handleGetPortgroup(c *rctx) {
	if portgroupsBelow(c) {
		return
	}
	fields := queryFields(c.query)
	if e := checkPortgroupFields(fields, c.ver); e != nil {
		writeErr(c.w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pg, e := s.findPortgroup(c.params["portgroup"])
	if e != nil {
		writeErr(c.w, e)
		return
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(renderPortgroup(pg, fields, c.ver, c.base)))
}

// handleListPortgroupPorts serves GET /v1/portgroups/{portgroup}/ports.
func (s *Sim) handleListPortgroupPorts(c *rctx) {
	if portgroupsBelow(c) {
		return
	}
	s.listPorts(c, false, "")
}

// handleDeletePortgroup serves DELETE /v1/portgroups/{portgroup}. NOTE:
// Ironic 21.4 on SQLite does not check for ports first: the database's
// foreign key refuses the delete and the API answers 500.
func (s *Sim) handleDeletePortgroup(c *rctx) {
	if portgroupsBelow(c) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pg, e := s.findPortgroup(c.params["portgroup"])
	if e != nil {
		writeErr(c.w, e)
		return
	}
	for _, p := range s.portOrd {
		if p.PortgroupUUID == pg.UUID {
			writeErr(c.w, serverErr(http.StatusInternalServerError, "(sqlite3.IntegrityError) FOREIGN KEY constraint failed"))
			return
		}
	}
	s.removePortgroup(pg)
	writeEmpty(c.w, http.StatusNoContent)
}
