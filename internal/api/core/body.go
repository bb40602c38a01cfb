package core

import (
	"bytes"
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
)

// EmptyValue accepts null, "", [] and {}.
func EmptyValue(raw json.RawMessage) bool {
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

// HostnameRE is what a host or hostname must look like.
var HostnameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// ReadJSONObject reads the body into a map of raw members, failing with a
// Nova-shaped 400 (or 413) for anything that is not one JSON object.
func ReadJSONObject(r *http.Request) (map[string]json.RawMessage, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &APIError{Status: http.StatusRequestEntityTooLarge,
				Message: fmt.Sprintf("Request is too large: the limit is %d bytes.", tooBig.Limit)}
		}
		return nil, BadRequest("could not read the request body: %v", err)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, BadRequest("The request body is empty; a JSON object is required.")
	}
	if body[0] != '{' {
		return nil, BadRequest("The request body must be a JSON object.")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, BadRequest("Malformed request body: %v", err)
	}
	return obj, nil
}

// RequiredString reads fields[key]: a string of 1 to maxLen characters.
func RequiredString(fields map[string]json.RawMessage, key string, maxLen int) (string, error) {
	if _, ok := fields[key]; !ok {
		return "", BadRequest("Invalid input for field/attribute server. '%s' is a required property.", key)
	}
	v, err := OptionalString(fields, key, maxLen)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", BadRequest("Invalid input for field/attribute %s: it must not be empty.", key)
	}
	return v, nil
}

// OptionalString reads a string member ("" when absent or null).
func OptionalString(fields map[string]json.RawMessage, key string, maxLen int) (string, error) {
	raw, ok := fields[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'string'.", key, raw)
	}
	if utf8.RuneCountInString(v) > maxLen {
		return "", BadRequest("Invalid input for field/attribute %s: it is longer than %d characters.", key, maxLen)
	}
	return v, nil
}

// IsUUID reports whether s is a UUID in the canonical 8-4-4-4-12 form (any
// case). Names and other strings in an id position are answered 404 or 400.
func IsUUID(s string) bool {
	return len(s) == 36 && uuid.Validate(s) == nil
}

// CheckName refuses what Nova's name format refuses: control characters,
// and leading or trailing whitespace (or nothing but whitespace).
func CheckName(field, v string) error {
	if HasControl(v) {
		return BadRequest("Invalid input for field/attribute %s: it must not contain control characters.", field)
	}
	if strings.TrimSpace(v) == "" {
		return BadRequest("Invalid input for field/attribute %s: it must contain a non-whitespace character.", field)
	}
	if strings.TrimSpace(v) != v {
		return BadRequest("Invalid input for field/attribute %s. Value: %s. It must not begin or end with whitespace.", field, v)
	}
	return nil
}

// HasControl reports control characters (C0, DEL, C1) and invalid UTF-8.
func HasControl(v string) bool {
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
