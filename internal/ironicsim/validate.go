package ironicsim

import (
	"encoding/json"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

var logicalNameRe = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,255}$`)
var macRe = regexp.MustCompile(`^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$`)

// isUUIDLike follows oslo's is_uuid_like (hyphens, braces and urn: forms).
func isUUIDLike(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil
}

// canonicalUUID returns the lower-case hyphenated form of a UUID-like string.
func canonicalUUID(s string) string {
	u, err := uuid.Parse(s)
	if err != nil {
		return s
	}
	return u.String()
}

func isValidName(s string) bool { return logicalNameRe.MatchString(s) }

func validUUIDOrName(s string) bool { return isUUIDLike(s) || isValidName(s) }

// checkArgs answers 400 "Unexpected arguments: …" for query parameters the
// operation does not take (Ironic's args.validate).
func checkArgs(q url.Values, allowed ...string) *apiErr {
	var extra []string
	for k := range q {
		found := false
		for _, a := range allowed {
			if a == k {
				found = true
				break
			}
		}
		if !found {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return badRequest("Unexpected arguments: %s", strings.Join(extra, ", "))
	}
	return nil
}

// queryBool parses an optional boolean query parameter as oslo's
// bool_from_string(strict=True) does.
func queryBool(q url.Values, name string) (*bool, *apiErr) {
	if _, ok := q[name]; !ok {
		return nil, nil
	}
	v := strings.ToLower(strings.TrimSpace(q.Get(name)))
	switch v {
	case "1", "t", "true", "on", "y", "yes":
		b := true
		return &b, nil
	case "0", "f", "false", "off", "n", "no":
		b := false
		return &b, nil
	}
	return nil, badRequest("Invalid %s: Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
		name, q.Get(name))
}

// boolValue interprets a JSON boolean or boolean string from a body.
func boolValue(name string, v any) (bool, *apiErr) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case string:
		q := url.Values{name: {x}}
		b, err := queryBool(q, name)
		if err != nil {
			return false, err
		}
		return *b, nil
	}
	return false, badRequest("Invalid %s: Unrecognized value '%v', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", name, v)
}

// queryFields parses ?fields=a,b (nil when absent).
func queryFields(q url.Values) []string {
	if _, ok := q["fields"]; !ok {
		return nil
	}
	parts := strings.Split(q.Get("fields"), ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

// queryLimit applies validate_limit: default and maximum 1000, > 0.
func queryLimit(q url.Values) (int, *apiErr) {
	if _, ok := q["limit"]; !ok {
		return maxLimit, nil
	}
	v := q.Get("limit")
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, badRequest("Expected an integer for limit: %s", v)
	}
	if n <= 0 {
		return 0, badRequest("Limit must be positive")
	}
	if n > maxLimit {
		n = maxLimit
	}
	return n, nil
}

// maxLimit is Ironic's [api]max_limit default.
const maxLimit = 1000

// readBody decodes a JSON object body; an empty body is an empty object.
func readBody(c *rctx) (map[string]any, *apiErr) {
	b, err := io.ReadAll(io.LimitReader(c.r.Body, 16<<20))
	if err != nil {
		return nil, badRequest("%s", err.Error())
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, badRequest("The request body is not valid JSON: %s", err.Error())
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest("Schema error for body: %s is not of type 'object'", pyRepr(v))
	}
	return m, nil
}

func readRawBody(c *rctx) []byte {
	b, _ := io.ReadAll(io.LimitReader(c.r.Body, 16<<20))
	return b
}

// jsonType names a JSON value's schema type.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int:
		return "integer"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "unknown"
}

// checkType validates v against a list of schema types, with jsonschema's text.
func checkType(what string, v any, types ...string) *apiErr {
	t := jsonType(v)
	for _, want := range types {
		if want == t || (want == "number" && t == "integer") {
			return nil
		}
	}
	quoted := make([]string, len(types))
	for i, t := range types {
		quoted[i] = "'" + t + "'"
	}
	return badRequest("Schema error for %s: %s is not of type %s", what, pyRepr(v), strings.Join(quoted, ", "))
}
