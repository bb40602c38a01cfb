package lookup

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/ingot-dev/ingot/internal/api/core"
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
func (s *Service) Register() {
	// Over the configured images or Glance (novaglance.go).
	list, show, index, detail, novaShow := s.imageHandlers()
	s.Plain("GET /image/v2/images", core.OwnRule(policy.Images, list))
	s.Plain("GET /image/v2/images/{id}", core.OwnRule(policy.Images, show))
	// The compute root's images are Glance's for the CLI, Nova's proxy for
	// a compute client (novaimages.go).
	s.Plain("GET /v2.1/images", core.OwnRule(policy.Images, s.novaProxy(list, index)))
	s.Plain("GET /v2.1/images/{id}", core.OwnRule(policy.Images, s.novaProxy(show, novaShow)))
	s.Compute("GET /v2.1/images/detail", core.OwnRule(policy.Images, detail))
	s.registerImageMetadata()
	for _, prefix := range []string{"/v2.1", "/v2.1/v2.0", "/network/v2.0"} {
		s.Plain("GET "+prefix+"/networks", core.OwnRule(policy.Networks, s.listNetworks))
		s.Plain("GET "+prefix+"/networks/{id}", core.OwnRule(policy.Networks, s.showNetwork))
		s.Plain("GET "+prefix+"/ports/{id}", s.showPort)
	}
	imageRoot := func(w http.ResponseWriter, r *core.Request) error {
		core.WriteJSON(w, http.StatusOK, serviceVersions(r.Request, "v2.16", "/image/v2/"))
		return nil
	}
	networkRoot := func(w http.ResponseWriter, r *core.Request) error {
		core.WriteJSON(w, http.StatusOK, serviceVersions(r.Request, "v2.0", "/network/v2.0/"))
		return nil
	}
	s.Public("GET /image", imageRoot)
	s.Public("GET /image/{$}", imageRoot)
	s.Public("GET /network", networkRoot)
	s.Public("GET /network/{$}", networkRoot)
}

// imageView is a Glance v2 image.
func (s *Service) imageView(img catalog.Image) imageView {
	v := imageView{ID: img.ID, Name: img.Name, Status: "active", Visibility: "public",
		DiskFormat: "raw", ContainerFormat: "bare", MinDisk: img.MinDisk, Tags: []string{},
		CreatedAt: s.Started, UpdatedAt: s.Started,
		Self: "/v2/images/" + img.ID, File: "/v2/images/" + img.ID + "/file", Schema: "/v2/schemas/image",
		OSDistro: img.OSDistro}
	// Glance's checksum is MD5; a longer hex digest is a multihash.
	switch c := img.Checksum; len(c) {
	case 32:
		v.Checksum = &c
	case 64, 128:
		algo := map[int]string{64: "sha256", 128: "sha512"}[len(c)]
		v.OSHashAlgo, v.OSHashValue = &algo, &c
	}
	return v
}

// imageView is a Glance v2 image (members in byte order, as the map they
// replaced wrote them).
type imageView struct {
	Checksum        *string  `json:"checksum"`
	ContainerFormat string   `json:"container_format"`
	CreatedAt       string   `json:"created_at"`
	DiskFormat      string   `json:"disk_format"`
	File            string   `json:"file"`
	ID              string   `json:"id"`
	MinDisk         int      `json:"min_disk"`
	MinRAM          int      `json:"min_ram"`
	Name            string   `json:"name"`
	OSDistro        string   `json:"os_distro,omitempty"`
	OSHashAlgo      *string  `json:"os_hash_algo"`
	OSHashValue     *string  `json:"os_hash_value"`
	OSHidden        bool     `json:"os_hidden"`
	Owner           string   `json:"owner"`
	Protected       bool     `json:"protected"`
	Schema          string   `json:"schema"`
	Self            string   `json:"self"`
	Size            *int64   `json:"size"`
	Status          string   `json:"status"`
	Tags            []string `json:"tags"`
	UpdatedAt       string   `json:"updated_at"`
	VirtualSize     *int64   `json:"virtual_size"`
	Visibility      string   `json:"visibility"`
}

// showImage answers Glance's GET /v2/images/{id}: a bare object, by id only
// (a name gets 404, and the SDK then lists with ?name=).
func (s *Service) showImage(w http.ResponseWriter, r *core.Request) error {
	id := r.PathValue("id")
	for _, img := range s.Cfg.Catalog.Images {
		if strings.EqualFold(img.ID, id) {
			core.WriteJSON(w, http.StatusOK, s.imageView(img))
			return nil
		}
	}
	return core.NotFound("No image found with ID %s", id)
}

// listImages answers Glance's list with its name, id and status filters,
// and marker/limit. No "next" link: the catalogue is small, and the SDK asks
// for another page with a marker only when a page came back full.
func (s *Service) listImages(w http.ResponseWriter, r *core.Request) error {
	q := r.URL.Query()
	limit, err := core.IntParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	out := []imageView{}
	marker := q.Get("marker")
	seen := marker == ""
	for _, img := range s.Cfg.Catalog.Images {
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
		return core.BadRequest("marker %s not found", marker)
	}
	if q.Has("limit") && limit < len(out) {
		out = out[:limit]
	}
	core.WriteJSON(w, http.StatusOK, struct {
		First  string      `json:"first"`
		Images []imageView `json:"images"`
		Schema string      `json:"schema"`
	}{"/v2/images", out, "/v2/schemas/images"})
	return nil
}

// SubnetID is a stable id for a network's one subnet (ingot's networks
// have exactly one IPv4 range).
func SubnetID(networkID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("ingot:subnet:"+strings.ToLower(networkID))).String()
}

// networkView is a Neutron network. A map: the list filters on any of its
// scalar members (matchesFilters).
func networkView(n network.Network) map[string]any {
	mtu := n.MTU
	if mtu == 0 {
		mtu = 1500
	}
	return map[string]any{
		"id": n.ID, "name": n.Name, "status": "ACTIVE", "admin_state_up": true,
		"shared": true, "router:external": false, "subnets": []string{SubnetID(n.ID)},
		"mtu": mtu, "project_id": "", "tenant_id": "", "description": "",
		"availability_zones": []string{core.AvailabilityZone}, "port_security_enabled": false,
		"tags": []string{}, "provider:network_type": "flat", "ipv4_address_scope": nil,
	}
}

func (s *Service) showNetwork(w http.ResponseWriter, r *core.Request) error {
	id := r.PathValue("id")
	for _, n := range s.Cfg.Networks {
		if strings.EqualFold(n.ID, id) {
			core.WriteJSON(w, http.StatusOK, struct {
				Network map[string]any `json:"network"`
			}{networkView(n)})
			return nil
		}
	}
	return core.NotFound("Network %s could not be found.", id)
}

// listNetworks answers Neutron's list with its attribute filters: name,
// id, and every scalar attribute of the body (shared, router:external,
// status, tenant_id, …); a filter may repeat (any value matches), as in
// Neutron. Tempest, for one, asks for shared=False to find a project's
// own networks, of which ingot has none.
func (s *Service) listNetworks(w http.ResponseWriter, r *core.Request) error {
	q := r.URL.Query()
	out := []map[string]any{}
	for _, n := range s.Cfg.Networks {
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
	core.WriteJSON(w, http.StatusOK, struct {
		Networks []map[string]any `json:"networks"`
	}{out})
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
func (s *Service) showPort(w http.ResponseWriter, r *core.Request) error {
	id := r.PathValue("id")
	if !core.IsUUID(id) {
		return core.NotFound("Port %s could not be found.", id)
	}
	p, err := s.Cfg.Store.GetPort(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Port %s could not be found.", id)
	}
	if err != nil {
		return fmt.Errorf("get port %s: %w", id, err)
	}
	if ok, err := s.portsVisible(r, p.ServerID); err != nil {
		return err
	} else if !ok {
		return core.NotFound("Port %s could not be found.", id)
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Port portView `json:"port"`
	}{newPortView(p)})
	return nil
}

// PortStatus is ACTIVE once the port's VIF is attached to a node.
func PortStatus(p store.Port) string {
	if p.VIFNode != "" {
		return "ACTIVE"
	}
	return "DOWN"
}

// portView is a Neutron port (members in byte order, as the map they
// replaced wrote them).
type portView struct {
	AdminStateUp    bool                `json:"admin_state_up"`
	BindingHostID   string              `json:"binding:host_id"`
	BindingVNICType string              `json:"binding:vnic_type"`
	CreatedAt       string              `json:"created_at"`
	Description     string              `json:"description"`
	DeviceID        string              `json:"device_id"`
	DeviceOwner     string              `json:"device_owner"`
	FixedIPs        []map[string]string `json:"fixed_ips"`
	ID              string              `json:"id"`
	MACAddress      string              `json:"mac_address"`
	Name            string              `json:"name"`
	NetworkID       string              `json:"network_id"`
	ProjectID       string              `json:"project_id"`
	RevisionNumber  int                 `json:"revision_number"`
	SecurityGroups  []string            `json:"security_groups"`
	Status          string              `json:"status"`
	Tags            []string            `json:"tags"`
	TenantID        string              `json:"tenant_id"`
}

func newPortView(p store.Port) portView {
	return portView{ID: p.ID, NetworkID: p.NetworkID, MACAddress: p.MAC,
		FixedIPs: []map[string]string{{"subnet_id": SubnetID(p.NetworkID), "ip_address": p.IP}},
		DeviceID: p.ServerID, DeviceOwner: "compute:" + core.AvailabilityZone,
		Status: PortStatus(p), AdminStateUp: true, BindingHostID: p.VIFNode, BindingVNICType: "baremetal",
		SecurityGroups: []string{}, Tags: []string{}, CreatedAt: p.CreatedAt.UTC().Format(core.NovaTime), RevisionNumber: 1}
}

// serviceVersions is the version list of the Glance- or Neutron-shaped root
// (/image/, /network/) for users who point image_endpoint_override or
// network_endpoint_override at them; the SDK follows the self link.
func serviceVersions(r *http.Request, id, path string) serviceVersionList {
	return serviceVersionList{Versions: []serviceVersion{{ID: id, Status: "CURRENT",
		Links: []core.Link{{Rel: "self", Href: core.BaseURL(r) + path}}}}}
}

type serviceVersionList struct {
	Versions []serviceVersion `json:"versions"`
}

type serviceVersion struct {
	ID     string      `json:"id"`
	Links  []core.Link `json:"links"`
	Status string      `json:"status"`
}
