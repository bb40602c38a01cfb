package servers

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// rebuildRequest is a validated rebuild body. A nil pointer leaves the
// server's value as it is; a pointer to "" clears it.
type rebuildRequest struct {
	image catalog.Image
	// glance: image is a Glance image, whose required traits replace the
	// previous image's (glanceimage.go).
	glance      bool
	imageTraits []string
	name        *string
	description **string // 2.19: set to nil to clear
	metadata    map[string]string
	hasMetadata bool
	userData    *string // 2.57
	keyName     *string // 2.54
	hostname    *string // 2.90
	password    string
	// passwordGiven: the body had adminPass (else one is generated, unless
	// instance passwords are off).
	passwordGiven bool
	// The access addresses, when the body had them.
	accessIPv4, accessIPv6 string
	setIPv4, setIPv6       bool
	diskConfig             string // OS-DCF:diskConfig, when setDiskConfig
	setDiskConfig          bool
	// personality is the body's personality member (below 2.57), read
	// once the server's project is known.
	personality json.RawMessage
}

// novaHostnameRE is Nova's hostname of 2.90 (parameter_types.hostname).
var novaHostnameRE = regexp.MustCompile(`^[a-zA-Z0-9]+[a-zA-Z0-9-]*[a-zA-Z0-9]+$`)

func checkHostname(h string) error {
	if len(h) < 2 || len(h) > 63 || !novaHostnameRE.MatchString(h) {
		return core.BadRequest("Invalid input for field/attribute hostname. Value: %s. It must be 2 to 63 letters, digits or '-', not beginning or ending with '-'.", h)
	}
	return nil
}

// parseRebuild validates a rebuild body as Nova's schema of the request's
// microversion does, and resolves the image.
func (s *Service) parseRebuild(r *core.Request, raw json.RawMessage) (*rebuildRequest, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, core.BadRequest("Invalid input for field/attribute rebuild. Value: %s. It is not of type 'object'.", raw)
	}
	mv := r.MV
	allowed := map[string]bool{"name": true, "imageRef": true, "adminPass": true, "metadata": true,
		"preserve_ephemeral": true, "OS-DCF:diskConfig": true, "accessIPv4": true, "accessIPv6": true,
		"personality": !mv.AtLeast(mvRebuildUserData), "description": mv.AtLeast(mvDescription), "key_name": mv.AtLeast(mvRebuildKeyName),
		"user_data": mv.AtLeast(mvRebuildUserData), "trusted_image_certificates": mv.AtLeast(mvTrustedCerts), "hostname": mv.AtLeast(mvHostname)}
	for k := range fields {
		if !allowed[k] {
			return nil, core.BadRequest("Invalid input for field/attribute rebuild. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	// What ingot cannot keep is refused unless it is empty (as at create).
	if v, ok := fields["trusted_image_certificates"]; ok && !core.EmptyValue(v) {
		return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. ingot does not support this value.", "trusted_image_certificates", v)
	}
	dc, setDC, err := parseDiskConfig(fields)
	if err != nil {
		return nil, err
	}
	if v, ok := fields["preserve_ephemeral"]; ok && !novaBoolean(v) {
		return nil, core.BadRequest("Invalid input for field/attribute preserve_ephemeral. Value: %s. It is not a boolean.", v)
	}
	ref, err := requiredField(fields, "imageRef", "rebuild")
	if err != nil {
		return nil, err
	}
	if !core.IsUUID(ref) {
		return nil, core.BadRequest("Invalid input for field/attribute imageRef. Value: %s. It is not a 'uuid'.", ref)
	}
	rb := &rebuildRequest{diskConfig: dc, setDiskConfig: setDC, personality: fields["personality"]}
	if s.Cfg.Images != nil {
		rb.image.ID = ref // read from Glance once the server is known (rebuildGlanceImage)
	} else if img, ok := s.Cfg.Catalog.Image(ref); ok {
		rb.image = img
	} else {
		return nil, core.BadRequest("Cannot find image for rebuild")
	}
	if v, ok := fields["adminPass"]; ok && json.Unmarshal(v, &rb.password) != nil {
		return nil, core.BadRequest("Invalid input for field/attribute adminPass. Value: %s. It is not of type 'string'.", v)
	}
	_, rb.passwordGiven = fields["adminPass"]
	if rb.accessIPv4, rb.setIPv4, err = parseAccessIP(fields, "accessIPv4", false); err != nil {
		return nil, err
	}
	if rb.accessIPv6, rb.setIPv6, err = parseAccessIP(fields, "accessIPv6", true); err != nil {
		return nil, err
	}
	if _, ok := fields["name"]; ok {
		name, err := core.RequiredString(fields, "name", 255)
		if err != nil {
			return nil, err
		}
		if err := core.CheckName("name", name); err != nil {
			return nil, err
		}
		rb.name = &name
	}
	if _, ok := fields["description"]; ok {
		d, err := parseDescription(fields["description"])
		if err != nil {
			return nil, err
		}
		rb.description = &d
	}
	if v, ok := fields["metadata"]; ok {
		if string(v) == "null" {
			return nil, core.BadRequest("Invalid input for field/attribute metadata. Value: null. None is not of type 'object'.")
		}
		if rb.metadata, err = core.ParseMetadata(v); err != nil {
			return nil, err
		}
		rb.hasMetadata = true
	}
	if v, ok := fields["user_data"]; ok {
		ud := ""
		if string(v) != "null" {
			if ud, err = core.OptionalString(fields, "user_data", 65535); err != nil {
				return nil, err
			}
			if _, err := base64.StdEncoding.DecodeString(ud); err != nil {
				return nil, core.BadRequest("Invalid input for field/attribute user_data: it is not valid base64.")
			}
		}
		rb.userData = &ud
	}
	if v, ok := fields["key_name"]; ok {
		k := ""
		if string(v) != "null" {
			if json.Unmarshal(v, &k) != nil || k == "" || len([]rune(k)) > 255 {
				return nil, core.BadRequest("Invalid input for field/attribute key_name. Value: %s. It must be null or a string of 1 to 255 characters.", v)
			}
		}
		rb.keyName = &k
	}
	if v, ok := fields["hostname"]; ok {
		var h string
		if json.Unmarshal(v, &h) != nil {
			return nil, core.BadRequest("Invalid input for field/attribute hostname. Value: %s. It is not of type 'string'.", v)
		}
		if err := checkHostname(h); err != nil {
			return nil, err
		}
		rb.hostname = &h
	}
	return rb, nil
}

// requiredField reads a required string member of an action's object.
func requiredField(fields map[string]json.RawMessage, key, parent string) (string, error) {
	v, ok := fields[key]
	if !ok {
		return "", core.BadRequest("Invalid input for field/attribute %s. '%s' is a required property.", parent, key)
	}
	var str string
	if json.Unmarshal(v, &str) != nil {
		return "", core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'string'.", key, v)
	}
	return str, nil
}

// novaBoolean is Nova's parameter_types.boolean: true, false or one of
// its words.
func novaBoolean(raw json.RawMessage) bool {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	switch s {
	case "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes",
		"False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no":
		return true
	}
	return false
}

// rebuild redeploys the server's node with a new image (and what else the
// body changes), keeping node, ports and addresses. It answers 202 with
// the server as Nova does (adminPass, and user_data from 2.57).
func (s *Service) rebuild(w http.ResponseWriter, r *core.Request, raw json.RawMessage) error {
	rb, err := s.parseRebuild(r, raw)
	if err != nil {
		return err
	}
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersRebuild)
	if err != nil {
		return err
	}
	op := opRequest{kind: lifecycle.OpRebuild}
	if err := checkOp(sv, op, r.IsAdmin()); err != nil {
		return err
	}
	if sv.Spec.ImageID == "" {
		return core.BadRequest("Image %s is unacceptable: Unable to rebuild with a different image for a volume-backed server.", rb.image.ID)
	}
	if err := s.rebuildGlanceImage(r, sv, rb); err != nil {
		return err
	}
	publicKey, keyType := "", ""
	if rb.keyName != nil && *rb.keyName != "" {
		// The caller's keypair (as Nova: users own keys, projects own servers).
		kp, err := s.Cfg.Store.GetKeypair(r.Context(), r.Ident.UserID, *rb.keyName)
		if errors.Is(err, store.ErrNotFound) {
			return core.BadRequest("Invalid key_name provided.")
		}
		if err != nil {
			return fmt.Errorf("keypair %s: %w", *rb.keyName, err)
		}
		publicKey, keyType = kp.PublicKey, kp.Type
	}
	if rb.hasMetadata {
		limits, err := s.quotas.ProjectLimits(r, sv.ProjectID)
		if err != nil {
			return err
		}
		if lim := limits.Get(store.ResMetadataItems); lim >= 0 && len(rb.metadata) > lim {
			return core.Forbidden("Maximum number of metadata items exceeds %d", lim)
		}
	}
	// As Nova, the rebuilt server has the rebuild's files, none if it
	// names none.
	var files []lifecycle.File
	if rb.personality != nil {
		if files, err = s.parsePersonality(r, sv.ProjectID, rb.personality); err != nil {
			return err
		}
	}
	if !rb.passwordGiven && !s.Cfg.DisableInstancePassword {
		rb.password = generatePassword()
	}
	op.change = func(cur *lifecycle.Server) {
		spec := &cur.Spec
		spec.ImageID, spec.ImageSource, spec.ImageChecksum = rb.image.ID, rb.image.URL, rb.image.Checksum
		if rb.glance {
			replaceImageTraits(spec, rb.imageTraits)
		}
		if rb.name != nil {
			cur.Name = *rb.name
		}
		if rb.description != nil {
			spec.Description = *rb.description
		}
		if rb.hasMetadata {
			spec.Metadata = rb.metadata
		}
		if rb.userData != nil {
			spec.UserData = *rb.userData
		}
		spec.Files = files
		if rb.keyName != nil {
			spec.KeyName, spec.PublicKey, spec.KeyType = *rb.keyName, publicKey, keyType
		}
		if rb.hostname != nil {
			spec.Hostname = *rb.hostname
		}
		if rb.setIPv4 {
			spec.AccessIPv4 = rb.accessIPv4
		}
		if rb.setIPv6 {
			spec.AccessIPv6 = rb.accessIPv6
		}
		if rb.setDiskConfig {
			spec.DiskConfig = rb.diskConfig
		}
		// The redeploy's config drive carries the new password (Nova's
		// Ironic driver writes it at a rebuild as at a spawn).
		spec.AdminPass = rb.password
	}
	out, err := s.recordOp(r, sv, op)
	if err != nil {
		return err
	}
	view, err := s.updateView(r, out, true)
	if err != nil {
		return err
	}
	if !s.Cfg.DisableInstancePassword {
		view["adminPass"] = rb.password
	}
	if r.MV.AtLeast(mvRebuildUserData) {
		view["user_data"] = core.OrNull(out.Spec.UserData)
	}
	w.Header().Set("Location", s.renderer(r).serverLinks(out.ID)[0].Href)
	core.WriteJSON(w, http.StatusAccepted, serverBody{Server: view})
	return nil
}

// parseDescription is Nova's description: null, or up to 255 printable
// characters.
func parseDescription(raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var d string
	if json.Unmarshal(raw, &d) != nil {
		return nil, core.BadRequest("Invalid input for field/attribute description. Value: %s. It is not of type 'string', 'null'.", raw)
	}
	if len([]rune(d)) > 255 {
		return nil, core.BadRequest("Invalid input for field/attribute description. Value: %s. It is longer than 255 characters.", d)
	}
	if core.HasControl(d) {
		return nil, core.BadRequest("Invalid input for field/attribute description. Value: %s. It must contain printable characters only.", d)
	}
	return &d, nil
}

// updateView is the server as Nova answers a PUT or a rebuild. Below 2.75
// that is fewer members than GET shows (no availability zone, config
// drive, key_name (a rebuild has it from 2.54), usage times, security
// groups, OS-EXT-STS, volumes, OS-EXT-SRV-ATTR, host_status, and addresses
// without their OS-EXT-IPS members); from 2.75 it is what GET shows. A
// rebuild never shows OS-EXT-SRV-ATTR:user_data (its answer has user_data).
func (s *Service) updateView(r *core.Request, sv *lifecycle.Server, rebuild bool) (map[string]any, error) {
	ports, err := s.Cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return nil, fmt.Errorf("ports of %s: %w", sv.ID, err)
	}
	view := s.renderer(r).server(sv, ports)
	if err := s.attachVolumes(r, []*lifecycle.Server{sv}, []*serverView{view}); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", sv.ID, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("server %s: %w", sv.ID, err)
	}
	if rebuild {
		delete(m, "OS-EXT-SRV-ATTR:user_data")
	}
	if r.MV.AtLeast(mvAPICleanup) {
		return m, nil
	}
	for _, k := range []string{"OS-EXT-AZ:availability_zone", "config_drive", "OS-SRV-USG:launched_at",
		"OS-SRV-USG:terminated_at", "security_groups", "OS-EXT-STS:task_state", "OS-EXT-STS:vm_state",
		"OS-EXT-STS:power_state", "os-extended-volumes:volumes_attached", "host_status"} {
		delete(m, k)
	}
	if !rebuild || !r.MV.AtLeast(mvRebuildKeyName) {
		delete(m, "key_name")
	}
	for k := range m {
		if strings.HasPrefix(k, "OS-EXT-SRV-ATTR:") {
			delete(m, k)
		}
	}
	if addrs, ok := m["addresses"].(map[string]any); ok {
		for net, list := range addrs {
			entries, _ := list.([]any)
			for i, e := range entries {
				if a, ok := e.(map[string]any); ok {
					entries[i] = map[string]any{"addr": a["addr"], "version": a["version"]}
				}
			}
			addrs[net] = entries
		}
	}
	return m, nil
}
