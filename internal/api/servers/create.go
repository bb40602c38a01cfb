package servers

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/flavors"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// createRequest is a validated POST /servers body, resolved against the
// catalogue and the networks.
type createRequest struct {
	name     string
	flavor   catalog.Flavor
	image    catalog.Image
	networks []string // network ids, one port each
	// fixedIPs and userPorts by network id (Neutron backend only).
	fixedIPs, userPorts map[string]string
	metadata            map[string]string
	userData            string
	hostname            string
	keyName             string
	// publicKey and keyType are the key_name keypair's, copied into the server.
	publicKey, keyType string
	volumes            []lifecycle.VolumeRef // block_device_mapping_v2, see resolveBoot
	// tags (2.52) and description (2.19), see parseCreateExtras.
	tags        []string
	description *string
	// adminPass (nil: none given), the access addresses, and how many
	// servers (create_extras.go).
	adminPass              *string
	accessIPv4, accessIPv6 string
	diskConfig             string // OS-DCF:diskConfig as asked ("" if not)
	multi                  multiCreate
	group                  *lifecycle.GroupRef // the group scheduler hint (servergroups.go)
	files                  []lifecycle.File    // personality (below 2.57)
	// glanceRef is imageRef, resolved against Glance once the flavor is
	// known, and imageTraits the Glance image's required traits
	// (glanceimage.go).
	glanceRef   string
	imageTraits []string
	// volumeToken is the caller's token when the build makes volumes in
	// Cinder (lifecycle.Server.VolumeToken).
	volumeToken string
	// securityGroups by name and the Neutron ids they resolved to
	// (secgroups.go; Neutron backend only).
	securityGroups, securityGroupIDs []string
}

// Fields of the server object that ingot accepts only in the form it would
// show anyway (one "default" security group without Neutron, always a
// config drive): a value ingot could not honour is refused rather than
// dropped.
var fixedServerFields = map[string]func(json.RawMessage) bool{
	"security_groups": func(raw json.RawMessage) bool {
		var groups []struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &groups) != nil {
			return false
		}
		for _, g := range groups {
			if g.Name != "default" {
				return false
			}
		}
		return true
	},
	"config_drive": func(json.RawMessage) bool { return true },
}

// parseCreate validates a create body the way Nova's schema does and
// resolves flavor, image and networks. It writes nothing.
func (s *Service) parseCreate(r *core.Request) (*createRequest, error) {
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return nil, err
	}
	for k := range top {
		switch k {
		case "server", "os:scheduler_hints", "OS-SCH-HNT:scheduler_hints":
		default:
			return nil, core.BadRequest("Invalid input for field/attribute %s: additional properties are not allowed.", k)
		}
	}
	raw, ok := top["server"]
	if !ok {
		return nil, core.BadRequest("'server' is a required property")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, core.BadRequest("Invalid input for field/attribute server: it must be an object.")
	}
	for k := range fields {
		switch k {
		case "name", "flavorRef", "imageRef", "networks", "metadata", "user_data", "hostname",
			"key_name", "availability_zone":
		case "min_count", "max_count", "return_reservation_id", "adminPass", "accessIPv4", "accessIPv6", "OS-DCF:diskConfig": // create_extras.go
		case "block_device_mapping_v2", "block_device_mapping": // resolveBoot
		case "tags", "description": // parseCreateExtras
		case "personality":
			if r.MV.AtLeast(mvRebuildUserData) {
				return nil, core.BadRequest("Invalid input for field/attribute server. Additional properties are not allowed ('%s' was unexpected).", k)
			}
		case "security_groups":
			if s.Cfg.SecurityGroupsAs != nil { // secgroups.go
				continue
			}
			if !fixedServerFields[k](fields[k]) {
				return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. ingot does not support this value yet.", k, fields[k])
			}
		default:
			ok, known := fixedServerFields[k]
			if !known {
				return nil, core.BadRequest("Invalid input for field/attribute server. Additional properties are not allowed ('%s' was unexpected).", k)
			}
			if !ok(fields[k]) {
				return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. ingot does not support this value yet.", k, fields[k])
			}
		}
	}
	c := &createRequest{}
	if c.name, err = core.RequiredString(fields, "name", 255); err != nil {
		return nil, err
	}
	if err := core.CheckName("name", c.name); err != nil {
		return nil, err
	}
	if c.multi, err = parseMultiCreate(fields); err != nil {
		return nil, err
	}
	if c.adminPass, err = parseAdminPass(fields, "adminPass"); err != nil {
		return nil, err
	}
	if c.accessIPv4, _, err = parseAccessIP(fields, "accessIPv4", false); err != nil {
		return nil, err
	}
	if c.accessIPv6, _, err = parseAccessIP(fields, "accessIPv6", true); err != nil {
		return nil, err
	}
	if c.diskConfig, _, err = parseDiskConfig(fields); err != nil {
		return nil, err
	}
	if err := s.resolveFlavor(r, fields, c); err != nil {
		return nil, err
	}
	if c.group, err = s.resolveGroup(r, top); err != nil {
		return nil, err
	}
	if err := s.resolveBoot(r, fields, c); err != nil {
		return nil, err
	}
	if s.Cfg.Neutron != nil {
		nr, err := s.resolveNeutronNetworks(r.Context(), r.Ident.ProjectID, fields["networks"], c.multi.maxCount)
		if err != nil {
			return nil, err
		}
		c.networks, c.fixedIPs, c.userPorts = nr.networks, nr.fixedIPs, nr.userPorts
		if c.securityGroups, c.securityGroupIDs, err = s.resolveSecurityGroups(r, fields["security_groups"]); err != nil {
			return nil, err
		}
	} else if c.networks, err = s.resolveNetworks(fields["networks"]); err != nil {
		return nil, err
	}
	if c.metadata, err = core.ParseMetadata(fields["metadata"]); err != nil {
		return nil, err
	}
	if c.userData, err = core.OptionalString(fields, "user_data", 65535); err != nil {
		return nil, err
	}
	if c.userData != "" {
		if _, err := base64.StdEncoding.DecodeString(c.userData); err != nil {
			return nil, core.BadRequest("Invalid input for field/attribute user_data: it is not valid base64.")
		}
	}
	if c.hostname, err = core.OptionalString(fields, "hostname", 255); err != nil {
		return nil, err
	}
	if c.hostname != "" && !core.HostnameRE.MatchString(c.hostname) {
		return nil, core.BadRequest("Invalid input for field/attribute hostname. Value: %s. It must contain only letters, digits, '.', '-' and '_'.", c.hostname)
	}
	if c.keyName, err = core.OptionalString(fields, "key_name", 255); err != nil {
		return nil, err
	}
	if c.keyName != "" {
		kp, err := s.Cfg.Store.GetKeypair(r.Context(), r.Ident.UserID, c.keyName)
		if errors.Is(err, store.ErrNotFound) {
			return nil, core.BadRequest("Invalid key_name provided.")
		}
		if err != nil {
			return nil, fmt.Errorf("keypair %s: %w", c.keyName, err)
		}
		c.publicKey, c.keyType = kp.PublicKey, kp.Type
	}
	if v, ok := fields["personality"]; ok {
		if c.files, err = s.parsePersonality(r, r.Ident.ProjectID, v); err != nil {
			return nil, err
		}
	}
	if err := parseCreateExtras(r, fields, c); err != nil {
		return nil, err
	}
	if c.multi.maxCount > 1 && c.hostname != "" {
		return nil, core.BadRequest("Invalid input for field/attribute hostname: a hostname cannot be given when creating more than one server (max_count %d).", c.multi.maxCount)
	}
	if c.multi.maxCount > 1 && slices.ContainsFunc(c.volumes, func(v lifecycle.VolumeRef) bool { return !v.Made() }) {
		// Each server makes volumes of its own; an existing one is one server's.
		return nil, core.BadRequest("A volume can be attached to one server only: block_device_mapping_v2 with max_count %d.", c.multi.maxCount)
	}
	if az, err := core.OptionalString(fields, "availability_zone", 255); err != nil {
		return nil, err
	} else if az != "" {
		// ingot does not place by zone: a zone is accepted only when every
		// compute host is in it (zones.go).
		z, err := s.admin.Zones(r)
		if err != nil {
			return nil, err
		}
		if !z.Accepts(az) {
			return nil, core.BadRequest("The requested availability zone is not available")
		}
	}
	if err := s.resolveVolumeImages(r, c); err != nil {
		return nil, err
	}
	if err := s.resolveGlanceImage(r, c); err != nil {
		return nil, err
	}
	return c, nil
}

// refID takes the id out of a reference that may be a URL (Nova accepts
// "http://host/v2.1/flavors/1" as well as "1").
func refID(ref string) string {
	if strings.Contains(ref, "://") {
		ref = strings.TrimRight(ref, "/")
		if i := strings.LastIndexByte(ref, '/'); i >= 0 {
			return ref[i+1:]
		}
	}
	return ref
}

func (s *Service) resolveFlavor(r *core.Request, fields map[string]json.RawMessage, c *createRequest) error {
	raw, ok := fields["flavorRef"]
	if !ok {
		return core.BadRequest("Invalid input for field/attribute server. 'flavorRef' is a required property.")
	}
	var ref string
	var n json.Number
	switch {
	case json.Unmarshal(raw, &ref) == nil:
	case json.Unmarshal(raw, &n) == nil:
		ref = n.String()
	default:
		return core.BadRequest("Invalid input for field/attribute flavorRef. Value: %s. It is not of type 'string', 'integer'.", raw)
	}
	ref = refID(ref)
	if ref == "" {
		return core.BadRequest("Invalid input for field/attribute flavorRef: it must not be empty.")
	}
	f, ok, err := s.flavors.FindFlavor(r.Context(), r, ref)
	if err != nil {
		return err
	}
	if !ok {
		return core.BadRequest("Flavor %s could not be found.", ref)
	}
	c.flavor = flavors.ToCatalog(f)
	return nil
}

func (s *Service) resolveImage(fields map[string]json.RawMessage, c *createRequest) error {
	ref, err := core.OptionalString(fields, "imageRef", 2048)
	if err != nil {
		return err
	}
	ref = refID(ref)
	if ref == "" {
		return core.BadRequest("Missing imageRef attribute: ingot boots from images only.")
	}
	if s.Cfg.Images != nil {
		c.glanceRef = ref
		return nil
	}
	img, ok := s.Cfg.Catalog.Image(ref)
	if !ok {
		return core.BadRequest("Image %s could not be found.", ref)
	}
	c.image = img
	return nil
}

// resolveNetworks maps the networks member to network ids: a list of
// {"uuid": …}, "auto" (the first configured network), "none" (no network).
// Omitted (or null) is "auto": below 2.37 the OpenStack CLI omits networks
// when no --network is given, and Nova then attaches the networks available
// to the project. From 2.37 Nova requires the member; ingot still reads an
// omitted one as "auto" (SDK and gophercloud users often leave it out), a
// deliberate leniency documented in docs/clients.md.
func (s *Service) resolveNetworks(raw json.RawMessage) ([]string, error) {
	if raw == nil || string(raw) == "null" {
		return s.autoNetworks(), nil
	}
	var word string
	if json.Unmarshal(raw, &word) == nil {
		switch word {
		case "none":
			return nil, nil
		case "auto":
			return s.autoNetworks(), nil
		}
		return nil, core.BadRequest("Invalid input for field/attribute networks. Value: %s. It must be a list, \"auto\" or \"none\".", raw)
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, core.BadRequest("Invalid input for field/attribute networks. Value: %s. It must be a list of objects, \"auto\" or \"none\".", raw)
	}
	var ids []string
	for _, item := range list {
		if item == nil {
			return nil, core.BadRequest("Invalid input for field/attribute networks: each entry must be an object.")
		}
		for k := range item {
			switch k {
			case "uuid", "tag":
			case "port":
				return nil, core.BadRequest("Pre-created ports are not supported yet: request a network by uuid.")
			case "fixed_ip":
				return nil, core.BadRequest("Fixed IP requests are not supported yet: addresses are allocated from the network's range.")
			default:
				return nil, core.BadRequest("Invalid input for field/attribute networks. Additional properties are not allowed ('%s' was unexpected).", k)
			}
		}
		id, err := core.OptionalString(item, "uuid", 36)
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, core.BadRequest("Invalid input for field/attribute networks: each entry needs a uuid.")
		}
		if !core.IsUUID(id) {
			return nil, core.BadRequest("Bad networks format: network uuid is not in proper format (%s)", id)
		}
		n, ok := s.Cfg.Networks.Lookup(id)
		if !ok || !strings.EqualFold(n.ID, id) {
			return nil, core.BadRequest("Network %s could not be found.", id)
		}
		if slices.Contains(ids, n.ID) {
			return nil, core.BadRequest("Network %s is requested twice; ingot allocates one port per network.", n.ID)
		}
		ids = append(ids, n.ID)
	}
	return ids, nil
}

// autoNetworks is what "auto" gets: the first configured network, or none
// when no network is configured.
func (s *Service) autoNetworks() []string {
	if len(s.Cfg.Networks) == 0 {
		return nil
	}
	return []string{s.Cfg.Networks[0].ID}
}
