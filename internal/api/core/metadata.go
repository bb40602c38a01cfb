package core

import (
	"encoding/json"
	"regexp"
	"unicode/utf8"
)

// MetadataBody reads {"<key>": {…}} (metadata or meta), the only member.
func MetadataBody(r *Request, key string) (map[string]string, error) {
	body, err := ReadJSONObject(r.Request)
	if err != nil {
		return nil, err
	}
	for k := range body {
		if k != key {
			return nil, BadRequest("Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	raw, ok := body[key]
	if !ok {
		return nil, BadRequest("'%s' is a required property", key)
	}
	if string(raw) == "null" {
		return nil, BadRequest("Invalid input for field/attribute %s. Value: null. None is not of type 'object'.", key)
	}
	md, err := ParseMetadata(raw)
	if err != nil {
		return nil, err
	}
	if md == nil {
		md = map[string]string{}
	}
	return md, nil
}

// MetaItem reads PUT …/metadata/{key}'s body {"meta": {"<key>": "<value>"}}:
// exactly one item, named as the path's key.
func MetaItem(r *Request) (map[string]string, error) {
	meta, err := MetadataBody(r, "meta")
	if err != nil {
		return nil, err
	}
	if len(meta) != 1 {
		return nil, BadRequest("Invalid input for field/attribute meta. It must have exactly one item.")
	}
	if _, ok := meta[r.PathValue("key")]; !ok {
		return nil, BadRequest("Request body and URI mismatch")
	}
	return meta, nil
}

// MetadataKey is Nova's metadata key pattern.
var MetadataKey = regexp.MustCompile(`^[a-zA-Z0-9-_:. ]{1,255}$`)

// ParseMetadata accepts an object of strings as Nova's parameter_types
// metadata: keys 1–255 of letters, digits and "-_:. ", values ≤ 255 (and,
// stricter than Nova, no control characters in a value).
func ParseMetadata(raw json.RawMessage) (map[string]string, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var md map[string]string
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, BadRequest("Invalid input for field/attribute metadata. Value: %s. It must be an object of strings.", raw)
	}
	for k, v := range md {
		if !MetadataKey.MatchString(k) {
			return nil, BadRequest("Invalid input for field/attribute metadata. Value: %s. Additional properties are not allowed (%q was unexpected): a key is 1 to 255 letters, digits, '-', '_', ':', '.' or ' '.", raw, k)
		}
		if HasControl(v) {
			return nil, BadRequest("Invalid input for field/attribute metadata: values must not contain control characters.")
		}
		if utf8.RuneCountInString(v) > 255 {
			return nil, BadRequest("Invalid input for field/attribute metadata: value of %q is longer than 255 characters.", k)
		}
	}
	return md, nil
}
