package core

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Version is a compute API microversion 2.minor.
type Version struct{ minor int }

const (
	minMinor = 1
	// maxMinor is 92 because OSC's `2.latest` is replaced client-side by
	// novaclient's own maximum, 2.92, and sent literally (docs/clients.md). 2.91 and
	// 2.92 change only unshelve and keypair import, which ingot does not serve.
	maxMinor = 92
)

var (
	minVersion = Version{minMinor}
	maxVersion = Version{maxMinor}
)

func (v Version) String() string { return fmt.Sprintf("2.%d", v.minor) }

// AtLeast reports whether v >= 2.minor.
func (v Version) AtLeast(minor int) bool { return v.minor >= minor }

// headerVersion returns the requested microversion string: the compute entry
// of OpenStack-API-Version (preferred, as Nova does), else
// X-OpenStack-Nova-API-Version, else "" (meaning the minimum).
func headerVersion(h http.Header) string {
	for _, line := range h.Values("OpenStack-API-Version") {
		for _, item := range strings.Split(line, ",") {
			fields := strings.Fields(item)
			if len(fields) == 2 && strings.EqualFold(fields[0], "compute") {
				return fields[1]
			}
		}
	}
	return strings.TrimSpace(h.Get("X-OpenStack-Nova-API-Version"))
}

// parseVersion resolves a requested microversion. It fails with a
// Nova-shaped 400 for a malformed string and 406 outside 2.1–2.92.
func parseVersion(s string) (Version, error) {
	if s == "" {
		return minVersion, nil
	}
	if strings.EqualFold(s, "latest") {
		return maxVersion, nil
	}
	major, minorStr, ok := strings.Cut(s, ".")
	minor, err := strconv.Atoi(minorStr)
	if !ok || err != nil || minor < 0 || strings.HasPrefix(minorStr, "+") {
		return Version{}, BadRequest("API Version String %s is of invalid format. Must be of format MajorNum.MinorNum.", s)
	}
	if _, err := strconv.Atoi(major); err != nil {
		return Version{}, BadRequest("API Version String %s is of invalid format. Must be of format MajorNum.MinorNum.", s)
	}
	if major != "2" || minor < minMinor || minor > maxMinor {
		return Version{}, &APIError{Status: http.StatusNotAcceptable,
			Message: fmt.Sprintf("Version %s is not supported by the API. Minimum is %s and maximum is %s.", s, minVersion, maxVersion)}
	}
	return Version{minor}, nil
}

// SetVersionHeaders announces the microversion used to answer, as Nova does.
func SetVersionHeaders(h http.Header, v Version) {
	h.Set("OpenStack-API-Version", "compute "+v.String())
	h.Set("X-OpenStack-Nova-API-Version", v.String())
	h.Add("Vary", "OpenStack-API-Version")
	h.Add("Vary", "X-OpenStack-Nova-API-Version")
}

// RequestedVersion is the compute microversion the request names, and
// whether it names one (routes that serve other services' shapes too tell
// a compute client by it).
func RequestedVersion(h http.Header) (Version, bool, error) {
	s := headerVersion(h)
	v, err := parseVersion(s)
	return v, s != "", err
}
