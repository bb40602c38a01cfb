package core

import (
	"encoding/json"
	"strings"
)

// BoolValue reads a boolean the way Nova's schema does (true/false, or
// one of its strings); absent or null is false.
func BoolValue(raw json.RawMessage, key string) (bool, error) {
	if raw == nil || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		switch strings.ToLower(strings.TrimSpace(str)) {
		case "true", "1", "yes", "on", "y", "t":
			return true, nil
		case "false", "0", "no", "off", "n", "f":
			return false, nil
		}
	}
	return false, BadRequest("Invalid input for field/attribute %s. Value: %s. It is not a boolean.", key, raw)
}
