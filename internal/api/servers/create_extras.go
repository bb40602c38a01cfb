package servers

import (
	"crypto/rand"
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// maxMultiCreate caps max_count: Nova has no cap but the quota; ingot's
// default quota is unlimited, and one request should not record more servers
// than a listing page shows.
const maxMultiCreate = core.MaxPage

// multiCreate is the part of a create body that makes several servers, and
// the members that go with it: min_count, max_count, return_reservation_id.
type multiCreate struct {
	minCount, maxCount int
	returnReservation  bool
}

// parseMultiCreate reads min_count and max_count (integers ≥ 1, or strings of
// digits, as Nova's schema: a missing max_count is min_count) and
// return_reservation_id (a Nova boolean).
func parseMultiCreate(fields map[string]json.RawMessage) (multiCreate, error) {
	m := multiCreate{minCount: 1, maxCount: 1}
	if raw, ok := fields["min_count"]; ok {
		n, err := parseCount("min_count", raw)
		if err != nil {
			return m, err
		}
		m.minCount, m.maxCount = n, n // max_count defaults to min_count
	}
	if raw, ok := fields["max_count"]; ok {
		n, err := parseCount("max_count", raw)
		if err != nil {
			return m, err
		}
		m.maxCount = n
	}
	if m.minCount > m.maxCount {
		return m, core.BadRequest("min_count must be <= max_count")
	}
	if m.maxCount > maxMultiCreate {
		return m, core.BadRequest("Invalid input for field/attribute max_count. Value: %d. ingot creates at most %d servers per request.", m.maxCount, maxMultiCreate)
	}
	if raw, ok := fields["return_reservation_id"]; ok {
		b, valid := parseNovaBool(raw)
		if !valid {
			return m, core.BadRequest("Invalid input for field/attribute return_reservation_id. Value: %s. It is not a boolean.", raw)
		}
		m.returnReservation = b
	}
	return m, nil
}

// parseCount is one of min_count/max_count.
func parseCount(key string, raw json.RawMessage) (int, error) {
	var str string
	var n json.Number
	switch {
	case json.Unmarshal(raw, &n) == nil:
		str = n.String()
	case json.Unmarshal(raw, &str) == nil:
	default:
		return 0, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'integer', 'string'.", key, raw)
	}
	v, err := strconv.Atoi(str)
	if err != nil || strings.TrimLeft(str, "0123456789") != "" || str == "" {
		return 0, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not an integer.", key, raw)
	}
	if v < 1 {
		return 0, core.BadRequest("Invalid input for field/attribute %s. Value: %s. %d is less than the minimum of 1", key, raw, v)
	}
	return v, nil
}

// parseNovaBool reads Nova's boolean parameter: true/false, or one of the
// strings its schema accepts.
func parseNovaBool(raw json.RawMessage) (value, ok bool) {
	if json.Unmarshal(raw, &value) == nil {
		return value, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false, false
	}
	switch s {
	case "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes":
		return true, true
	case "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no":
		return false, true
	}
	return false, false
}

// parseDiskConfig reads OS-DCF:diskConfig, AUTO or MANUAL (set says the
// member was there), at create, rebuild and update alike.
func parseDiskConfig(fields map[string]json.RawMessage) (dc string, set bool, err error) {
	raw, ok := fields["OS-DCF:diskConfig"]
	if !ok {
		return "", false, nil
	}
	if json.Unmarshal(raw, &dc) != nil || (dc != "AUTO" && dc != "MANUAL") {
		return "", false, core.BadRequest("Invalid input for field/attribute OS-DCF:diskConfig. Value: %s. It is not one of ['AUTO', 'MANUAL'].", raw)
	}
	return dc, true, nil
}

// diskConfig is the OS-DCF:diskConfig shown: what was asked, else MANUAL
// (what ingot showed before it kept it).
func diskConfig(dc string) string {
	if dc == "" {
		return "MANUAL"
	}
	return dc
}

// parseAccessIP reads accessIPv4 or accessIPv6 (a string of that family;
// null or "" is none; set says the member was there) in its canonical
// form, as Nova stores it (netaddr's: "::babe:dc0c:1602" for
// "0000:0000:0000:0000:0000:babe:220.12.22.2").
func parseAccessIP(fields map[string]json.RawMessage, key string, v6 bool) (ip string, set bool, err error) {
	raw, ok := fields[key]
	if !ok {
		return "", false, nil
	}
	if string(raw) == "null" {
		return "", true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'string'.", key, raw)
	}
	if s == "" {
		return "", true, nil // what ingot showed before it kept them: none
	}
	family := "ipv4"
	if v6 {
		family = "ipv6"
	}
	a, perr := netip.ParseAddr(s)
	if perr != nil || a.Zone() != "" || (v6 && !a.Is6()) || (!v6 && !a.Is4()) {
		return "", false, core.BadRequest("Invalid input for field/attribute %s. Value: %s. '%s' is not a '%s'", key, s, s, family)
	}
	return a.String(), true, nil
}

// parseAdminPass reads adminPass: a string (an empty one is kept empty, as
// Nova does); absent is nil.
func parseAdminPass(fields map[string]json.RawMessage, key string) (*string, error) {
	raw, ok := fields[key]
	if !ok {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'string'.", key, raw)
	}
	return &s, nil
}

// reservationChars are the characters of Nova's generated ids
// (utils.generate_uid).
const reservationChars = "0123456789abcdefghijklmnopqrstuvwxyz"

// newReservationID is a reservation id in Nova's form: "r-" and 8 random
// characters.
func newReservationID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24)
	for i := range b {
		b[i] = reservationChars[int(b[i])%len(reservationChars)]
	}
	return "r-" + string(b)
}

// multiName is the display name of the i-th (0-based) of n servers created
// together: Nova's multi_instance_display_name_template default,
// "%(name)s-%(count)d", when n > 1; the name itself otherwise.
func multiName(name string, i, n int) string {
	if n <= 1 {
		return name
	}
	return name + "-" + strconv.Itoa(i+1)
}

// reservationOf is the server's reservation id; servers recorded before
// ingot kept one show one derived from their id.
func reservationOf(sv *lifecycle.Server) string {
	if sv.Spec.ReservationID != "" {
		return sv.Spec.ReservationID
	}
	return "r-" + sv.ID[:min(8, len(sv.ID))]
}
