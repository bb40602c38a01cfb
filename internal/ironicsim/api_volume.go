package ironicsim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Volume connectors and targets (>= 1.32). Creation is a plain insert on any
// storage interface and in any state; update and deletion need the node's
// power_state to be exactly "power off" (docs/ironic.md §5). They survive undeploy
// and go with the node.

type volConnector struct {
	UUID        string
	nodeUUID    string
	Type        string
	ConnectorID string
	Extra       map[string]any
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

type volTarget struct {
	UUID       string
	nodeUUID   string
	VolumeType string
	VolumeID   string
	BootIndex  int
	Properties map[string]any
	Extra      map[string]any
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (v *volConnector) doc() map[string]any {
	return map[string]any{"uuid": v.UUID, "created_at": pyTime(v.CreatedAt), "updated_at": timeOrNil(v.UpdatedAt),
		"connector_id": v.ConnectorID, "extra": mapOrEmpty(v.Extra), "type": v.Type, "node_uuid": v.nodeUUID}
}

func (t *volTarget) doc() map[string]any {
	return map[string]any{"uuid": t.UUID, "created_at": pyTime(t.CreatedAt), "updated_at": timeOrNil(t.UpdatedAt),
		"boot_index": t.BootIndex, "extra": mapOrEmpty(t.Extra), "properties": mapOrEmpty(t.Properties),
		"volume_id": t.VolumeID, "volume_type": t.VolumeType, "node_uuid": t.nodeUUID}
}

func renderVol(all map[string]any, fields []string, resource, base string) map[string]any {
	out := all
	if fields != nil {
		out = make(map[string]any, len(fields)+1)
		for _, f := range fields {
			if v, ok := all[f]; ok {
				out[f] = v
			}
		}
	}
	out["links"] = links(base, resource, all["uuid"].(string))
	return out
}

var connectorSchema = map[string][]string{"connector_id": {"string"}, "extra": {"object", "null"},
	"node_uuid": {"string"}, "type": {"string"}, "uuid": {"string", "null"}}
var targetSchema = map[string][]string{"boot_index": {"integer"}, "extra": {"object", "null"},
	"node_uuid": {"string"}, "properties": {"object", "null"}, "volume_id": {"string"},
	"volume_type": {"string"}, "uuid": {"string", "null"}}

// checkSchema validates a volume body: known keys, types, required keys.
func checkSchema(what string, body map[string]any, schema map[string][]string, required []string) *apiErr {
	for _, k := range sortedKeys(body) {
		types, ok := schema[k]
		if !ok {
			return badRequest("Schema error for %s: Additional properties are not allowed ('%s' was unexpected)", what, k)
		}
		if e := checkType(what, body[k], types...); e != nil {
			return e
		}
	}
	for _, k := range required {
		if _, ok := body[k]; !ok {
			return badRequest("Schema error for %s: '%s' is a required property", what, k)
		}
	}
	for _, k := range []string{"node_uuid", "uuid"} {
		if v, ok := body[k].(string); ok && !isUUIDLike(v) {
			return badRequest("Expected UUID for %s: %s", k, v)
		}
	}
	return nil
}

func volumeGate(c *rctx) bool {
	if c.ver < 32 {
		writeErr(c.w, routingErr(http.StatusNotFound, ""))
		return false
	}
	return true
}

// handleCreateConnector serves POST /v1/volume/connectors.
func (s *Sim) handleCreateConnector(c *rctx) {
	if !volumeGate(c) {
		return
	}
	body, e := readBody(c)
	if e == nil {
		e = checkSchema("connector", body, connectorSchema, []string{"connector_id", "node_uuid", "type"})
	}
	if e != nil {
		writeErr(c.w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	nodeUUID := canonicalUUID(body["node_uuid"].(string))
	if s.nodes[nodeUUID] == nil {
		writeErr(c.w, badRequest("Invalid input for field/attribute node_uuid. Value: '%s'. ", body["node_uuid"]))
		return
	}
	v := &volConnector{UUID: s.newUUID(), nodeUUID: nodeUUID, Type: body["type"].(string),
		ConnectorID: body["connector_id"].(string), Extra: map[string]any{}, CreatedAt: s.now()}
	if id, ok := body["uuid"].(string); ok {
		v.UUID = canonicalUUID(id)
		if s.conns[v.UUID] != nil {
			writeErr(c.w, conflict("A volume connector with UUID %s already exists.", v.UUID))
			return
		}
	}
	if m, ok := body["extra"].(map[string]any); ok {
		v.Extra = cloneMap(m)
	}
	for _, o := range s.connOrd {
		if o.Type == v.Type && o.ConnectorID == v.ConnectorID {
			writeErr(c.w, conflict("A volume connector with type %s and connector ID %s already exists.", v.Type, v.ConnectorID))
			return
		}
	}
	s.conns[v.UUID] = v
	s.connOrd = append(s.connOrd, v)
	c.w.Header().Set("Location", c.base+"/v1/volume/connectors/"+v.UUID)
	writeRaw(c.w, http.StatusCreated, encodeJSON(renderVol(v.doc(), nil, "volume/connectors", c.base)))
}

// handleCreateTarget serves POST /v1/volume/targets.
func (s *Sim) handleCreateTarget(c *rctx) {
	if !volumeGate(c) {
		return
	}
	body, e := readBody(c)
	if e == nil {
		e = checkSchema("target", body, targetSchema, []string{"boot_index", "node_uuid", "volume_id", "volume_type"})
	}
	if e != nil {
		writeErr(c.w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	nodeUUID := canonicalUUID(body["node_uuid"].(string))
	if s.nodes[nodeUUID] == nil {
		writeErr(c.w, badRequest("Invalid input for field/attribute node_uuid. Value: '%s'. ", body["node_uuid"]))
		return
	}
	t := &volTarget{UUID: s.newUUID(), nodeUUID: nodeUUID, VolumeType: body["volume_type"].(string),
		VolumeID: body["volume_id"].(string), BootIndex: int(body["boot_index"].(float64)),
		Properties: map[string]any{}, Extra: map[string]any{}, CreatedAt: s.now()}
	if id, ok := body["uuid"].(string); ok {
		t.UUID = canonicalUUID(id)
		if s.targets[t.UUID] != nil {
			writeErr(c.w, conflict("A volume target with UUID %s already exists.", t.UUID))
			return
		}
	}
	if m, ok := body["properties"].(map[string]any); ok {
		t.Properties = cloneMap(m)
	}
	if m, ok := body["extra"].(map[string]any); ok {
		t.Extra = cloneMap(m)
	}
	if e := s.checkBootIndex(t, ""); e != nil {
		writeErr(c.w, e)
		return
	}
	s.targets[t.UUID] = t
	s.tgtOrd = append(s.tgtOrd, t)
	c.w.Header().Set("Location", c.base+"/v1/volume/targets/"+t.UUID)
	writeRaw(c.w, http.StatusCreated, encodeJSON(renderVol(t.doc(), nil, "volume/targets", c.base)))
}

func (s *Sim) checkBootIndex(t *volTarget, self string) *apiErr {
	for _, o := range s.tgtOrd {
		if o.UUID != self && o.nodeUUID == t.nodeUUID && o.BootIndex == t.BootIndex {
			return conflict("A volume target with boot index '%d' for the same node already exists.", t.BootIndex)
		}
	}
	return nil
}

func (s *Sim) handleListConnectors(c *rctx) { s.listVolume(c, "connectors", "") }
func (s *Sim) handleListTargets(c *rctx)    { s.listVolume(c, "targets", "") }
func (s *Sim) handleListNodeConnectors(c *rctx) {
	s.listVolume(c, "connectors", c.params["node"])
}
func (s *Sim) handleListNodeTargets(c *rctx) { s.listVolume(c, "targets", c.params["node"]) }

// listVolume serves the connector and target collections.
func (s *Sim) listVolume(c *rctx, kind, parent string) {
	if !volumeGate(c) {
		return
	}
	q := c.query
	if e := checkArgs(q, "node", "marker", "limit", "sort_key", "sort_dir", "fields", "detail", "project"); e != nil {
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
	if fields == nil && (detail == nil || !*detail) {
		if kind == "connectors" {
			fields = []string{"uuid", "node_uuid", "type", "connector_id"}
		} else {
			fields = []string{"uuid", "node_uuid", "volume_type", "boot_index", "volume_id"}
		}
	}
	nodeIdent := parent
	if nodeIdent == "" {
		nodeIdent = q.Get("node")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	nodeUUID := ""
	if nodeIdent != "" {
		n, e := s.findNode(c, nodeIdent, s.now())
		if e != nil {
			writeErr(c.w, e)
			return
		}
		nodeUUID = n.UUID
	}
	var docs []map[string]any
	if kind == "connectors" {
		for _, v := range s.connOrd {
			if nodeUUID == "" || v.nodeUUID == nodeUUID {
				docs = append(docs, v.doc())
			}
		}
	} else {
		for _, t := range s.tgtOrd {
			if nodeUUID == "" || t.nodeUUID == nodeUUID {
				docs = append(docs, t.doc())
			}
		}
	}
	start := 0
	if marker := q.Get("marker"); marker != "" {
		for i, d := range docs {
			if d["uuid"] == marker {
				start = i + 1
			}
		}
	}
	items := []any{}
	last := ""
	for i := start; i < len(docs) && len(items) < limit; i++ {
		items = append(items, renderVol(docs[i], fields, "volume/"+kind, c.base))
		last = docs[i]["uuid"].(string)
	}
	body := map[string]any{kind: items}
	if len(items) > 0 && len(items) == limit {
		next := c.base + "/v1/volume/" + kind + "?"
		if detail != nil && *detail {
			next += "detail=True&"
		}
		if qf := queryFields(q); len(qf) > 0 {
			next += "fields=" + strings.Join(qf, ",") + "&"
		}
		body["next"] = next + "limit=" + strconv.Itoa(limit) + "&marker=" + last
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(body))
}

func (s *Sim) handleGetConnector(c *rctx) {
	if !volumeGate(c) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.conns[canonicalUUID(c.params["connector"])]
	if v == nil {
		writeErr(c.w, clientErr(http.StatusNotFound, "Volume connector %s could not be found.", c.params["connector"]))
		return
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(renderVol(v.doc(), queryFields(c.query), "volume/connectors", c.base)))
}

func (s *Sim) handleGetTarget(c *rctx) {
	if !volumeGate(c) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.targets[canonicalUUID(c.params["target"])]
	if t == nil {
		writeErr(c.w, clientErr(http.StatusNotFound, "Volume target %s could not be found.", c.params["target"]))
		return
	}
	writeRaw(c.w, http.StatusOK, encodeJSON(renderVol(t.doc(), queryFields(c.query), "volume/targets", c.base)))
}

// volumeNodeCheck applies the conductor's checks for updating or deleting a
// connector or target: the node lock, then power_state exactly "power off".
func (s *Sim) volumeNodeCheck(nodeUUID, action string) *apiErr {
	n := s.nodes[nodeUUID]
	if n == nil {
		return errNodeNotFound(nodeUUID)
	}
	s.advance(n, s.now())
	if n.Reservation != "" {
		return errNodeLocked(n.UUID, n.Reservation)
	}
	if n.PowerState != powerOff {
		state := n.PowerState
		if state == "" {
			state = "None"
		}
		return errInvalidStateRequested(action, n.UUID, state)
	}
	return nil
}

func (s *Sim) handleDeleteConnector(c *rctx) {
	if !volumeGate(c) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.conns[canonicalUUID(c.params["connector"])]
	if v == nil {
		writeErr(c.w, clientErr(http.StatusNotFound, "Volume connector %s could not be found.", c.params["connector"]))
		return
	}
	if e := s.volumeNodeCheck(v.nodeUUID, "volume connector deletion"); e != nil {
		writeErr(c.w, e)
		return
	}
	delete(s.conns, v.UUID)
	for i, o := range s.connOrd {
		if o == v {
			s.connOrd = append(s.connOrd[:i], s.connOrd[i+1:]...)
			break
		}
	}
	writeEmpty(c.w, http.StatusNoContent)
}

func (s *Sim) handleDeleteTarget(c *rctx) {
	if !volumeGate(c) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.targets[canonicalUUID(c.params["target"])]
	if t == nil {
		writeErr(c.w, clientErr(http.StatusNotFound, "Volume target %s could not be found.", c.params["target"]))
		return
	}
	if e := s.volumeNodeCheck(t.nodeUUID, "volume target deletion"); e != nil {
		writeErr(c.w, e)
		return
	}
	delete(s.targets, t.UUID)
	for i, o := range s.tgtOrd {
		if o == t {
			s.tgtOrd = append(s.tgtOrd[:i], s.tgtOrd[i+1:]...)
			break
		}
	}
	writeEmpty(c.w, http.StatusNoContent)
}

// patchVolume applies a JSON patch to a connector or target document.
func patchVolume(c *rctx, doc map[string]any, allowed []string, schema map[string][]string, what string) *apiErr {
	ops, e := parsePatch(readRawBody(c))
	if e != nil {
		return e
	}
	for _, p := range ops {
		if !inList(p.root(), allowed) {
			return badRequest("Cannot patch %s. Only the following can be updated: %s", p.Path, strings.Join(allowed, ", "))
		}
	}
	if e := applyPatch(doc, ops); e != nil {
		return e
	}
	for _, k := range allowed {
		if v, ok := doc[k]; ok && v != nil {
			if e := checkType(what, v, schema[k]...); e != nil {
				return e
			}
		}
	}
	return nil
}

func (s *Sim) handlePatchConnector(c *rctx) {
	if !volumeGate(c) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.conns[canonicalUUID(c.params["connector"])]
	if v == nil {
		writeErr(c.w, clientErr(http.StatusNotFound, "Volume connector %s could not be found.", c.params["connector"]))
		return
	}
	doc := v.doc()
	if e := patchVolume(c, doc, []string{"connector_id", "extra", "node_uuid", "type"}, connectorSchema, "connector"); e != nil {
		writeErr(c.w, e)
		return
	}
	if e := s.volumeNodeCheck(v.nodeUUID, "volume connector update"); e != nil {
		writeErr(c.w, e)
		return
	}
	v.ConnectorID, _ = doc["connector_id"].(string)
	v.Type, _ = doc["type"].(string)
	v.Extra, _ = doc["extra"].(map[string]any)
	v.UpdatedAt = s.now()
	writeRaw(c.w, http.StatusOK, encodeJSON(renderVol(v.doc(), nil, "volume/connectors", c.base)))
}

func (s *Sim) handlePatchTarget(c *rctx) {
	if !volumeGate(c) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.targets[canonicalUUID(c.params["target"])]
	if t == nil {
		writeErr(c.w, clientErr(http.StatusNotFound, "Volume target %s could not be found.", c.params["target"]))
		return
	}
	doc := t.doc()
	allowed := []string{"boot_index", "extra", "node_uuid", "properties", "volume_id", "volume_type"}
	if e := patchVolume(c, doc, allowed, targetSchema, "target"); e != nil {
		writeErr(c.w, e)
		return
	}
	if e := s.volumeNodeCheck(t.nodeUUID, "volume target update"); e != nil {
		writeErr(c.w, e)
		return
	}
	upd := *t
	if f, ok := doc["boot_index"].(float64); ok {
		upd.BootIndex = int(f)
	} else if i, ok := doc["boot_index"].(int); ok {
		upd.BootIndex = i
	}
	if e := s.checkBootIndex(&upd, t.UUID); e != nil {
		writeErr(c.w, e)
		return
	}
	upd.VolumeID, _ = doc["volume_id"].(string)
	upd.VolumeType, _ = doc["volume_type"].(string)
	upd.Properties, _ = doc["properties"].(map[string]any)
	upd.Extra, _ = doc["extra"].(map[string]any)
	upd.UpdatedAt = s.now()
	*t = upd
	writeRaw(c.w, http.StatusOK, encodeJSON(renderVol(t.doc(), nil, "volume/targets", c.base)))
}
