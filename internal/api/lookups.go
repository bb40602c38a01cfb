package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// The OpenStack CLI resolves --image through Glance and --network through
// Neutron, and with one endpoint (auth_type none) it sends those calls to
// /v2.1/images… and /v2.1/networks… expecting Glance's and Neutron's bodies,
// not Nova's proxy shapes (docs/clients.md). The same handlers also serve the
// conventional roots /image/ and /network/ for clouds.yaml files that set
// image_endpoint_override / network_endpoint_override, and /v2.1/v2.0/… where
// the network proxy appends its version to the shared endpoint.
func (s *server) lookupRoutes() {
	for _, prefix := range []string{"/v2.1", "/image/v2"} {
		s.plain("GET "+prefix+"/images", ownRule(policy.Images, s.listImages))
		s.plain("GET "+prefix+"/images/{id}", ownRule(policy.Images, s.showImage))
	}
	for _, prefix := range []string{"/v2.1", "/v2.1/v2.0", "/network/v2.0"} {
		s.plain("GET "+prefix+"/networks", ownRule(policy.Networks, s.listNetworks))
		s.plain("GET "+prefix+"/networks/{id}", ownRule(policy.Networks, s.showNetwork))
		s.plain("GET "+prefix+"/ports/{id}", s.showPort)
	}
	imageRoot := func(w http.ResponseWriter, r *request) error {
		writeJSON(w, http.StatusOK, serviceVersions(r.Request, "v2.16", "/image/v2/"))
		return nil
	}
	networkRoot := func(w http.ResponseWriter, r *request) error {
		writeJSON(w, http.StatusOK, serviceVersions(r.Request, "v2.0", "/network/v2.0/"))
		return nil
	}
	s.public("GET /image", imageRoot)
	s.public("GET /image/{$}", imageRoot)
	s.public("GET /network", networkRoot)
	s.public("GET /network/{$}", networkRoot)
}

// imageView is a Glance v2 image.
func (s *server) imageView(img catalog.Image) map[string]any {
	v := map[string]any{
		"id": img.ID, "name": img.Name, "status": "active", "visibility": "public",
		"protected": false, "os_hidden": false, "disk_format": "raw", "container_format": "bare",
		"min_disk": img.MinDisk, "min_ram": 0, "size": nil, "virtual_size": nil,
		"checksum": nil, "os_hash_algo": nil, "os_hash_value": nil,
		"owner": "", "tags": []string{},
		"created_at": s.started, "updated_at": s.started,
		"self": "/v2/images/" + img.ID, "file": "/v2/images/" + img.ID + "/file",
		"schema": "/v2/schemas/image",
	}
	// Glance's checksum is MD5; a longer hex digest is a multihash.
	switch c := img.Checksum; len(c) {
	case 0:
	case 32:
		v["checksum"] = c
	case 64:
		v["os_hash_algo"], v["os_hash_value"] = "sha256", c
	case 128:
		v["os_hash_algo"], v["os_hash_value"] = "sha512", c
	}
	if img.OSDistro != "" {
		v["os_distro"] = img.OSDistro
	}
	return v
}

// showImage answers Glance's GET /v2/images/{id}: a bare object, by id only
// (a name gets 404, and the SDK then lists with ?name=).
func (s *server) showImage(w http.ResponseWriter, r *request) error {
	id := r.PathValue("id")
	for _, img := range s.cfg.Catalog.Images {
		if strings.EqualFold(img.ID, id) {
			writeJSON(w, http.StatusOK, s.imageView(img))
			return nil
		}
	}
	return notFound("No image found with ID %s", id)
}

// listImages answers Glance's list with its name, id and status filters,
// and marker/limit. No "next" link: the catalogue is small, and the SDK asks
// for another page with a marker only when a page came back full.
func (s *server) listImages(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	out := []map[string]any{}
	marker := q.Get("marker")
	seen := marker == ""
	for _, img := range s.cfg.Catalog.Images {
		if !seen {
			seen = strings.EqualFold(img.ID, marker)
			continue
		}
		if (q.Has("name") && img.Name != q.Get("name")) ||
			(q.Has("id") && !strings.EqualFold(img.ID, q.Get("id"))) ||
			(q.Has("status") && q.Get("status") != "active") {
			continue
		}
		out = append(out, s.imageView(img))
	}
	if !seen {
		return badRequest("marker %s not found", marker)
	}
	if q.Has("limit") && limit < len(out) {
		out = out[:limit]
	}
	writeJSON(w, http.StatusOK, map[string]any{"images": out, "first": "/v2/images", "schema": "/v2/schemas/images"})
	return nil
}

// subnetID is a stable id for a network's one subnet (ingot's networks
// have exactly one IPv4 range).
func subnetID(networkID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("ingot:subnet:"+strings.ToLower(networkID))).String()
}

// networkView is a Neutron network.
func networkView(n network.Network) map[string]any {
	mtu := n.MTU
	if mtu == 0 {
		mtu = 1500
	}
	return map[string]any{
		"id": n.ID, "name": n.Name, "status": "ACTIVE", "admin_state_up": true,
		"shared": true, "router:external": false, "subnets": []string{subnetID(n.ID)},
		"mtu": mtu, "project_id": "", "tenant_id": "", "description": "",
		"availability_zones": []string{availabilityZone}, "port_security_enabled": false,
		"tags": []string{}, "provider:network_type": "flat", "ipv4_address_scope": nil,
	}
}

func (s *server) showNetwork(w http.ResponseWriter, r *request) error {
	id := r.PathValue("id")
	for _, n := range s.cfg.Networks {
		if strings.EqualFold(n.ID, id) {
			writeJSON(w, http.StatusOK, map[string]any{"network": networkView(n)})
			return nil
		}
	}
	return notFound("Network %s could not be found.", id)
}

// listNetworks answers Neutron's list with its attribute filters: name,
// id, and every scalar attribute of the body (shared, router:external,
// status, tenant_id, …); a filter may repeat (any value matches), as in
// Neutron. Tempest, for one, asks for shared=False to find a project's
// own networks, of which ingot has none.
func (s *server) listNetworks(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	out := []map[string]any{}
	for _, n := range s.cfg.Networks {
		if q.Has("name") && !containsFold(q["name"], n.Name, false) {
			continue
		}
		if q.Has("id") && !containsFold(q["id"], n.ID, true) {
			continue
		}
		v := networkView(n)
		if !matchesFilters(v, q) {
			continue
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"networks": out})
	return nil
}

// matchesFilters applies Neutron's equality filters on the scalar members
// of v (booleans in any case, "True" as Python writes them); the paging,
// sorting and fields parameters and unknown names do not filter.
func matchesFilters(v map[string]any, q url.Values) bool {
	for key, want := range q {
		if key == "name" || key == "id" {
			continue // matched above (id case-insensitively)
		}
		got, ok := v[key]
		if !ok {
			continue
		}
		var have string
		switch x := got.(type) {
		case string:
			have = x
		case bool:
			have = strconv.FormatBool(x)
		case int:
			have = strconv.Itoa(x)
		default:
			continue // lists and nulls are not filters
		}
		_, isBool := got.(bool)
		if !containsFold(want, have, isBool) {
			return false
		}
	}
	return true
}

func containsFold(list []string, v string, fold bool) bool {
	for _, x := range list {
		if x == v || (fold && strings.EqualFold(x, v)) {
			return true
		}
	}
	return false
}

// showPort answers Neutron's GET /v2.0/ports/{id} from the IPAM's ports.
func (s *server) showPort(w http.ResponseWriter, r *request) error {
	id := r.PathValue("id")
	if !isUUID(id) {
		return notFound("Port %s could not be found.", id)
	}
	p, err := s.cfg.Store.GetPort(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("Port %s could not be found.", id)
	}
	if err != nil {
		return fmt.Errorf("get port %s: %w", id, err)
	}
	if ok, err := s.portsVisible(r, p.ServerID); err != nil {
		return err
	} else if !ok {
		return notFound("Port %s could not be found.", id)
	}
	writeJSON(w, http.StatusOK, map[string]any{"port": portView(p)})
	return nil
}

// portStatus is ACTIVE once the port's VIF is attached to a node.
func portStatus(p store.Port) string {
	if p.VIFNode != "" {
		return "ACTIVE"
	}
	return "DOWN"
}

// portView is a Neutron port.
func portView(p store.Port) map[string]any {
	return map[string]any{
		"id": p.ID, "name": "", "network_id": p.NetworkID, "mac_address": p.MAC,
		"fixed_ips":    []map[string]string{{"subnet_id": subnetID(p.NetworkID), "ip_address": p.IP}},
		"device_id":    p.ServerID,
		"device_owner": "compute:" + availabilityZone,
		"status":       portStatus(p), "admin_state_up": true,
		"binding:host_id": p.VIFNode, "binding:vnic_type": "baremetal",
		"project_id": "", "tenant_id": "", "description": "",
		"security_groups": []string{}, "tags": []string{},
		"created_at":      p.CreatedAt.UTC().Format(novaTime),
		"revision_number": 1,
	}
}
