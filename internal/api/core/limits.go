package core

import (
	"net/url"
	"strings"
)

// MaxNameFilter caps the name filter, a regular expression: names are at
// most 255 characters, and a long pattern costs CPU and memory to compile.
const MaxNameFilter = 255

// MaxPage is Nova's default osapi_max_limit: a listing never returns (or
// loads) more servers than this at once.
const MaxPage = 1000

// AllTenants reads all_tenants as Nova does: present and empty, or a true
// word, is on; a word that is not a boolean is a 400.
func AllTenants(q url.Values) (bool, error) {
	if !q.Has("all_tenants") {
		return false, nil
	}
	switch v := strings.ToLower(strings.TrimSpace(q.Get("all_tenants"))); v {
	case "", "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	default:
		return false, BadRequest("Invalid value '%s' for all_tenants", q.Get("all_tenants"))
	}
}
