package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

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
	metadata map[string]string
	userData string
	hostname string
	keyName  string
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
}

// Fields of the server object that ingot accepts only in the form it would
// show anyway (one "default" security group, always a config drive): a
// value ingot could not honour is refused rather than dropped.
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

// emptyValue accepts null, "", [] and {}.
func emptyValue(raw json.RawMessage) bool {
	switch string(bytes.Join(bytes.Fields(raw), nil)) {
	case "null", `""`, "[]", "{}":
		return true
	}
	return false
}

func isOneOf(raw json.RawMessage, values ...string) bool {
	var v string
	return json.Unmarshal(raw, &v) == nil && slices.Contains(values, v)
}

var hostnameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// readJSONObject reads the body into a map of raw members, failing with a
// Nova-shaped 400 (or 413) for anything that is not one JSON object.
func readJSONObject(r *http.Request) (map[string]json.RawMessage, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("Request is too large: the limit is %d bytes.", tooBig.Limit)}
		}
		return nil, badRequest("could not read the request body: %v", err)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, badRequest("The request body is empty; a JSON object is required.")
	}
	if body[0] != '{' {
		return nil, badRequest("The request body must be a JSON object.")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, badRequest("Malformed request body: %v", err)
	}
	return obj, nil
}

// parseCreate validates a create body the way Nova's schema does and
// resolves flavor, image and networks. It writes nothing.
func (s *server) parseCreate(r *request) (*createRequest, error) {
	top, err := readJSONObject(r.Request)
	if err != nil {
		return nil, err
	}
	for k := range top {
		switch k {
		case "server", "os:scheduler_hints", "OS-SCH-HNT:scheduler_hints":
		default:
			return nil, badRequest("Invalid input for field/attribute %s: additional properties are not allowed.", k)
		}
	}
	raw, ok := top["server"]
	if !ok {
		return nil, badRequest("'server' is a required property")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, badRequest("Invalid input for field/attribute server: it must be an object.")
	}
	for k := range fields {
		switch k {
		case "name", "flavorRef", "imageRef", "networks", "metadata", "user_data", "hostname",
			"key_name", "availability_zone":
		case "min_count", "max_count", "return_reservation_id", "adminPass", "accessIPv4", "accessIPv6", "OS-DCF:diskConfig": // create_extras.go
		case "block_device_mapping_v2", "block_device_mapping": // resolveBoot
		case "tags", "description": // parseCreateExtras
		case "personality":
			return nil, badRequest("Personality files are not supported; use user_data.")
		default:
			ok, known := fixedServerFields[k]
			if !known {
				return nil, badRequest("Invalid input for field/attribute server. Additional properties are not allowed ('%s' was unexpected).", k)
			}
			if !ok(fields[k]) {
				return nil, badRequest("Invalid input for field/attribute %s. Value: %s. ingot does not support this value yet.", k, fields[k])
			}
		}
	}
	c := &createRequest{}
	if c.name, err = requiredString(fields, "name", 255); err != nil {
		return nil, err
	}
	if err := checkName("name", c.name); err != nil {
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
	if err := s.resolveBoot(r.Context(), r.ident.ProjectID, fields, c); err != nil {
		return nil, err
	}
	if c.networks, err = s.resolveNetworks(fields["networks"]); err != nil {
		return nil, err
	}
	if c.metadata, err = parseMetadata(fields["metadata"]); err != nil {
		return nil, err
	}
	if c.userData, err = optionalString(fields, "user_data", 65535); err != nil {
		return nil, err
	}
	if c.userData != "" {
		if _, err := base64.StdEncoding.DecodeString(c.userData); err != nil {
			return nil, badRequest("Invalid input for field/attribute user_data: it is not valid base64.")
		}
	}
	if c.hostname, err = optionalString(fields, "hostname", 255); err != nil {
		return nil, err
	}
	if c.hostname != "" && !hostnameRE.MatchString(c.hostname) {
		return nil, badRequest("Invalid input for field/attribute hostname. Value: %s. It must contain only letters, digits, '.', '-' and '_'.", c.hostname)
	}
	if c.keyName, err = optionalString(fields, "key_name", 255); err != nil {
		return nil, err
	}
	if c.keyName != "" {
		kp, err := s.cfg.Store.GetKeypair(r.Context(), r.ident.UserID, c.keyName)
		if errors.Is(err, store.ErrNotFound) {
			return nil, badRequest("Invalid key_name provided.")
		}
		if err != nil {
			return nil, fmt.Errorf("keypair %s: %w", c.keyName, err)
		}
		c.publicKey, c.keyType = kp.PublicKey, kp.Type
	}
	if err := parseCreateExtras(r, fields, c); err != nil {
		return nil, err
	}
	if c.multi.maxCount > 1 && c.hostname != "" {
		return nil, badRequest("Invalid input for field/attribute hostname: a hostname cannot be given when creating more than one server (max_count %d).", c.multi.maxCount)
	}
	if c.multi.maxCount > 1 && len(c.volumes) > 0 {
		return nil, badRequest("A volume can be attached to one server only: block_device_mapping_v2 with max_count %d.", c.multi.maxCount)
	}
	if az, err := optionalString(fields, "availability_zone", 255); err != nil {
		return nil, err
	} else if az != "" {
		// ingot does not place by zone: a zone is accepted only when every
		// compute host is in it (zones.go).
		z, err := s.zones(r)
		if err != nil {
			return nil, err
		}
		if !z.accepts(az) {
			return nil, badRequest("The requested availability zone is not available")
		}
	}
	return c, nil
}

func requiredString(fields map[string]json.RawMessage, key string, maxLen int) (string, error) {
	if _, ok := fields[key]; !ok {
		return "", badRequest("Invalid input for field/attribute server. '%s' is a required property.", key)
	}
	v, err := optionalString(fields, key, maxLen)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", badRequest("Invalid input for field/attribute %s: it must not be empty.", key)
	}
	return v, nil
}

// optionalString reads a string member ("" when absent or null).
func optionalString(fields map[string]json.RawMessage, key string, maxLen int) (string, error) {
	raw, ok := fields[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", badRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'string'.", key, raw)
	}
	if utf8.RuneCountInString(v) > maxLen {
		return "", badRequest("Invalid input for field/attribute %s: it is longer than %d characters.", key, maxLen)
	}
	return v, nil
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

func (s *server) resolveFlavor(r *request, fields map[string]json.RawMessage, c *createRequest) error {
	raw, ok := fields["flavorRef"]
	if !ok {
		return badRequest("Invalid input for field/attribute server. 'flavorRef' is a required property.")
	}
	var ref string
	var n json.Number
	switch {
	case json.Unmarshal(raw, &ref) == nil:
	case json.Unmarshal(raw, &n) == nil:
		ref = n.String()
	default:
		return badRequest("Invalid input for field/attribute flavorRef. Value: %s. It is not of type 'string', 'integer'.", raw)
	}
	ref = refID(ref)
	if ref == "" {
		return badRequest("Invalid input for field/attribute flavorRef: it must not be empty.")
	}
	f, ok, err := s.findFlavor(r.Context(), r, ref)
	if err != nil {
		return err
	}
	if !ok {
		return badRequest("Flavor %s could not be found.", ref)
	}
	c.flavor = toCatalog(f)
	return nil
}

func (s *server) resolveImage(fields map[string]json.RawMessage, c *createRequest) error {
	ref, err := optionalString(fields, "imageRef", 2048)
	if err != nil {
		return err
	}
	ref = refID(ref)
	if ref == "" {
		return badRequest("Missing imageRef attribute: ingot boots from images only.")
	}
	img, ok := s.cfg.Catalog.Image(ref)
	if !ok {
		return badRequest("Image %s could not be found.", ref)
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
func (s *server) resolveNetworks(raw json.RawMessage) ([]string, error) {
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
		return nil, badRequest("Invalid input for field/attribute networks. Value: %s. It must be a list, \"auto\" or \"none\".", raw)
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequest("Invalid input for field/attribute networks. Value: %s. It must be a list of objects, \"auto\" or \"none\".", raw)
	}
	var ids []string
	for _, item := range list {
		if item == nil {
			return nil, badRequest("Invalid input for field/attribute networks: each entry must be an object.")
		}
		for k := range item {
			switch k {
			case "uuid", "tag":
			case "port":
				return nil, badRequest("Pre-created ports are not supported yet: request a network by uuid.")
			case "fixed_ip":
				return nil, badRequest("Fixed IP requests are not supported yet: addresses are allocated from the network's range.")
			default:
				return nil, badRequest("Invalid input for field/attribute networks. Additional properties are not allowed ('%s' was unexpected).", k)
			}
		}
		id, err := optionalString(item, "uuid", 36)
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, badRequest("Invalid input for field/attribute networks: each entry needs a uuid.")
		}
		if !isUUID(id) {
			return nil, badRequest("Bad networks format: network uuid is not in proper format (%s)", id)
		}
		n, ok := s.cfg.Networks.Lookup(id)
		if !ok || !strings.EqualFold(n.ID, id) {
			return nil, badRequest("Network %s could not be found.", id)
		}
		if slices.Contains(ids, n.ID) {
			return nil, badRequest("Network %s is requested twice; ingot allocates one port per network.", n.ID)
		}
		ids = append(ids, n.ID)
	}
	return ids, nil
}

// autoNetworks is what "auto" gets: the first configured network, or none
// when no network is configured.
func (s *server) autoNetworks() []string {
	if len(s.cfg.Networks) == 0 {
		return nil
	}
	return []string{s.cfg.Networks[0].ID}
}

// parseMetadata accepts an object of strings (keys 1–255, values ≤ 255), as Nova does.
func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var md map[string]string
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, badRequest("Invalid input for field/attribute metadata. Value: %s. It must be an object of strings.", raw)
	}
	for k, v := range md {
		if hasControl(k) || hasControl(v) {
			return nil, badRequest("Invalid input for field/attribute metadata: keys and values must not contain control characters.")
		}
		if k == "" || utf8.RuneCountInString(k) > 255 {
			return nil, badRequest("Invalid input for field/attribute metadata: keys must be 1 to 255 characters.")
		}
		if utf8.RuneCountInString(v) > 255 {
			return nil, badRequest("Invalid input for field/attribute metadata: value of %q is longer than 255 characters.", k)
		}
	}
	return md, nil
}

// isUUID reports whether s is a UUID in the canonical 8-4-4-4-12 form (any
// case). Names and other strings in an id position are answered 404 or 400.
func isUUID(s string) bool {
	return len(s) == 36 && uuid.Validate(s) == nil
}

// checkName refuses what Nova's name format refuses: control characters,
// and leading or trailing whitespace (or nothing but whitespace).
func checkName(field, v string) error {
	if hasControl(v) {
		return badRequest("Invalid input for field/attribute %s: it must not contain control characters.", field)
	}
	if strings.TrimSpace(v) == "" {
		return badRequest("Invalid input for field/attribute %s: it must contain a non-whitespace character.", field)
	}
	if strings.TrimSpace(v) != v {
		return badRequest("Invalid input for field/attribute %s. Value: %s. It must not begin or end with whitespace.", field, v)
	}
	return nil
}

// hasControl reports control characters (C0, DEL, C1) and invalid UTF-8.
func hasControl(v string) bool {
	if !utf8.ValidString(v) {
		return true
	}
	for _, c := range v {
		if unicode.IsControl(c) {
			return true
		}
	}
	return false
}
