package servers

import (
	"net/http"
	"strconv"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
)

// The small routes a Nova client (Tempest among them) expects of any
// compute API: a server's addresses on one network, the migrations list
// (empty: bare metal does not migrate), and the v2.0 version document.

func (s *Service) ConformanceRoutes() {
	s.Compute("GET /v2.1/servers/{id}/ips/{network}", s.serverIPsOn)
	s.Compute("GET /v2.1/os-migrations", s.listMigrations)
	s.Compute("POST /v2.1/servers/{id}/remote-consoles", s.createRemoteConsole) // unserved.go
	s.Public("GET /v2", s.LegacyVersionDoc)
	s.Public("GET /v2/{$}", s.LegacyVersionDoc)
}

// basicAddresses is a server's addresses as the ips routes show them: addr
// and version only (no OS-EXT-IPS members there, in Nova either).
func (rd *renderer) basicAddresses(ports []portAddr) map[string][]basicAddress {
	out := map[string][]basicAddress{}
	for _, p := range ports {
		out[p.network] = append(out[p.network], basicAddress{Addr: p.addr, Version: p.version})
	}
	return out
}

// portAddr is one address of a server, by network name.
type portAddr struct {
	network, addr string
	version       int
}

func (s *Service) serverAddrs(r *core.Request, id, rule string) ([]portAddr, error) {
	sv, err := s.visibleServer(r, id, rule)
	if err != nil {
		return nil, err
	}
	ports, err := s.Cfg.Store.Ports(r.Context(), sv.ID)
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
func (s *Service) serverIPsOn(w http.ResponseWriter, r *core.Request) error {
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
		return core.NotFound("Instance is not a member of specified network")
	}
	core.WriteJSON(w, http.StatusOK, s.renderer(r).basicAddresses(on))
	return nil
}

// listMigrations answers GET /os-migrations: always empty (a bare-metal
// server neither resizes nor migrates), with Nova's query validation: from
// 2.59 limit, marker (which can name no migration: 400), changes-since, and
// changes-before from 2.66.
func (s *Service) listMigrations(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.MigrationsIndex, r.Own()); err != nil {
		return err
	}
	q := r.URL.Query()
	if r.MV.AtLeast(mvMigrationsPaging) {
		if l := q.Get("limit"); q.Has("limit") {
			if n, err := strconv.Atoi(l); err != nil || n < 0 {
				return core.BadRequest("Invalid input for query parameters limit. Value: %s. It must be a non-negative integer.", l)
			}
		}
		for _, key := range []string{"changes-since", "changes-before"} {
			if key == "changes-before" && !r.MV.AtLeast(mvChangesBefore) {
				continue
			}
			if q.Has(key) {
				if _, err := parseISOTime(key, q.Get(key)); err != nil {
					return err
				}
			}
		}
		if m := q.Get("marker"); q.Has("marker") {
			return core.BadRequest("Marker %s could not be found.", m)
		}
	}
	core.WriteJSON(w, http.StatusOK, migrationsBody{Migrations: []any{}})
	return nil
}
