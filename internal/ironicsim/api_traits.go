package ironicsim

import (
	"net/http"
	"regexp"
	"sort"
	"unicode/utf8"
)

// The node traits API (Ironic ≥ 1.37): GET, PUT (replace) and DELETE (all)
// /v1/nodes/{node}/traits, PUT and DELETE /v1/nodes/{node}/traits/{trait}.
// Below 1.37 Ironic answers GET with 406, PUT with 405 and DELETE with 404.
// Changing traits does not touch the node's updated_at (they live in their
// own table) and needs the node's lock, like every conductor-side change.

// customTraitRe is Ironic's CUSTOM_TRAIT_PATTERN. NOTE: jsonschema matches
// it with Python's re.search, whose $ also matches before a final newline.
var customTraitRe = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+\n?$`)

// maxTraitsPerNode is the DB layer's MAX_TRAITS_PER_NODE.
const maxTraitsPerNode = 50

const traitsUsage = "A single node trait may be added via PUT /v1/nodes/<node identifier>/traits/<trait> " +
	"with no body, or all node traits may be replaced via PUT /v1/nodes/<node identifier>/traits with " +
	"the list of traits specified in the request body."

// schemaErr is one jsonschema error with what best_match ranks it by.
type schemaErr struct {
	msg  string
	weak bool // anyOf
	// typeMismatch: the instance is not of the schema's type (best_match
	// prefers those).
	typeMismatch bool
}

// traitErrors validates one trait against TRAITS_SCHEMA and returns its
// errors in jsonschema's order (type, minLength, maxLength, anyOf).
func traitErrors(v any) []schemaErr {
	s, ok := v.(string)
	if !ok {
		return []schemaErr{{msg: pyRepr(v) + " is not of type 'string'", typeMismatch: true}}
	}
	var errs []schemaErr
	switch l := utf8.RuneCountInString(s); {
	case l < 1:
		errs = append(errs, schemaErr{msg: pyRepr(s) + " is too short"})
	case l > 255:
		errs = append(errs, schemaErr{msg: pyRepr(s) + " is too long"})
	}
	if !customTraitRe.MatchString(s) && !standardTraits[s] {
		errs = append(errs, schemaErr{weak: true, msg: pyRepr(s) + " is not valid under any of the given schemas. " +
			"Possible root cause: " + pyRepr(s) + " does not match '^CUSTOM_[A-Z0-9_]+$'"})
	}
	return errs
}

// bestMatch picks the error jsonschema's best_match reports: not weak
// first, then a type mismatch, then the first one.
func bestMatch(errs []schemaErr) *schemaErr {
	rank := func(e schemaErr) int {
		r := 0
		if !e.weak {
			r += 2
		}
		if e.typeMismatch {
			r++
		}
		return r
	}
	var best *schemaErr
	for i := range errs {
		if best == nil || rank(errs[i]) > rank(*best) {
			best = &errs[i]
		}
	}
	return best
}

// checkTraitsBody validates a PUT body with the node TRAITS_SCHEMA
// ({"traits": [trait, ...]}, no other key) and returns the traits list,
// or nil when the body has none.
func checkTraitsBody(body map[string]any) ([]any, *apiErr) {
	var extra []string
	for _, k := range sortedKeys(body) {
		if k != "traits" {
			extra = append(extra, "'"+k+"'")
		}
	}
	switch len(extra) {
	case 0:
	case 1:
		return nil, badRequest("Schema error for body: Additional properties are not allowed (%s was unexpected)", extra[0])
	default:
		list := extra[0]
		for _, k := range extra[1:] {
			list += ", " + k
		}
		return nil, badRequest("Schema error for body: Additional properties are not allowed (%s were unexpected)", list)
	}
	v, ok := body["traits"]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badRequest("Schema error for body: %s is not of type 'array'", pyRepr(v))
	}
	var errs []schemaErr
	for _, t := range list {
		errs = append(errs, traitErrors(t)...)
	}
	if e := bestMatch(errs); e != nil {
		return nil, badRequest("Schema error for body: %s", e.msg)
	}
	if list == nil {
		list = []any{}
	}
	return list, nil
}

// errTooManyTraits is the DB layer's InvalidParameterValue; node is
// Ironic's internal node id (the simulator's creation sequence).
func errTooManyTraits(n *node, count int) *apiErr {
	return badRequest("Could not modify traits for node %d as it would exceed the maximum number of traits per node (%d vs. %d)",
		n.seq, count, maxTraitsPerNode)
}

// setTraits stores a set of traits sorted, without duplicates.
func setTraits(n *node, set map[string]bool) {
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	if len(out) == 0 {
		out = nil
	}
	n.Traits = out
}

// handleGetTraits serves GET /v1/nodes/{node}/traits.
func (s *Sim) handleGetTraits(c *rctx) {
	if c.ver < 37 {
		writeErr(c.w, errNotAcceptable())
		return
	}
	if e := checkArgs(c.query); e != nil {
		writeErr(c.w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, e := s.findNode(c, c.params["node"], s.now())
	if e != nil {
		writeErr(c.w, e)
		return
	}
	traits := append([]string{}, n.Traits...)
	sort.Strings(traits)
	writeJSON(c.w, http.StatusOK, map[string]any{"traits": traits})
}

// handlePutTraits serves PUT /v1/nodes/{node}/traits (replace the set) and
// PUT /v1/nodes/{node}/traits/{trait} (add one).
func (s *Sim) handlePutTraits(c *rctx) {
	if c.ver < 37 {
		writeErr(c.w, routingErr(http.StatusMethodNotAllowed, ""))
		return
	}
	if e := checkArgs(c.query); e != nil {
		writeErr(c.w, e)
		return
	}
	trait, single := c.params["trait"]
	if single {
		if e := bestMatch(traitErrors(trait)); e != nil {
			writeErr(c.w, badRequest("Schema error for trait: %s", e.msg))
			return
		}
	}
	body, e := readBody(c)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	list, e := checkTraitsBody(body)
	if e != nil {
		writeErr(c.w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, e := s.findNode(c, c.params["node"], s.now())
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if single == (list != nil) {
		writeErr(c.w, badRequest("%s", traitsUsage))
		return
	}
	// Conductor side: the exclusive lock, then the per-node limit.
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	set := map[string]bool{}
	if single {
		for _, t := range n.Traits {
			set[t] = true
		}
		if !set[trait] && len(set)+1 > maxTraitsPerNode {
			writeErr(c.w, errTooManyTraits(n, len(set)+1))
			return
		}
		set[trait] = true
	} else {
		for _, t := range list {
			set[t.(string)] = true
		}
		if len(set) > maxTraitsPerNode {
			writeErr(c.w, errTooManyTraits(n, len(set)))
			return
		}
	}
	setTraits(n, set)
	if single {
		c.w.Header().Set("Location", c.base+"/v1/nodes/"+c.params["node"]+"/traits/"+trait)
	}
	writeEmpty(c.w, http.StatusNoContent)
}

// handleDeleteTraits serves DELETE /v1/nodes/{node}/traits (all) and
// DELETE /v1/nodes/{node}/traits/{trait} (one; 404 when the node lacks it,
// whatever its form).
func (s *Sim) handleDeleteTraits(c *rctx) {
	if c.ver < 37 {
		writeErr(c.w, clientErr(http.StatusNotFound, "Resource could not be found."))
		return
	}
	// NOTE: keys of a JSON body become arguments of the call.
	body, _ := readBody(c)
	if e := checkArgs(c.query); e != nil {
		writeErr(c.w, e)
		return
	}
	if e := checkBodyArgs(body); e != nil {
		writeErr(c.w, e)
		return
	}
	trait, single := c.params["trait"]
	s.mu.Lock()
	defer s.mu.Unlock()
	n, e := s.findNode(c, c.params["node"], s.now())
	if e != nil {
		writeErr(c.w, e)
		return
	}
	if n.Reservation != "" {
		writeErr(c.w, errNodeLocked(n.UUID, n.Reservation))
		return
	}
	set := map[string]bool{}
	if single {
		for _, t := range n.Traits {
			set[t] = true
		}
		if !set[trait] {
			writeErr(c.w, clientErr(http.StatusNotFound, "Node %s doesn't have a trait '%s'", n.UUID, trait))
			return
		}
		delete(set, trait)
	}
	setTraits(n, set)
	writeEmpty(c.w, http.StatusNoContent)
}
