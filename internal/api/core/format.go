package core

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	AvailabilityZone = "nova"
	// NovaTime is how Nova writes created/updated and fault times.
	NovaTime = "2006-01-02T15:04:05Z"
	// NovaUsecTime is how Nova writes launched_at and action times (no
	// zone; gophercloud parses launched_at with exactly this layout).
	NovaUsecTime = "2006-01-02T15:04:05.000000"
	// HostName is the compute "host" a node-holding server reports: ingot is
	// the one compute service in front of Ironic, as nova-compute is.
	HostName = "ingot"
)

// JSONNull is a present-but-null member for fields only some microversions
// carry (an `any` field with omitempty: nil is absent, jsonNull is null).
var JSONNull = json.RawMessage("null")

// extensionsHeader is the request header that opts in to ingot's extension
// members (ingot:phase, ingot:fault, ingot:attempts on servers,
// ingot:status_reason on volumes). Without it a body carries exactly Nova's
// (or Cinder's) members: strict clients such as Tempest's response schemas
// refuse any other. The ingot CLI and the console send it.
const extensionsHeader = "X-Ingot-Extensions"

// WantsExtensions reports whether the request opted in to the extension members.
func WantsExtensions(r *http.Request) bool {
	v, err := strconv.ParseBool(strings.TrimSpace(r.Header.Get(extensionsHeader)))
	return err == nil && v
}

// FormatTime writes t as Nova writes created and updated times.
func FormatTime(t time.Time) string { return t.UTC().Format(NovaTime) }

// StrPtr is s, or nil (JSON null) for "".
func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// OrNull is s, or a present null for "".
func OrNull(s string) any {
	if s == "" {
		return JSONNull
	}
	return s
}
