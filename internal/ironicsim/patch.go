package ironicsim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// patchOp is one JSON-patch operation as Ironic accepts it (add, replace,
// remove; 'test', 'move' and 'copy' are refused by its schema).
type patchOp struct {
	Op       string
	Path     string
	Value    any
	HasValue bool
}

var patchPathRe = regexp.MustCompile(`^(/[\w-]+)+$`)

// parsePatch validates a PATCH body with Ironic's patch schema and returns
// its operations, or the 400 "Schema error for patch: …" Ironic gives.
func parsePatch(body []byte) ([]patchOp, *apiErr) {
	var raw any
	if err := json.Unmarshal(body, &raw); err != nil || len(body) == 0 {
		return nil, badRequest("Schema error for patch: %s is not of type 'array'", pyRepr(raw))
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, badRequest("Schema error for patch: %s is not of type 'array'", pyRepr(raw))
	}
	ops := make([]patchOp, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, badRequest("Schema error for patch: %s is not of type 'object'", pyRepr(item))
		}
		for k := range m {
			if k != "op" && k != "path" && k != "value" {
				return nil, badRequest("Schema error for patch: Additional properties are not allowed ('%s' was unexpected)", k)
			}
		}
		opv, hasOp := m["op"]
		if !hasOp {
			return nil, badRequest("Schema error for patch: 'op' is a required property")
		}
		pathv, hasPath := m["path"]
		if !hasPath {
			return nil, badRequest("Schema error for patch: 'path' is a required property")
		}
		path, ok := pathv.(string)
		if !ok {
			return nil, badRequest("Schema error for patch: %s is not of type 'string'", pyRepr(pathv))
		}
		op, ok := opv.(string)
		if !ok {
			return nil, badRequest("Schema error for patch: %s is not of type 'string'", pyRepr(opv))
		}
		if op != "add" && op != "replace" && op != "remove" {
			return nil, badRequest("Schema error for patch: '%s' is not one of ['add', 'replace', 'remove']", op)
		}
		if !patchPathRe.MatchString(path) {
			return nil, badRequest("Schema error for patch: '%s' does not match '^(/[\\\\w-]+)+$'", path)
		}
		v, has := m["value"]
		ops = append(ops, patchOp{Op: op, Path: path, Value: v, HasValue: has})
	}
	return ops, nil
}

// repr renders the operation as Python's repr of the dict (for PatchError).
func (p patchOp) repr() string {
	s := "{'op': '" + p.Op + "', 'path': '" + p.Path + "'"
	if p.HasValue {
		s += ", 'value': " + pyRepr(p.Value)
	}
	return s + "}"
}

// root returns the first path element ("instance_info" for /instance_info/x).
func (p patchOp) root() string {
	return strings.SplitN(strings.TrimPrefix(p.Path, "/"), "/", 2)[0]
}

// patchValues returns the values of add/replace ops on exactly path
// (get_patch_values).
func patchValues(ops []patchOp, path string) []any {
	var out []any
	for _, p := range ops {
		if p.Path == path && p.Op != "remove" {
			out = append(out, p.Value)
		}
	}
	return out
}

// applyPatch applies ops to doc one at a time, with python-jsonpatch's error
// texts wrapped in Ironic's PatchError.
func applyPatch(doc map[string]any, ops []patchOp) *apiErr {
	for _, p := range ops {
		if p.Op == "add" && strings.Count(p.Path, "/") == 1 {
			if _, ok := doc[p.root()]; !ok {
				return badRequest("Adding a new attribute (%s) to the root of the resource is not allowed", p.Path)
			}
		}
	}
	for _, p := range ops {
		if reason := applyOp(doc, p); reason != "" {
			return badRequest("Couldn't apply patch '%s'. Reason: %s", p.repr(), reason)
		}
	}
	return nil
}

func applyOp(doc map[string]any, p patchOp) string {
	parts := strings.Split(strings.TrimPrefix(p.Path, "/"), "/")
	var parent any = doc
	for _, part := range parts[:len(parts)-1] {
		switch c := parent.(type) {
		case map[string]any:
			next, ok := c[part]
			if !ok {
				return fmt.Sprintf("member '%s' not found in %s", part, pyRepr(c))
			}
			parent = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return fmt.Sprintf("index '%s' is out of bounds", part)
			}
			parent = c[i]
		default:
			return fmt.Sprintf("member '%s' not found in %s", part, pyRepr(c))
		}
	}
	last := parts[len(parts)-1]
	m, ok := parent.(map[string]any)
	if !ok {
		// Lists below the root are not patchable in the simulator.
		return fmt.Sprintf("can't %s a non-existent object '%s'", p.Op, last)
	}
	value := cloneValue(p.Value)
	switch p.Op {
	case "add":
		if !p.HasValue {
			return "The operation does not contain a 'value' member"
		}
		m[last] = value
	case "replace":
		if !p.HasValue {
			return "The operation does not contain a 'value' member"
		}
		if _, ok := m[last]; !ok {
			return fmt.Sprintf("can't replace a non-existent object '%s'", last)
		}
		m[last] = value
	case "remove":
		if _, ok := m[last]; !ok {
			return fmt.Sprintf("can't remove a non-existent object '%s'", last)
		}
		delete(m, last)
	}
	return ""
}
