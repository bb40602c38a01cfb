package api

import (
	"net/http"
	"strconv"

	"github.com/ingot-dev/ingot/internal/policy"
)

// The small routes a Nova client (Tempest among them) expects of any
// compute API: a server's addresses on one network, the migrations list
// (empty: bare metal does not migrate), and the v2.0 version document.

func (s *server) conformanceRoutes() {
	s.compute("GET /v2.1/servers/{id}/ips/{network}", s.serverIPsOn)
	s.compute("GET /v2.1/os-migrations", s.listMigrations)
	s.public("GET /v2", s.legacyVersionDoc)
	s.public("GET /v2/{$}", s.legacyVersionDoc)
}

// basicAddresses is a server's addresses as the ips routes show them: addr
// and version only (no OS-EXT-IPS members there, in Nova either).
func (rd *renderer) basicAddresses(ports []portAddr) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, p := range ports {
		out[p.network] = append(out[p.network], map[string]any{"addr": p.addr, "version": p.version})
	}
	return out
}

// portAddr is one address of a server, by network name.
type portAddr struct {
	network, addr string
	version       int
}

func (s *server) serverAddrs(r *request, id, rule string) ([]portAddr, error) {
	sv, err := s.visibleServer(r, id, rule)
	if err != nil {
		return nil, err
	}
	ports, err := s.cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return nil, err
	}
	var out []portAddr
	for name, list := range s.renderer(r).addresses(ports) {
		for _, a := range list {
			out = append(out, portAddr{network: name, addr: a.Addr, version: a.Version})
		}
	}
	return out, nil
}

// serverIPsOn answers GET /servers/{id}/ips/{network}: {network: [...]},
// 404 when the server has no address on that network (by name, as Nova).
func (s *server) serverIPsOn(w http.ResponseWriter, r *request) error {
	addrs, err := s.serverAddrs(r, r.PathValue("id"), policy.IPsShow)
	if err != nil {
		return err
	}
	network := r.PathValue("network")
	var on []portAddr
	for _, a := range addrs {
		if a.network == network {
			on = append(on, a)
		}
	}
	if len(on) == 0 {
		return notFound("Instance is not a member of specified network")
	}
	writeJSON(w, http.StatusOK, s.renderer(r).basicAddresses(on))
	return nil
}

// listMigrations answers GET /os-migrations: always empty (a bare-metal
// server neither resizes nor migrates), with Nova's query validation: from
// 2.59 limit, marker (which can name no migration: 400), changes-since, and
// changes-before from 2.66.
func (s *server) listMigrations(w http.ResponseWriter, r *request) error {
	if err := r.authorize(policy.MigrationsIndex, r.own()); err != nil {
		return err
	}
	q := r.URL.Query()
	if r.mv.atLeast(59) {
		if l := q.Get("limit"); q.Has("limit") {
			if n, err := strconv.Atoi(l); err != nil || n < 0 {
				return badRequest("Invalid input for query parameters limit. Value: %s. It must be a non-negative integer.", l)
			}
		}
		for _, key := range []string{"changes-since", "changes-before"} {
			if key == "changes-before" && !r.mv.atLeast(66) {
				continue
			}
			if q.Has(key) {
				if _, err := parseISOTime(key, q.Get(key)); err != nil {
					return err
				}
			}
		}
		if m := q.Get("marker"); q.Has("marker") {
			return badRequest("Marker %s could not be found.", m)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"migrations": []any{}})
	return nil
}

// legacyVersion is the v2.0 entry Nova lists first: the legacy API, which
// Nova serves at /v2 (ingot answers its version document only; every
// client uses v2.1 with microversions).
func legacyVersion(r *http.Request) versionObject {
	return versionObject{ID: "v2.0", Status: "SUPPORTED", Version: "", MinVersion: "",
		Updated: "2011-01-21T11:33:21Z", Links: []link{{Rel: "self", Href: baseURL(r) + "/v2/"}}}
}

// legacyVersionDoc answers GET /v2 and /v2/ (no auth), the document the
// v2.0 entry's self link names.
func (s *server) legacyVersionDoc(w http.ResponseWriter, r *request) error {
	v := legacyVersion(r.Request)
	v.Links = append(v.Links, link{Rel: "describedby", Type: "text/html", Href: "http://docs.openstack.org/"})
	v.MediaTypes = []mediaType{{Base: "application/json", Type: "application/vnd.openstack.compute+json;version=2"}}
	writeJSON(w, http.StatusOK, map[string]any{"version": v})
	return nil
}
