package ironicsim

import (
	"net/http"
	"strings"
	"time"
)

// nodeSchemaTypes is Ironic's node schema (POST and PATCH): field → allowed
// JSON types.
var nodeSchemaTypes = map[string][]string{
	"automated_clean": {"string", "boolean", "null"}, "bios_interface": {"string", "null"},
	"boot_interface": {"string", "null"}, "boot_mode": {"string", "null"},
	"chassis_uuid": {"string", "null"}, "conductor_group": {"string", "null"},
	"console_enabled": {"string", "boolean", "null"}, "console_interface": {"string", "null"},
	"deploy_interface": {"string", "null"}, "description": {"string", "null"},
	"driver": {"string"}, "driver_info": {"object", "null"}, "extra": {"object", "null"},
	"inspect_interface": {"string", "null"}, "instance_info": {"object", "null"},
	"instance_uuid": {"string", "null"}, "lessee": {"string", "null"},
	"management_interface": {"string", "null"}, "maintenance": {"string", "boolean", "null"},
	"name": {"string", "null"}, "network_data": {"object", "null"},
	"network_interface": {"string", "null"}, "owner": {"string", "null"},
	"power_interface": {"string", "null"}, "properties": {"object", "null"},
	"raid_interface": {"string", "null"}, "rescue_interface": {"string", "null"},
	"resource_class": {"string", "null"}, "retired": {"string", "boolean", "null"},
	"retired_reason": {"string", "null"}, "secure_boot": {"string", "boolean", "null"},
	"shard": {"string", "null"}, "storage_interface": {"string", "null"},
	"uuid": {"string", "null"}, "vendor_interface": {"string", "null"},
}

// patchAllowed is Ironic's PATCH_ALLOWED_FIELDS for nodes.
var patchAllowed = []string{"automated_clean", "bios_interface", "boot_interface", "chassis_uuid",
	"conductor_group", "console_interface", "deploy_interface", "description", "driver", "driver_info",
	"extra", "inspect_interface", "instance_info", "instance_uuid", "lessee", "maintenance",
	"management_interface", "name", "network_data", "network_interface", "owner", "power_interface",
	"properties", "protected", "protected_reason", "raid_interface", "rescue_interface",
	"resource_class", "retired", "retired_reason", "shard", "storage_interface", "vendor_interface"}

// updateAllowedStates are the states in which interfaces and resource_class
// may change (conductor update_node).
var updateAllowedStates = []string{stateEnroll, "inspecting", "inspect wait", stateManageable, stateAvailable}

// transitionUpdateAllowed is UPDATE_ALLOWED_STATES: states with a target in
// which a PATCH is still allowed.
var transitionUpdateAllowed = map[string]bool{
	stateDeployFailed: true, "inspecting": true, "inspect failed": true, "inspect wait": true,
	stateCleanFailed: true, stateError: true, stateVerifying: true, "adopt failed": true,
	"rescue failed": true, "unrescue failed": true,
}

func inList(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkInterface validates an interface implementation name.
func checkInterface(kind, impl string) *apiErr {
	valid := enabledInterfaces[kind]
	if inList(impl, valid) {
		return nil
	}
	quoted := make([]string, len(valid))
	for i, v := range valid {
		quoted[i] = "'" + v + "'"
	}
	return badRequest("Could not find the following interface in the 'ironic.hardware.interfaces.%s' entrypoint: %s. Valid interfaces are [%s].",
		kind, impl, strings.Join(quoted, ", "))
}

// nodeDoc is the patchable view of a node (as_dict plus chassis_uuid).
func nodeDoc(n *node) map[string]any {
	doc := map[string]any{}
	for _, k := range patchAllowed {
		switch k {
		case "protected":
			doc[k] = n.Protected
		case "protected_reason":
			doc[k] = strOrNil(n.ProtectedReason)
		case "driver_info":
			doc[k] = cloneMap(n.DriverInfo)
		case "instance_info":
			doc[k] = cloneMap(n.InstanceInfo)
		default:
			f := nodeFieldByName[k]
			doc[k] = cloneValue(f.get(n))
		}
	}
	return doc
}

// handleCreateNode serves POST /v1/nodes.
func (s *Sim) handleCreateNode(c *rctx) {
	body, e := readBody(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	for _, k := range sortedKeys(body) {
		if _, ok := nodeSchemaTypes[k]; !ok {
			writeErr(c.w, badRequest("Schema error for node: Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
	}
	if _, ok := body["driver"]; !ok {
		writeErr(c.w, badRequest("Schema error for node: 'driver' is a required property"))
		return
	}
	for _, k := range sortedKeys(body) {
		if e := checkType("node", body[k], nodeSchemaTypes[k]...); e != nil {
			writeErr(c.w, e)
			return
		}
	}
	for _, k := range []string{"instance_uuid", "uuid", "chassis_uuid"} {
		if v, ok := body[k].(string); ok && !isUUIDLike(v) {
			writeErr(c.w, badRequest("Expected UUID for %s: %s", k, v))
			return
		}
	}
	// reject_fields_in_newer_versions
	for k, v := range body {
		f := nodeFieldByName[k]
		if f == nil || f.min <= c.ver {
			continue
		}
		if (k == "name" && v == nil) || (k == "conductor_group" && v == "") || v == nil {
			continue
		}
		writeErr(c.w, errNotAcceptable())
		return
	}
	if v, ok := body["driver"].(string); ok && v != "fake-hardware" {
		writeErr(c.w, badRequest(`No valid host was found. Reason: No conductor service registered which supports driver %s for conductor group "".`, v))
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := s.newNode(now)
	if v, ok := body["uuid"].(string); ok {
		n.UUID = canonicalUUID(v)
		if s.nodes[n.UUID] != nil {
			writeErr(c.w, conflict("A node with UUID %s already exists.", n.UUID))
			return
		}
	}
	if v, ok := body["name"].(string); ok {
		if c.ver < 5 {
			writeErr(c.w, errNotAcceptable())
			return
		}
		if !isValidName(v) || isUUIDLike(v) {
			writeErr(c.w, badRequest("Cannot create node with invalid name '%s'", v))
			return
		}
		if v == "detail" || v == "validate" {
			writeErr(c.w, badRequest(`The word "%s" is reserved and can not be used as a node name. Reserved words are: detail, validate.`, v))
			return
		}
		if s.byName[v] != nil {
			writeErr(c.w, conflict("A node with name %s already exists.", v))
			return
		}
		n.Name = v
	}
	if c.ver < 11 {
		n.ProvisionState = stateAvailable
	}
	if e := s.setNodeFields(n, body); e != nil {
		writeErr(c.w, e)
		return
	}
	if n.InstanceUUID != "" {
		if other := s.nodeByInstance(n.InstanceUUID); other != nil {
			writeErr(c.w, conflict("Instance %s is already associated with a node, it cannot be associated with this other node %s",
				n.InstanceUUID, n.UUID))
			return
		}
	}
	s.insertNode(n)
	c.w.Header().Set("Location", c.base+"/v1/nodes/"+n.UUID)
	writeRaw(c.w, http.StatusCreated, encodeJSON(renderNode(n, nil, c.ver, c.base)))
}

// nodeByInstance finds the node holding an instance UUID. Caller holds s.mu.
func (s *Sim) nodeByInstance(instance string) *node {
	return s.byInstance[instance]
}

// setNodeFields copies the writable fields of body (create) or a patched
// document (update) onto n. Interfaces are validated; null interfaces get
// their defaults.
func (s *Sim) setNodeFields(n *node, doc map[string]any) *apiErr {
	str := func(k string) string {
		v, _ := doc[k].(string)
		return v
	}
	obj := func(k string) map[string]any {
		if v, ok := doc[k].(map[string]any); ok {
			return cloneMap(v)
		}
		return map[string]any{}
	}
	// A create sets what the body has; an update gets every patchable
	// field (nil when removed).
	has := func(k string) bool { _, ok := doc[k]; return ok }
	for _, kind := range interfaceKinds {
		k := kind + "_interface"
		if !has(k) {
			continue
		}
		impl := str(k)
		if impl == "" {
			impl = s.defaultInterface(kind)
		} else if e := checkInterface(kind, impl); e != nil {
			return e
		}
		*n.ifaceField(kind) = impl
	}
	if has("resource_class") {
		if v, ok := doc["resource_class"].(string); ok {
			if len(v) > 80 {
				return badRequest("Schema error for node: '%s' is too long", v)
			}
			n.ResourceClass = &v
		} else {
			n.ResourceClass = nil
		}
	}
	for _, k := range []string{"maintenance", "retired", "console_enabled", "protected"} {
		if !has(k) {
			continue
		}
		b, e := boolValue(k, doc[k])
		if e != nil {
			return e
		}
		switch k {
		case "maintenance":
			n.Maintenance = b
		case "retired":
			n.Retired = b
		case "console_enabled":
			n.ConsoleEnabled = b
		case "protected":
			n.Protected = b
		}
	}
	if has("automated_clean") {
		if doc["automated_clean"] == nil {
			n.AutomatedClean = nil
		} else {
			b, e := boolValue("automated_clean", doc["automated_clean"])
			if e != nil {
				return e
			}
			n.AutomatedClean = &b
		}
	}
	if has("instance_uuid") {
		n.InstanceUUID = ""
		if v := str("instance_uuid"); v != "" {
			n.InstanceUUID = canonicalUUID(v)
		}
	}
	if has("chassis_uuid") {
		n.ChassisUUID = str("chassis_uuid")
	}
	if has("maintenance_reason") {
		n.MaintenanceReason = str("maintenance_reason")
	}
	strs := map[string]*string{"description": &n.Description, "owner": &n.Owner, "lessee": &n.Lessee,
		"retired_reason": &n.RetiredReason, "shard": &n.Shard, "protected_reason": &n.ProtectedReason}
	for k, p := range strs {
		if has(k) {
			*p = str(k)
		}
	}
	if has("conductor_group") {
		n.ConductorGroup = strings.ToLower(str("conductor_group"))
	}
	objs := map[string]*map[string]any{"driver_info": &n.DriverInfo, "extra": &n.Extra,
		"instance_info": &n.InstanceInfo, "properties": &n.Properties, "network_data": &n.NetworkData}
	for k, p := range objs {
		if has(k) {
			*p = obj(k)
		}
	}
	return nil
}

// handlePatchNode serves PATCH /v1/nodes/{node}.
func (s *Sim) handlePatchNode(c *rctx) {
	if e := checkArgs(c.query, "reset_interfaces"); e != nil {
		writeErr(c.w, e)
		return
	}
	ops, e := parsePatch(readRawBody(c))
	if e != nil {
		writeErr(c.w, e)
		return
	}
	for _, p := range ops {
		if !inList(p.root(), patchAllowed) {
			writeErr(c.w, badRequest("Cannot patch %s. Only the following can be updated: %s", p.Path, strings.Join(patchAllowed, ", ")))
			return
		}
	}
	for _, p := range ops {
		if f := nodeFieldByName[p.root()]; f != nil && f.min > c.ver && p.Path == "/"+p.root() && p.Op != "remove" && truthy(p.Value) {
			writeErr(c.w, errNotAcceptable())
			return
		}
	}
	ident := c.params["node"]
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n, e := s.findNode(c, ident, now)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	onlyRemoveInstance := len(ops) == 1 && ops[0].Op == "remove" && ops[0].Path == "/instance_uuid"
	if !(n.Maintenance && onlyRemoveInstance) && n.TargetProvisionState != "" && !transitionUpdateAllowed[n.ProvisionState] {
		writeErr(c.w, conflict("Node %s can not be updated while a state transition is in progress.", ident))
		return
	}
	for _, v := range patchValues(ops, "/name") {
		name, _ := v.(string)
		if c.ver < 5 {
			writeErr(c.w, errNotAcceptable())
			return
		}
		if !isValidName(name) || isUUIDLike(name) {
			writeErr(c.w, badRequest("Node %s: Cannot change name to invalid name '%s'", ident, name))
			return
		}
	}
	doc := nodeDoc(n)
	if e := applyPatch(doc, ops); e != nil {
		writeErr(c.w, e)
		return
	}
	for _, k := range patchAllowed {
		v, ok := doc[k]
		if !ok {
			doc[k] = nil
			continue
		}
		if types, ok := nodeSchemaTypes[k]; ok {
			if e := checkType("patch", v, types...); e != nil {
				writeErr(c.w, e)
				return
			}
		}
	}
	if v, ok := doc["instance_uuid"].(string); ok && !isUUIDLike(v) {
		writeErr(c.w, badRequest("Expected UUID for instance_uuid: %s", v))
		return
	}
	if v, ok := doc["driver"].(string); !ok || v != "fake-hardware" {
		writeErr(c.w, badRequest(`No valid host was found. Reason: No conductor service registered which supports driver %v for conductor group "".`, doc["driver"]))
		return
	}

	// Conductor side (update_node): work on a copy, commit at the end.
	upd := *n
	if e := s.setNodeFields(&upd, doc); e != nil {
		writeErr(c.w, e)
		return
	}
	if n.Maintenance && !upd.Maintenance {
		upd.MaintenanceReason, upd.Fault = "", ""
		upd.maintOffAt = now
	}
	for _, kind := range interfaceKinds {
		if *upd.ifaceField(kind) != *n.ifaceField(kind) && !inList(n.ProvisionState, updateAllowedStates) && !n.Maintenance {
			writeErr(c.w, conflict("Node %s can not have %s_interface updated unless it is in one of allowed (%s) states or in maintenance mode.",
				n.UUID, kind, strings.Join(updateAllowedStates, ", ")))
			return
		}
	}
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	instanceChanged := upd.InstanceUUID != n.InstanceUUID
	if instanceChanged && upd.InstanceUUID != "" && n.InstanceUUID != "" {
		writeErr(c.w, errNodeAssociated(n.UUID, n.InstanceUUID))
		return
	}
	if !sameRC(upd.ResourceClass, n.ResourceClass) && n.ResourceClass != nil && !inList(n.ProvisionState, updateAllowedStates) {
		writeErr(c.w, conflict("Node %s can not have resource_class updated unless it is in one of allowed (%s) states.",
			n.UUID, strings.Join(updateAllowedStates, ", ")))
		return
	}
	if instanceChanged && upd.InstanceUUID != "" {
		if other := s.nodeByInstance(upd.InstanceUUID); other != nil && other != n {
			writeErr(c.w, conflict("Instance %s is already associated with a node, it cannot be associated with this other node %s",
				upd.InstanceUUID, n.UUID))
			return
		}
	}
	newName, _ := doc["name"].(string)
	if newName != n.Name && newName != "" {
		if other := s.byName[newName]; other != nil && other != n {
			writeErr(c.w, conflict("A node with name %s already exists.", newName))
			return
		}
	}
	s.commitUpdate(n, &upd, newName, now)
	writeRaw(c.w, http.StatusOK, encodeJSON(renderNode(n, nil, c.ver, c.base)))
}

func sameRC(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// commitUpdate stores an updated copy of a node. Caller holds s.mu.
func (s *Sim) commitUpdate(n, upd *node, newName string, now time.Time) {
	if newName != n.Name {
		if n.Name != "" {
			delete(s.byName, n.Name)
		}
		if newName != "" {
			s.byName[newName] = n
		}
	}
	upd.Name = newName
	instance := upd.InstanceUUID
	upd.InstanceUUID = n.InstanceUUID
	*n = *upd
	s.setInstance(n, instance)
	n.touch(now)
}
