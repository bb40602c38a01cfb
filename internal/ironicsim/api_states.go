package ironicsim

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// handleGetStates serves GET /v1/nodes/{node}/states.
func (s *Sim) handleGetStates(c *rctx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, e := s.findNode(c, c.params["node"], s.now())
	if e != nil {
		writeErr(c.w, e)
		return
	}
	st := map[string]any{
		"console_enabled":        n.ConsoleEnabled,
		"last_error":             strOrNil(n.LastError),
		"power_state":            strOrNil(n.PowerState),
		"provision_state":        strOrNil(n.ProvisionState),
		"target_power_state":     strOrNil(n.TargetPowerState),
		"target_provision_state": strOrNil(n.TargetProvisionState),
		"provision_updated_at":   timeOrNil(n.ProvisionUpdatedAt),
	}
	if c.ver >= 12 {
		st["raid_config"] = map[string]any{}
		st["target_raid_config"] = map[string]any{}
	}
	if c.ver >= 75 {
		st["boot_mode"] = nil
		st["secure_boot"] = nil
	}
	if c.ver < 2 && n.ProvisionState == stateAvailable {
		st["provision_state"] = nil
	}
	writeJSON(c.w, http.StatusOK, st)
}

// statesLocation is the Location header of a 202 (the ident as given).
func statesLocation(c *rctx) string {
	return c.base + "/v1/nodes/" + c.params["node"] + "/states"
}

// checkBodyArgs answers "Unexpected arguments" for unknown body keys.
func checkBodyArgs(body map[string]any, allowed ...string) *apiErr {
	q := url.Values{}
	for k := range body {
		q.Set(k, "")
	}
	return checkArgs(q, allowed...)
}

// handleProvision serves PUT /v1/nodes/{node}/states/provision.
func (s *Sim) handleProvision(c *rctx) {
	body, e := readBody(c)
	if e == nil {
		e = checkBodyArgs(body, "target", "configdrive", "clean_steps", "deploy_steps", "rescue_password", "disable_ramdisk")
	}
	if e != nil {
		writeErr(c.w, e)
		return
	}
	targetV, ok := body["target"]
	if !ok {
		writeErr(c.w, badRequest("Missing mandatory parameter: target"))
		return
	}
	target, ok := targetV.(string)
	if !ok {
		writeErr(c.w, badRequest("Expected string for target: %s", pyRepr(targetV)))
		return
	}
	configdrive := body["configdrive"]
	switch configdrive.(type) {
	case nil, string, map[string]any:
	default:
		writeErr(c.w, badRequest("Expected types <class 'NoneType'>, <class 'dict'>, <class 'str'> for configdrive: %s", pyRepr(configdrive)))
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n, e := s.findNode(c, c.params["node"], now)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if min, ok := minVerbVersion[target]; ok && c.ver < min {
		writeErr(c.w, errNotAcceptable())
		return
	}
	if (target == "active" || target == "rebuild") && n.Maintenance {
		writeErr(c.w, badRequest("The provisioning operation can't be performed on node %s because it's in maintenance mode.", n.UUID))
		return
	}
	if !isActionable(n.ProvisionState, target) {
		// NOTE: Ironic answers NodeLocked instead of 400 while the node
		// is reserved (docs/ironic.md §7A).
		if n.Reservation != "" {
			writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
			return
		}
		writeErr(c.w, errInvalidStateRequested(target, n.UUID, n.ProvisionState))
		return
	}
	if truthy(configdrive) {
		allowed := []string{"active"}
		if c.ver >= 35 {
			allowed = append(allowed, "rebuild")
		}
		if !inList(target, allowed) {
			writeErr(c.w, badRequest("Adding a config drive is only supported when setting provision state to %s", strings.Join(allowed, ", ")))
			return
		}
		if cd, isMap := configdrive.(map[string]any); isMap {
			if c.ver < 56 {
				writeErr(c.w, badRequest("Providing a JSON object for configdrive is only supported starting with API version 1.56"))
				return
			}
			if _, ok := cd["vendor_data"]; ok && c.ver < 59 {
				writeErr(c.w, badRequest("Providing vendor_data in configdrive is only supported starting with API version 1.59"))
				return
			}
		}
	}
	if steps, ok := body["clean_steps"]; ok && truthy(steps) && target != "clean" {
		writeErr(c.w, badRequest(`"clean_steps" is only valid when setting target provision state to clean`))
		return
	}
	if steps, ok := body["deploy_steps"]; ok && truthy(steps) {
		if c.ver < 69 {
			writeErr(c.w, clientErr(http.StatusNotAcceptable, "Request not acceptable. The minimal required API version should be 1.69"))
			return
		}
		if target != "active" && target != "rebuild" {
			writeErr(c.w, badRequest(`"deploy_steps" is only valid when setting target provision state to active or rebuild`))
			return
		}
	}
	if _, ok := body["rescue_password"]; ok && target != "rescue" {
		writeErr(c.w, badRequest(`"rescue_password" is only valid when setting target provision state to rescue`))
		return
	}
	// Conductor side: the exclusive lock, then the action's own checks.
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	switch verbOf(target) {
	case "deploy", "rebuild":
		if e := checkImageSource(n.InstanceInfo["image_source"]); e != nil {
			writeErr(c.w, e)
			return
		}
		// NOTE: Ironic saves the derived image type before it validates
		// the rest, so it stays even when the deploy is refused below.
		updateImageType(n)
		if e := checkInstanceTraits(n); e != nil {
			writeErr(c.w, badRequest("Failed to validate deploy or power info for node %s: %s", n.UUID, e.msg))
			return
		}
		s.startDeploy(n, now, configdrive)
	case "delete":
		s.startTeardown(n, now)
	case "rescue", "unrescue":
		if verbOf(target) == "rescue" {
			if pw, _ := body["rescue_password"].(string); pw == "" {
				writeErr(c.w, badRequest(`A non-empty "rescue_password" is required when setting target provision state to rescue`))
				return
			}
		}
		if *n.ifaceField("rescue") == "no-rescue" {
			// NOTE: Ironic 21.4 answers 500 (a "Server" fault) here.
			writeErr(c.w, serverErr(http.StatusInternalServerError, "Failed to %s instance %s for node %s: Validation failed: Driver fake-hardware does not support rescue (disabled or not implemented).",
				target, n.InstanceUUID, n.UUID))
			return
		}
		s.startRescue(n, now, verbOf(target) == "rescue")
	case "manage":
		s.startManage(n, now)
	case "provide":
		s.startProvide(n, now)
	default:
		writeErr(c.w, badRequest("Driver fake-hardware does not support %s (disabled or not implemented).", target))
		return
	}
	c.w.Header().Set("Location", statesLocation(c))
	writeEmpty(c.w, http.StatusAccepted)
}

func verbOf(target string) string {
	if v, ok := verbs[target]; ok {
		return v
	}
	return target
}

// checkImageSource checks the form of instance_info.image_source as the
// conductor does (docs/ironic.md §6): http(s), file and glance URLs or a bare UUID.
func checkImageSource(v any) *apiErr {
	src, ok := v.(string)
	if !ok || src == "" {
		return nil
	}
	scheme := ""
	if u, err := url.Parse(src); err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	switch scheme {
	case "":
		if isUUIDLike(src) {
			return nil
		}
		return serverErr(http.StatusInternalServerError, "Validation of image href %s failed, reason: Scheme-less image href is not a UUID.", src)
	case "http", "https", "file", "glance":
		return nil
	}
	return serverErr(http.StatusInternalServerError, "Validation of image href %s failed, reason: Image download protocol %s is not supported.", src, scheme)
}

// updateImageType is the conductor's update_image_type at the start of a
// deploy: with an image_source, instance_info.image_type and
// driver_internal_info.is_whole_disk_image record the image type (a preset
// image_type wins; kernel or ramdisk make a non-Glance image a partition
// image). Without an image_source nothing is recorded.
func updateImageType(n *node) {
	src := n.InstanceInfo["image_source"]
	if !truthy(src) {
		return
	}
	wholeDisk := true
	if it := n.InstanceInfo["image_type"]; truthy(it) {
		wholeDisk = it != "partition"
	} else if s, _ := src.(string); !isUUIDLike(s) && !strings.HasPrefix(s, "glance://") {
		wholeDisk = !truthy(n.InstanceInfo["kernel"]) && !truthy(n.InstanceInfo["ramdisk"])
	}
	imageType := "whole-disk"
	if !wholeDisk {
		imageType = "partition"
	}
	n.InstanceInfo = setKey(n.InstanceInfo, "image_type", imageType)
	n.DriverInternalInfo = setKey(n.DriverInternalInfo, "is_whole_disk_image", wholeDisk)
}

// checkInstanceTraits is validate_instance_info_traits: every trait in
// instance_info.traits must be set on the node.
func checkInstanceTraits(n *node) *apiErr {
	v := n.InstanceInfo["traits"]
	if !truthy(v) {
		return nil
	}
	invalid := badRequest("Error parsing traits from Node %s instance_info field. A list of strings is expected.", n.UUID)
	list, ok := v.([]any)
	if !ok {
		return invalid
	}
	have := map[string]bool{}
	for _, t := range n.Traits {
		have[t] = true
	}
	var missing []string
	seen := map[string]bool{}
	for _, t := range list {
		s, ok := t.(string)
		if !ok {
			return invalid
		}
		if !have[s] && !seen[s] {
			missing = append(missing, s)
			seen[s] = true
		}
	}
	if len(missing) > 0 {
		// NOTE: Ironic joins a Python set: the order varies; sorted here.
		sort.Strings(missing)
		return badRequest("Cannot specify instance traits that are not also set on the node. Node %s is missing traits %s",
			n.UUID, strings.Join(missing, ", "))
	}
	return nil
}

var powerTargets = []string{powerOn, powerOff, "rebooting", "soft rebooting", "soft power off"}

// handlePower serves PUT /v1/nodes/{node}/states/power. The fake power
// interface applies the change at once.
func (s *Sim) handlePower(c *rctx) {
	body, e := readBody(c)
	if e == nil {
		e = checkBodyArgs(body, "target", "timeout")
	}
	if e != nil {
		writeErr(c.w, e)
		return
	}
	target, _ := body["target"].(string)
	if _, ok := body["target"]; !ok {
		writeErr(c.w, badRequest("Missing mandatory parameter: target"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n, e := s.findNode(c, c.params["node"], now)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	timeout, hasTimeout := body["timeout"]
	if (target == "soft rebooting" || target == "soft power off" || (hasTimeout && timeout != nil)) && c.ver < 27 {
		writeErr(c.w, errNotAcceptable())
		return
	}
	if t, ok := timeout.(float64); ok && t < 1 {
		writeErr(c.w, badRequest("timeout has to be positive integer"))
		return
	}
	state := n.PowerState
	if state == "" {
		state = "None"
	}
	if !inList(target, powerTargets) {
		writeErr(c.w, errInvalidStateRequested(target, c.params["node"], state))
		return
	}
	if n.ProvisionState == stateCleaning || n.ProvisionState == "clean wait" {
		writeErr(c.w, errInvalidStateRequested(target, c.params["node"], n.ProvisionState))
		return
	}
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	switch target {
	case powerOff, "soft power off":
		n.PowerState = powerOff
	default:
		n.PowerState = powerOn
	}
	n.touch(now)
	c.w.Header().Set("Location", statesLocation(c))
	writeEmpty(c.w, http.StatusAccepted)
}

// handleSetMaintenance serves PUT /v1/nodes/{node}/maintenance.
func (s *Sim) handleSetMaintenance(c *rctx) { s.maintenance(c, true) }

// handleUnsetMaintenance serves DELETE /v1/nodes/{node}/maintenance.
func (s *Sim) handleUnsetMaintenance(c *rctx) { s.maintenance(c, false) }

func (s *Sim) maintenance(c *rctx, on bool) {
	reason := ""
	if on {
		body, e := readBody(c)
		if e == nil {
			e = checkBodyArgs(body, "reason")
		}
		if e != nil {
			writeErr(c.w, e)
			return
		}
		reason, _ = body["reason"].(string)
		if r := c.query.Get("reason"); r != "" && reason == "" {
			reason = r
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n, e := s.findNode(c, c.params["node"], now)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	s.setMaintenance(n, on, reason, now)
	writeEmpty(c.w, http.StatusAccepted)
}
