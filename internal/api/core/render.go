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
	// novaTime is how Nova writes created/updated and fault times.
	NovaTime = "2006-01-02T15:04:05Z"
	// novaUsecTime is how Nova writes launched_at and action times (no
	// zone; gophercloud parses launched_at with exactly this layout).
	NovaUsecTime = "2006-01-02T15:04:05.000000"
	// hostName is the compute "host" a node-holding server reports: ingot is
	// the one compute service in front of Ironic, as nova-compute is.
	HostName = "ingot"
)

// jsonNull is a present-but-null member for fields only some microversions
// carry (an `any` field with omitempty: nil is absent, jsonNull is null).
var JSONNull = json.RawMessage("null")

// extensionsHeader is the request header that opts in to ingot's extension
// members (ingot:phase, ingot:fault, ingot:attempts on servers,
// ingot:status_reason on volumes). Without it a body carries exactly Nova's
// (or Cinder's) members: strict clients such as Tempest's response schemas
// refuse any other. The ingot CLI and the console send it.
const extensionsHeader = "X-Ingot-Extensions"

// wantsExtensions reports whether the request opted in to the extension members.
func WantsExtensions(r *http.Request) bool {
	v, err := strconv.ParseBool(strings.TrimSpace(r.Header.Get(extensionsHeader)))
	return err == nil && v
}

func FormatTime(t time.Time) string { return t.UTC().Format(NovaTime) }

func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func OrNull(s string) any {
	if s == "" {
		return JSONNull
	}
	return s
}
