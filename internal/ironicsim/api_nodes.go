package ironicsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// findNode resolves a node ident (UUID or, from 1.5, name) as Ironic's
// get_rpc_node does and brings the node up to date. Caller holds s.mu.
func (s *Sim) findNode(c *rctx, ident string, now time.Time) (*node, *apiErr) {
	if !validUUIDOrName(ident) {
		return nil, badRequest("Expected UUID or name for node_ident: %s", ident)
	}
	var n *node
	if isUUIDLike(ident) {
		n = s.nodes[canonicalUUID(ident)]
	} else if c.ver >= 5 {
		n = s.byName[ident]
	}
	if n == nil {
		return nil, errNodeNotFound(ident)
	}
	s.advance(n, now)
	return n, nil
}

var nodeListArgs = []string{"chassis_uuid", "instance_uuid", "associated", "maintenance", "retired",
	"provision_state", "marker", "limit", "sort_key", "sort_dir", "driver", "resource_class", "fault",
	"conductor_group", "conductor", "owner", "lessee", "project", "description_contains", "shard", "sharded"}

// validProvisionStates are the states of Ironic's machine (for the filter).
var validProvisionStates = map[string]bool{
	"enroll": true, "verifying": true, "manageable": true, "available": true, "active": true,
	"deploying": true, "wait call-back": true, "deploy failed": true, "deleting": true,
	"cleaning": true, "clean wait": true, "clean failed": true, "error": true, "rebuild": true,
	"inspecting": true, "inspect failed": true, "inspect wait": true, "adopting": true,
	"adopt failed": true, "rescue": true, "rescue failed": true, "rescue wait": true,
	"rescuing": true, "unrescue failed": true, "unrescuing": true, "deploy hold": true,
}

// nodeFilter is a parsed node list query.
type nodeFilter struct {
	instanceUUID  string
	associated    *bool
	maintenance   *bool
	retired       *bool
	provision     string
	driver        string
	resourceClass *string
	owner         *string
	lessee        *string
	condGroup     *string
	descContains  string
}

func (f *nodeFilter) match(n *node) bool {
	if f.instanceUUID != "" && n.InstanceUUID != f.instanceUUID {
		return false
	}
	if f.associated != nil && (n.InstanceUUID != "") != *f.associated {
		return false
	}
	if f.maintenance != nil && n.Maintenance != *f.maintenance {
		return false
	}
	if f.retired != nil && n.Retired != *f.retired {
		return false
	}
	if f.provision != "" && n.ProvisionState != f.provision {
		return false
	}
	if f.driver != "" && n.Driver != f.driver {
		return false
	}
	if f.resourceClass != nil && (n.ResourceClass == nil || *n.ResourceClass != *f.resourceClass) {
		return false
	}
	if f.owner != nil && n.Owner != *f.owner {
		return false
	}
	if f.lessee != nil && n.Lessee != *f.lessee {
		return false
	}
	if f.condGroup != nil && n.ConductorGroup != strings.ToLower(*f.condGroup) {
		return false
	}
	if f.descContains != "" && !strings.Contains(n.Description, f.descContains) {
		return false
	}
	return true
}

func optString(q map[string][]string, name string) *string {
	if v, ok := q[name]; ok && len(v) > 0 {
		s := v[0]
		return &s
	}
	return nil
}

func (s *Sim) handleListNodes(c *rctx)       { s.listNodes(c, false) }
func (s *Sim) handleListNodesDetail(c *rctx) { s.listNodes(c, true) }

// listNodes serves GET /v1/nodes and /v1/nodes/detail.
func (s *Sim) listNodes(c *rctx, detailURL bool) {
	q := c.query
	allowed := nodeListArgs
	if !detailURL {
		allowed = append(append([]string(nil), nodeListArgs...), "fields", "detail")
	}
	if e := checkArgs(q, allowed...); e != nil {
		writeErr(c.w, e)
		return
	}
	fields := queryFields(q)
	if fields != nil && c.ver < 8 {
		writeErr(c.w, errNotAcceptable())
		return
	}
	if e := checkFieldsVersion(fields, c.ver); e != nil {
		writeErr(c.w, e)
		return
	}
	sortKey := "id"
	if v := optString(q, "sort_key"); v != nil {
		sortKey = *v
	}
	if e := checkFieldsVersion([]string{sortKey}, c.ver); e != nil {
		writeErr(c.w, e)
		return
	}
	f := nodeFilter{driver: q.Get("driver"), descContains: q.Get("description_contains")}
	if ps := optString(q, "provision_state"); ps != nil {
		if c.ver < 9 {
			writeErr(c.w, errNotAcceptable())
			return
		}
		if !validProvisionStates[*ps] {
			writeErr(c.w, badRequest(`Provision state "%s" is not valid`, *ps))
			return
		}
		f.provision = *ps
	}
	if f.driver != "" && c.ver < 16 {
		writeErr(c.w, clientErr(http.StatusNotAcceptable, "Request not acceptable. The minimal required API version should be 1.16"))
		return
	}
	if rc := optString(q, "resource_class"); rc != nil {
		if c.ver < 21 {
			writeErr(c.w, clientErr(http.StatusNotAcceptable, "Request not acceptable. The minimal required API version should be 1.21"))
			return
		}
		f.resourceClass = rc
	}
	f.owner, f.lessee, f.condGroup = optString(q, "owner"), optString(q, "lessee"), optString(q, "conductor_group")
	var detail *bool
	if !detailURL {
		var e *apiErr
		if detail, e = queryBool(q, "detail"); e != nil {
			writeErr(c.w, e)
			return
		}
		if detail != nil && c.ver < 43 {
			writeErr(c.w, badRequest("Invalid query parameter ?detail=%s received.", q.Get("detail")))
			return
		}
		if detail != nil && *detail && fields != nil {
			writeErr(c.w, badRequest("Can not specify ?detail=True and fields in the same request."))
			return
		}
	}
	var e *apiErr
	if f.associated, e = queryBool(q, "associated"); e != nil {
		writeErr(c.w, e)
		return
	}
	if f.maintenance, e = queryBool(q, "maintenance"); e != nil {
		writeErr(c.w, e)
		return
	}
	if f.retired, e = queryBool(q, "retired"); e != nil {
		writeErr(c.w, e)
		return
	}
	if iu := optString(q, "instance_uuid"); iu != nil {
		if !isUUIDLike(*iu) {
			writeErr(c.w, badRequest("Expected UUID for instance_uuid: %s", *iu))
			return
		}
		f.instanceUUID = canonicalUUID(*iu)
	}
	limit, e := queryLimit(q)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	sortDir := "asc"
	if v := optString(q, "sort_dir"); v != nil {
		sortDir = *v
	}
	if sortDir != "asc" && sortDir != "desc" {
		writeErr(c.w, badRequest("Invalid sort direction: %s. Acceptable values are 'asc' or 'desc'", sortDir))
		return
	}
	if sortKey != "id" && sortKey != "created_at" {
		// The simulator keeps only the creation order.
		writeErr(c.w, badRequest("The sort_key value %s is an invalid field for sorting", sortKey))
		return
	}
	marker := q.Get("marker")
	if _, ok := q["marker"]; ok && !isUUIDLike(marker) {
		writeErr(c.w, badRequest("Expected UUID for marker: %s", marker))
		return
	}

	var renderFields []string
	if !detailURL && (detail == nil || !*detail) {
		renderFields = fields
		if renderFields == nil {
			renderFields = defaultNodeFields
		}
	}

	s.mu.Lock()
	now := s.now()
	s.settle(now)
	var page []*node
	if len(s.order) > 0 {
		start, end, step := 0, len(s.order), 1
		if sortDir == "desc" {
			start, end, step = len(s.order)-1, -1, -1
		}
		if marker != "" {
			m := s.nodes[canonicalUUID(marker)]
			if m == nil {
				s.mu.Unlock()
				writeErr(c.w, errNodeNotFound(marker))
				return
			}
			i := s.indexAfter(m.seq)
			if sortDir == "desc" {
				start = i - 2
			} else {
				start = i
			}
		}
		for i := start; i != end && len(page) < limit && i >= 0 && i < len(s.order); i += step {
			if n := s.order[i]; f.match(n) {
				page = append(page, n)
			}
		}
	}
	if len(page) > 0 && fields != nil {
		// NOTE: Ironic validates ?fields= per converted node, so an empty
		// result never fails on an invalid field.
		if e := checkFieldsValid(fields); e != nil {
			s.mu.Unlock()
			writeErr(c.w, e)
			return
		}
	}
	next := ""
	// NOTE: with instance_uuid Ironic never adds a next link.
	if f.instanceUUID == "" && len(page) > 0 && len(page) == limit {
		next = nextNodesLink(c, detailURL, sortKey, sortDir, f, detail, fields, limit, page[len(page)-1].UUID)
	}
	b := appendNodeList(make([]byte, 0, 256*len(page)+64), page, renderFields, c.ver, c.base, next)
	s.mu.Unlock()
	writeRaw(c.w, http.StatusOK, b)
}

// defaultNodeFields is what GET /v1/nodes shows without fields or detail.
var defaultNodeFields = []string{"instance_uuid", "maintenance", "power_state", "provision_state", "uuid", "name"}

// nextNodesLink builds the next link as Ironic 21.4 does. NOTE: it keeps
// only the sort keys, truthy associated/maintenance/retired, detail and
// fields; every other filter (provision_state, resource_class,
// associated=False, …) is dropped from page 2 on (docs/ironic.md §11).
func nextNodesLink(c *rctx, detailURL bool, sortKey, sortDir string, f nodeFilter, detail *bool,
	fields []string, limit int, marker string) string {
	var b strings.Builder
	b.WriteString(c.base)
	if detailURL {
		b.WriteString("/v1/nodes/detail?")
	} else {
		b.WriteString("/v1/nodes?")
	}
	b.WriteString("sort_key=" + sortKey + "&sort_dir=" + sortDir + "&")
	if f.associated != nil && *f.associated {
		b.WriteString("associated=True&")
	}
	if f.maintenance != nil && *f.maintenance {
		b.WriteString("maintenance=True&")
	}
	if f.retired != nil && *f.retired {
		b.WriteString("retired=True&")
	}
	if detail != nil {
		b.WriteString("detail=" + pyBool(*detail) + "&")
	}
	if len(fields) > 0 {
		b.WriteString("fields=" + strings.Join(fields, ",") + "&")
	}
	b.WriteString("limit=" + strconv.Itoa(limit) + "&marker=" + marker)
	return b.String()
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// handleGetNode serves GET /v1/nodes/{node}[?fields=].
func (s *Sim) handleGetNode(c *rctx) {
	if e := checkArgs(c.query, "fields"); e != nil {
		writeErr(c.w, e)
		return
	}
	fields := queryFields(c.query)
	s.mu.Lock()
	defer s.mu.Unlock()
	n, e := s.findNode(c, c.params["node"], s.now())
	if e == nil && fields != nil && c.ver < 8 {
		e = errNotAcceptable()
	}
	if e == nil {
		e = checkFieldsVersion(fields, c.ver)
	}
	if e == nil && fields != nil {
		e = checkFieldsValid(fields)
	}
	if e != nil {
		writeErr(c.w, e)
		return
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(renderNode(n, fields, c.ver, c.base)))
}

// nodeSubresources are the node sub-controllers: a GET on one the simulator
// does not serve is a 405, not a field list.
var nodeSubresources = map[string]bool{"maintenance": true, "management": true, "bios": true,
	"vendor_passthru": true, "validate": true, "portgroups": true, "volume": true, "allocation": true,
	"history": true, "inventory": true, "children": true, "firmware": true}

// handleGetNodeField serves GET /v1/nodes/{node}/{field}. NOTE: Ironic takes
// an unknown trailing path element as the fields argument of get_one, so
// GET /v1/nodes/n1/uuid answers {"uuid", "links"} and
// GET /v1/nodes/n1/bogus answers 400 "Field bogus is not a valid field.".
func (s *Sim) handleGetNodeField(c *rctx) {
	if nodeSubresources[c.params["field"]] {
		writeErr(c.w, routingErr(http.StatusMethodNotAllowed, ""))
		return
	}
	c.query.Set("fields", c.params["field"])
	s.handleGetNode(c)
}

// handlePostNodeIdent answers POST /v1/nodes/{node} as Ironic does: the
// ident lands in the body argument and fails the schema.
func (s *Sim) handlePostNodeIdent(c *rctx) {
	writeErr(c.w, badRequest("Schema error for node: '%s' is not of type 'object'", c.params["node"]))
}

// handleDeleteNodes answers DELETE /v1/nodes.
func (s *Sim) handleDeleteNodes(c *rctx) {
	writeErr(c.w, badRequest("Missing mandatory parameter: node_ident"))
}

// handleDeleteNode serves DELETE /v1/nodes/{node}.
func (s *Sim) handleDeleteNode(c *rctx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, e := s.findNode(c, c.params["node"], s.now())
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	if !n.Maintenance && n.InstanceUUID != "" {
		writeErr(c.w, errNodeAssociated(n.UUID, n.InstanceUUID))
		return
	}
	if n.Protected {
		writeErr(c.w, clientErr(http.StatusBadRequest, "Node %s is protected and cannot be undeployed, rebuilt or deleted", n.UUID))
		return
	}
	switch n.ProvisionState {
	case stateManageable, stateEnroll, "adopt failed", stateAvailable:
	default:
		if !n.Maintenance {
			writeErr(c.w, conflict(`Can not delete node "%s" while it is in provision state "%s". Valid provision states to perform deletion are: "('manageable', 'enroll', 'adopt failed', 'available')", or set the node into maintenance mode`,
				n.UUID, n.ProvisionState))
			return
		}
	}
	s.removeNode(n)
	writeEmpty(c.w, http.StatusNoContent)
}
