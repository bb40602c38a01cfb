package ironicsim

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Microversions served (Ironic 21.4).
const (
	minMinor = 1
	maxMinor = 82
)

const (
	hdrVersion    = "X-OpenStack-Ironic-API-Version"
	hdrMinVersion = "X-OpenStack-Ironic-API-Minimum-Version"
	hdrMaxVersion = "X-OpenStack-Ironic-API-Maximum-Version"
)

// rctx is one Ironic API request.
type rctx struct {
	w      http.ResponseWriter
	r      *http.Request
	ver    int // requested minor version
	base   string
	params map[string]string
	query  url.Values
}

// route is one Ironic API operation; tmpl names it in the counters.
type route struct {
	method string
	tmpl   string
	segs   []string
	h      func(s *Sim, c *rctx)
}

func mkroute(method, tmpl string, h func(s *Sim, c *rctx)) route {
	return route{method: method, tmpl: tmpl, segs: strings.Split(strings.Trim(tmpl, "/"), "/"), h: h}
}

// routes in matching order: literal segments before parameters.
var routes = []route{
	mkroute("GET", "/v1", (*Sim).handleV1),
	mkroute("GET", "/v1/nodes", (*Sim).handleListNodes),
	mkroute("POST", "/v1/nodes", (*Sim).handleCreateNode),
	mkroute("GET", "/v1/nodes/detail", (*Sim).handleListNodesDetail),
	mkroute("GET", "/v1/nodes/{node}", (*Sim).handleGetNode),
	mkroute("PATCH", "/v1/nodes/{node}", (*Sim).handlePatchNode),
	mkroute("DELETE", "/v1/nodes/{node}", (*Sim).handleDeleteNode),
	mkroute("GET", "/v1/nodes/{node}/states", (*Sim).handleGetStates),
	mkroute("PUT", "/v1/nodes/{node}/states/provision", (*Sim).handleProvision),
	mkroute("PUT", "/v1/nodes/{node}/states/power", (*Sim).handlePower),
	mkroute("PUT", "/v1/nodes/{node}/maintenance", (*Sim).handleSetMaintenance),
	mkroute("DELETE", "/v1/nodes/{node}/maintenance", (*Sim).handleUnsetMaintenance),
	mkroute("GET", "/v1/nodes/{node}/traits", (*Sim).handleGetTraits),
	mkroute("PUT", "/v1/nodes/{node}/traits", (*Sim).handlePutTraits),
	mkroute("DELETE", "/v1/nodes/{node}/traits", (*Sim).handleDeleteTraits),
	mkroute("PUT", "/v1/nodes/{node}/traits/{trait}", (*Sim).handlePutTraits),
	mkroute("DELETE", "/v1/nodes/{node}/traits/{trait}", (*Sim).handleDeleteTraits),
	mkroute("GET", "/v1/nodes/{node}/vifs", (*Sim).handleListVIFs),
	mkroute("POST", "/v1/nodes/{node}/vifs", (*Sim).handleAttachVIF),
	mkroute("DELETE", "/v1/nodes/{node}/vifs/{vif}", (*Sim).handleDetachVIF),
	mkroute("GET", "/v1/nodes/{node}/ports", (*Sim).handleListNodePorts),
	mkroute("GET", "/v1/nodes/{node}/volume/connectors", (*Sim).handleListNodeConnectors),
	mkroute("GET", "/v1/nodes/{node}/volume/targets", (*Sim).handleListNodeTargets),
	mkroute("GET", "/v1/nodes/{node}/{field}", (*Sim).handleGetNodeField),
	mkroute("POST", "/v1/nodes/{node}", (*Sim).handlePostNodeIdent),
	mkroute("DELETE", "/v1/nodes", (*Sim).handleDeleteNodes),
	mkroute("GET", "/v1/ports", (*Sim).handleListPorts),
	mkroute("POST", "/v1/ports", (*Sim).handleCreatePort),
	mkroute("GET", "/v1/ports/detail", (*Sim).handleListPortsDetail),
	mkroute("GET", "/v1/ports/{port}", (*Sim).handleGetPort),
	mkroute("DELETE", "/v1/ports/{port}", (*Sim).handleDeletePort),
	mkroute("GET", "/v1/volume/connectors", (*Sim).handleListConnectors),
	mkroute("POST", "/v1/volume/connectors", (*Sim).handleCreateConnector),
	mkroute("GET", "/v1/volume/connectors/{connector}", (*Sim).handleGetConnector),
	mkroute("PATCH", "/v1/volume/connectors/{connector}", (*Sim).handlePatchConnector),
	mkroute("DELETE", "/v1/volume/connectors/{connector}", (*Sim).handleDeleteConnector),
	mkroute("GET", "/v1/volume/targets", (*Sim).handleListTargets),
	mkroute("POST", "/v1/volume/targets", (*Sim).handleCreateTarget),
	mkroute("GET", "/v1/volume/targets/{target}", (*Sim).handleGetTarget),
	mkroute("PATCH", "/v1/volume/targets/{target}", (*Sim).handlePatchTarget),
	mkroute("DELETE", "/v1/volume/targets/{target}", (*Sim).handleDeleteTarget),
}

// match finds the route for a path; pathFound reports a path that exists
// under another method.
func match(method string, segs []string) (rt *route, params map[string]string, pathFound bool) {
	for i := range routes {
		r := &routes[i]
		if len(r.segs) != len(segs) {
			continue
		}
		var p map[string]string
		ok := true
		for j, want := range r.segs {
			if strings.HasPrefix(want, "{") {
				if p == nil {
					p = map[string]string{}
				}
				p[want[1:len(want)-1]] = segs[j]
				continue
			}
			if want != segs[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if r.method == method {
			return r, p, true
		}
		pathFound = true
	}
	return nil, nil, pathFound
}

func (s *Sim) newHandler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func (s *Sim) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/_sim" || strings.HasPrefix(p, "/_sim/") {
		s.serveAdmin(w, r)
		return
	}
	w.Header().Set("Openstack-Request-Id", "req-"+uuid.NewString())
	if p == "/" || p == "" {
		s.count(r.Method + " /")
		if r.Method != http.MethodGet {
			writeErr(w, routingErr(http.StatusMethodNotAllowed, ""))
			return
		}
		writeJSON(w, http.StatusOK, rootDoc(publicURL(r)))
		return
	}
	segs := strings.Split(strings.Trim(p, "/"), "/")
	// NOTE: Ironic's root controller routes a path without the version
	// element to v1 (/nodes is /v1/nodes).
	if segs[0] != "v1" {
		segs = append([]string{"v1"}, segs...)
	}

	h := w.Header()
	h.Set(hdrMinVersion, "1."+strconv.Itoa(minMinor))
	h.Set(hdrMaxVersion, "1."+strconv.Itoa(maxMinor))
	ver, verr := parseVersion(r.Header.Get(hdrVersion))

	rt, params, pathFound := match(r.Method, segs)
	tmpl := "(unmatched)"
	if rt != nil {
		tmpl = rt.tmpl
	}
	s.count(r.Method + " " + tmpl)
	if verr != nil {
		writeErr(w, verr)
		return
	}
	h.Set(hdrVersion, "1."+strconv.Itoa(ver))
	if rt == nil {
		if pathFound {
			writeErr(w, routingErr(http.StatusMethodNotAllowed, ""))
		} else {
			writeErr(w, routingErr(http.StatusNotFound, ""))
		}
		return
	}
	if s.applyFault(w, r, rt.tmpl, params) {
		return
	}
	c := &rctx{w: w, r: r, ver: ver, base: publicURL(r), params: params, query: r.URL.Query()}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		rt.h(s, c)
		return
	}
	s.serveChange(w, func(w http.ResponseWriter) { c.w = w; rt.h(s, c) })
}

func (s *Sim) count(key string) {
	s.mu.Lock()
	s.counts[key]++
	s.mu.Unlock()
}

// parseVersion reads X-OpenStack-Ironic-API-Version. NOTE: Ironic 21.4 reads
// only this header; OpenStack-API-Version is ignored (no header: 1.1).
func parseVersion(v string) (int, *apiErr) {
	if v == "" {
		return minMinor, nil
	}
	if strings.EqualFold(v, "latest") {
		return maxMinor, nil
	}
	parts := strings.Split(v, ".")
	nums := make([]int, 0, 2)
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			nums = nil
			break
		}
		nums = append(nums, n)
	}
	if len(nums) != 2 {
		return 0, routingErr(http.StatusNotAcceptable, "Invalid value for "+hdrVersion+" header")
	}
	rng := "[1." + strconv.Itoa(minMinor) + ", 1." + strconv.Itoa(maxMinor) + "]"
	vs := strconv.Itoa(nums[0]) + "." + strconv.Itoa(nums[1])
	if nums[0] != 1 {
		return 0, routingErr(http.StatusNotAcceptable, "Mutually exclusive versions requested. Version "+vs+
			" requested but not supported by this service. The supported version range is: "+rng+".")
	}
	if nums[1] < minMinor || nums[1] > maxMinor {
		return 0, routingErr(http.StatusNotAcceptable, "Version "+vs+
			" was requested but the minor version is not supported by this service. The supported version range is: "+rng+".")
	}
	return nums[1], nil
}

// publicURL is Ironic's request.public_url: scheme and host of the request.
func publicURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func link(rel, href string) map[string]any { return map[string]any{"href": href, "rel": rel} }

// links returns Ironic's self and bookmark links for resource/args.
func links(base, resource, args string) []any {
	return []any{
		link("self", base+"/v1/"+resource+"/"+args),
		link("bookmark", base+"/"+resource+"/"+args),
	}
}

func versionDoc(base string) map[string]any {
	return map[string]any{
		"id":          "v1",
		"links":       []any{link("self", base+"/v1/")},
		"status":      "CURRENT",
		"min_version": "1." + strconv.Itoa(minMinor),
		"version":     "1." + strconv.Itoa(maxMinor),
	}
}

func rootDoc(base string) map[string]any {
	return map[string]any{
		"name":            "OpenStack Ironic API",
		"description":     "Ironic is an OpenStack project which enables the provision and management of baremetal machines.",
		"default_version": versionDoc(base),
		"versions":        []any{versionDoc(base)},
	}
}

func (s *Sim) handleV1(c *rctx) {
	res := func(name string) []any { return links(c.base, name, "") }
	doc := map[string]any{
		"id": "v1",
		"links": []any{
			link("self", c.base+"/v1/"),
			map[string]any{"href": "https://docs.openstack.org//ironic/latest/contributor//webapi.html",
				"rel": "describedby", "type": "text/html"},
		},
		"media_types": map[string]any{"base": "application/json",
			"type": "application/vnd.openstack.ironic.v1+json"},
		"chassis": res("chassis"), "nodes": res("nodes"), "ports": res("ports"),
		"drivers": res("drivers"), "version": versionDoc(c.base),
	}
	gated := []struct {
		name string
		min  int
	}{{"portgroups", 23}, {"volume", 32}, {"lookup", 22}, {"heartbeat", 22}, {"conductors", 49},
		{"allocations", 52}, {"events", 54}, {"deploy_templates", 55}, {"shards", 82}}
	for _, g := range gated {
		if c.ver >= g.min {
			doc[g.name] = res(g.name)
		}
	}
	writeJSON(c.w, http.StatusOK, doc)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
