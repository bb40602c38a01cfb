package admin

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-hypervisors shows each Ironic node as Nova's Ironic driver does: the
// node's UUID as hypervisor_hostname (and as id from 2.53), type "ironic",
// version 1, no CPU model, and no standard resources (vcpus, memory and
// disk are 0: bare metal is scheduled by resource class); running_vms is 1
// on a node a server holds. state and status are those of the compute
// service the node belongs to (a replica; nodes are spread over them by a
// hash), not of the node: a node in maintenance is still a hypervisor, as
// in Nova. The list comes from the inventory cache, not from Ironic.

func (s *Service) hypervisorRoutes() {
	s.Compute("GET /v2.1/os-hypervisors", s.listHypervisors(false))
	s.Compute("GET /v2.1/os-hypervisors/detail", s.listHypervisors(true))
	s.Compute("GET /v2.1/os-hypervisors/statistics", s.hypervisorStatistics)
	s.Compute("GET /v2.1/os-hypervisors/{id}", s.showHypervisor)
	s.Compute("GET /v2.1/os-hypervisors/{id}/uptime", s.hypervisorUptime)
	s.Compute("GET /v2.1/os-hypervisors/{id}/search", s.searchHypervisors(false))
	s.Compute("GET /v2.1/os-hypervisors/{id}/servers", s.searchHypervisors(true))
}

// hypervisor is one node with what its view needs.
type hypervisor struct {
	node    ironic.Node
	service store.Service
	holder  string // server id, "" when free
}

// legacyID is the integer id shown before 2.53: a stable 53-bit hash of
// the node UUID (exact in every JSON parser; no table to keep).
func legacyID(node string) int64 {
	h := fnv.New64a()
	h.Write([]byte(node))
	if id := int64(h.Sum64() & (1<<53 - 1)); id != 0 {
		return id
	}
	return 1
}

func (h hypervisor) id(r *core.Request) any {
	if r.MV.AtLeast(mvUUIDs) {
		return h.node.UUID
	}
	return legacyID(h.node.UUID)
}

// hypervisors lists every node that belongs to a compute service, ordered
// by the id the microversion shows.
func (s *Service) hypervisors(r *core.Request) ([]hypervisor, error) {
	inv := s.Inventory()
	var nodes []ironic.Node
	if inv != nil {
		var err error
		if nodes, err = inv(r.Context()); err != nil {
			return nil, core.Unavailable("Ironic node inventory unavailable: %v", err)
		}
	}
	all, err := s.Cfg.Store.ListServices(r.Context())
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	computes := store.ComputeServices(all)
	holders, err := s.Cfg.Store.NodeHolders(r.Context())
	if err != nil {
		return nil, fmt.Errorf("node holders: %w", err)
	}
	out := make([]hypervisor, 0, len(nodes))
	for _, n := range nodes {
		if svc, ok := store.ServiceOfNode(n.UUID, computes); ok {
			out = append(out, hypervisor{node: n, service: svc, holder: holders[n.UUID]})
		}
	}
	if r.MV.AtLeast(mvUUIDs) {
		sort.Slice(out, func(i, j int) bool { return out[i].node.UUID < out[j].node.UUID })
	} else {
		sort.Slice(out, func(i, j int) bool { return legacyID(out[i].node.UUID) < legacyID(out[j].node.UUID) })
	}
	return out, nil
}

// Inventory lists the Ironic nodes from the cache (nil: none known).
func (s *Service) Inventory() func(ctx context.Context) ([]ironic.Node, error) {
	if s.Cfg.Inventory != nil {
		return s.Cfg.Inventory
	}
	return s.Cfg.Nodes
}

// hostIP is the address this API answered on (the replica's).
func hostIP(r *core.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if host, _, err := net.SplitHostPort(a.String()); err == nil && net.ParseIP(host) != nil {
			return host
		}
	}
	return "127.0.0.1"
}

type hypervisorList struct {
	Hypervisors []hypervisorView `json:"hypervisors"`
	Links       []core.Link      `json:"hypervisors_links,omitempty"`
}

type hypServer struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
}

// hypervisorView is a node as os-hypervisors shows it: the detail members
// only in details, the resource figures (all 0: a node is whole) below 2.88,
// uptime (null) in the show from 2.88.
type hypervisorView struct {
	CPUInfo            any                `json:"cpu_info,omitempty"` // "" or, from 2.28, {}
	CurrentWorkload    *int               `json:"current_workload,omitempty"`
	DiskAvailableLeast *int               `json:"disk_available_least,omitempty"`
	FreeDiskGB         *int               `json:"free_disk_gb,omitempty"`
	FreeRAMMB          *int               `json:"free_ram_mb,omitempty"`
	HostIP             *string            `json:"host_ip,omitempty"`
	HypervisorHostname string             `json:"hypervisor_hostname"`
	HypervisorType     *string            `json:"hypervisor_type,omitempty"`
	HypervisorVersion  *int               `json:"hypervisor_version,omitempty"`
	ID                 any                `json:"id"`
	LocalGB            *int               `json:"local_gb,omitempty"`
	LocalGBUsed        *int               `json:"local_gb_used,omitempty"`
	MemoryMB           *int               `json:"memory_mb,omitempty"`
	MemoryMBUsed       *int               `json:"memory_mb_used,omitempty"`
	RunningVMs         *int               `json:"running_vms,omitempty"`
	Servers            *[]hypServer       `json:"servers,omitempty"`
	Service            *hypervisorService `json:"service,omitempty"`
	State              string             `json:"state"`
	Status             string             `json:"status"`
	Uptime             any                `json:"uptime,omitempty"` // null
	VCPUs              *int               `json:"vcpus,omitempty"`
	VCPUsUsed          *int               `json:"vcpus_used,omitempty"`
}

type hypervisorService struct {
	DisabledReason *string `json:"disabled_reason"`
	Host           string  `json:"host"`
	ID             any     `json:"id"`
}

func (s *Service) hypervisorView(r *core.Request, h hypervisor, detail bool, servers []hypServer) hypervisorView {
	v := hypervisorView{ID: h.id(r), HypervisorHostname: h.node.UUID,
		State: map[bool]string{true: "up", false: "down"}[s.serviceUp(h.service)], Status: serviceStatus(h.service)}
	if servers != nil {
		v.Servers = &servers
	}
	if !detail {
		return v
	}
	typ, version, ip := "ironic", 1, hostIP(r)
	v.HypervisorType, v.HypervisorVersion, v.HostIP = &typ, &version, &ip
	v.Service = &hypervisorService{Host: h.service.Host, ID: serviceID(r, h.service), DisabledReason: h.service.DisabledReason}
	if r.MV.AtLeast(mvHypervisorTrim) {
		return v
	}
	running, zero := 0, 0
	if h.holder != "" {
		running = 1
	}
	v.VCPUs, v.VCPUsUsed, v.MemoryMB, v.MemoryMBUsed, v.LocalGB, v.LocalGBUsed = &zero, &zero, &zero, &zero, &zero, &zero
	v.FreeRAMMB, v.FreeDiskGB, v.DiskAvailableLeast, v.CurrentWorkload = &zero, &zero, &zero, &zero
	v.RunningVMs = &running
	if r.MV.AtLeast(mvCPUInfoObject) {
		v.CPUInfo = struct{}{}
	} else {
		v.CPUInfo = ""
	}
	return v
}

// serversOn names the servers holding the nodes of hs (nil when none).
func (s *Service) serversOn(ctx context.Context, h hypervisor) ([]hypServer, error) {
	if h.holder == "" {
		return nil, nil
	}
	sv, err := s.Cfg.Store.GetServer(ctx, h.holder)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", h.holder, err)
	}
	return []hypServer{{Name: sv.Name, UUID: sv.ID}}, nil
}

// withServers reads the 2.53 with_servers flag.
func withServers(q url.Values) (bool, error) {
	if !q.Has("with_servers") {
		return false, nil
	}
	switch strings.ToLower(q.Get("with_servers")) {
	case "true", "1", "yes", "y", "on", "t":
		return true, nil
	case "false", "0", "no", "n", "off", "f":
		return false, nil
	}
	return false, core.BadRequest("Invalid input for query parameters with_servers. Value: %s. It is not a boolean.", q.Get("with_servers"))
}

func onlyParams(q url.Values, allowed ...string) error {
	for k := range q {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return core.BadRequest("Invalid input for query parameters %s. Additional properties are not allowed.", k)
		}
	}
	return nil
}

func (s *Service) listHypervisors(detail bool) core.HandlerFunc {
	return func(w http.ResponseWriter, r *core.Request) error {
		rule := policy.HypervisorsList
		if detail {
			rule = policy.HypervisorsListDetail
		}
		if err := r.Authorize(rule, r.Own()); err != nil {
			return err
		}
		q := r.URL.Query()
		servers, pattern := false, ""
		if r.MV.AtLeast(mvUUIDs) {
			if err := onlyParams(q, "limit", "marker", "hypervisor_hostname_pattern", "with_servers"); err != nil {
				return err
			}
			var err error
			if servers, err = withServers(q); err != nil {
				return err
			}
			pattern = q.Get("hypervisor_hostname_pattern")
			if q.Has("hypervisor_hostname_pattern") && (q.Has("limit") || q.Has("marker")) {
				return core.BadRequest("Paging over hypervisors with the hypervisor_hostname_pattern query parameter is not supported.")
			}
		}
		all, err := s.hypervisors(r)
		if err != nil {
			return err
		}
		if q.Has("hypervisor_hostname_pattern") && r.MV.AtLeast(mvUUIDs) {
			if all = matchHostname(all, pattern); len(all) == 0 {
				return core.NotFound("No hypervisor matching '%s' could be found.", pattern)
			}
		}
		page, next, err := pageHypervisors(r, all)
		if err != nil {
			return err
		}
		out := make([]hypervisorView, 0, len(page))
		for _, h := range page {
			var refs []hypServer
			if servers {
				if refs, err = s.serversOn(r.Context(), h); err != nil {
					return err
				}
			}
			out = append(out, s.hypervisorView(r, h, detail, refs))
		}
		body := hypervisorList{Hypervisors: out}
		if next != "" {
			path := "/v2.1/os-hypervisors"
			if detail {
				path += "/detail"
			}
			body.Links = []core.Link{{Rel: "next", Href: core.BaseURL(r.Request) + path + "?" + next}}
		}
		core.WriteJSON(w, http.StatusOK, body)
		return nil
	}
}

func matchHostname(all []hypervisor, pattern string) []hypervisor {
	var out []hypervisor
	for _, h := range all {
		if strings.Contains(strings.ToLower(h.node.UUID), strings.ToLower(pattern)) {
			out = append(out, h)
		}
	}
	return out
}

// pageHypervisors applies limit and marker (2.33+) and returns the query
// of the next page when the page is full.
func pageHypervisors(r *core.Request, all []hypervisor) ([]hypervisor, string, error) {
	q := r.URL.Query()
	if !r.MV.AtLeast(mvHypervisorPaging) || (!q.Has("limit") && !q.Has("marker")) {
		return all, "", nil
	}
	if q.Has("marker") {
		marker := q.Get("marker")
		i := -1
		for k, h := range all {
			if fmt.Sprint(h.id(r)) == marker {
				i = k
			}
		}
		if i < 0 {
			return nil, "", core.BadRequest("marker [%s] not found", marker)
		}
		all = all[i+1:]
	}
	if !q.Has("limit") {
		return all, "", nil
	}
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 0 {
		return nil, "", core.BadRequest("Invalid input for query parameters limit. Value: %s. It must be a non-negative integer.", q.Get("limit"))
	}
	if limit >= len(all) {
		return all, "", nil
	}
	page := all[:limit]
	if limit == 0 {
		return page, "", nil
	}
	nq := url.Values{"limit": {strconv.Itoa(limit)}, "marker": {fmt.Sprint(page[len(page)-1].id(r))}}
	return page, nq.Encode(), nil
}

// findHypervisor resolves the path id: an integer below 2.53 (anything
// else is unknown, 404), a UUID from 2.53 (anything else is a 400).
func (s *Service) findHypervisor(r *core.Request) (hypervisor, error) {
	id := r.PathValue("id")
	if r.MV.AtLeast(mvUUIDs) && !core.IsUUID(id) {
		return hypervisor{}, core.BadRequest("Invalid uuid %s", id)
	}
	all, err := s.hypervisors(r)
	if err != nil {
		return hypervisor{}, err
	}
	for _, h := range all {
		if fmt.Sprint(h.id(r)) == id || (r.MV.AtLeast(mvUUIDs) && strings.EqualFold(h.node.UUID, id)) {
			return h, nil
		}
	}
	return hypervisor{}, core.NotFound("Hypervisor with ID '%s' could not be found.", id)
}

func (s *Service) showHypervisor(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.HypervisorsShow, r.Own()); err != nil {
		return err
	}
	servers := false
	if r.MV.AtLeast(mvUUIDs) {
		q := r.URL.Query()
		if err := onlyParams(q, "with_servers"); err != nil {
			return err
		}
		var err error
		if servers, err = withServers(q); err != nil {
			return err
		}
	}
	h, err := s.findHypervisor(r)
	if err != nil {
		return err
	}
	var refs []hypServer
	if servers {
		if refs, err = s.serversOn(r.Context(), h); err != nil {
			return err
		}
	}
	v := s.hypervisorView(r, h, true, refs)
	if r.MV.AtLeast(mvHypervisorTrim) {
		v.Uptime = core.JSONNull // Nova's Ironic driver has no host uptime
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Hypervisor hypervisorView `json:"hypervisor"`
	}{v})
	return nil
}

// hypervisorUptime: Nova's Ironic driver does not implement it (501);
// removed at 2.88 (404).
func (s *Service) hypervisorUptime(w http.ResponseWriter, r *core.Request) error {
	if r.MV.AtLeast(mvHypervisorTrim) {
		r.Authorized = true
		return core.NotFound("The resource could not be found.")
	}
	if err := r.Authorize(policy.HypervisorsUptime, r.Own()); err != nil {
		return err
	}
	if _, err := s.findHypervisor(r); err != nil {
		return err
	}
	return &core.APIError{Status: http.StatusNotImplemented, Message: "Virt driver does not implement host uptime function."}
}

// searchHypervisors is GET /os-hypervisors/{pattern}/search and
// …/{pattern}/servers, removed at 2.53 (hypervisor_hostname_pattern and
// with_servers replace them).
func (s *Service) searchHypervisors(servers bool) core.HandlerFunc {
	return func(w http.ResponseWriter, r *core.Request) error {
		if r.MV.AtLeast(mvUUIDs) {
			r.Authorized = true
			return core.NotFound("The resource could not be found.")
		}
		rule := policy.HypervisorsSearch
		if servers {
			rule = policy.HypervisorsServers
		}
		if err := r.Authorize(rule, r.Own()); err != nil {
			return err
		}
		pattern := r.PathValue("id")
		all, err := s.hypervisors(r)
		if err != nil {
			return err
		}
		found := matchHostname(all, pattern)
		if len(found) == 0 {
			return core.NotFound("No hypervisor matching '%s' could be found.", pattern)
		}
		out := make([]hypervisorView, 0, len(found))
		for _, h := range found {
			var refs []hypServer
			if servers {
				if refs, err = s.serversOn(r.Context(), h); err != nil {
					return err
				}
			}
			out = append(out, s.hypervisorView(r, h, false, refs))
		}
		core.WriteJSON(w, http.StatusOK, hypervisorList{Hypervisors: out})
		return nil
	}
}

// hypervisorStatistics sums the hypervisors (removed at 2.88).
func (s *Service) hypervisorStatistics(w http.ResponseWriter, r *core.Request) error {
	if r.MV.AtLeast(mvHypervisorTrim) {
		r.Authorized = true
		return core.NotFound("The resource could not be found.")
	}
	if err := r.Authorize(policy.HypervisorsStatistics, r.Own()); err != nil {
		return err
	}
	all, err := s.hypervisors(r)
	if err != nil {
		return err
	}
	stats := map[string]int{"count": len(all)}
	for _, k := range []string{"vcpus", "vcpus_used", "memory_mb", "memory_mb_used", "local_gb", "local_gb_used",
		"free_ram_mb", "free_disk_gb", "disk_available_least", "current_workload", "running_vms"} {
		stats[k] = 0
	}
	for _, h := range all {
		if h.holder != "" {
			stats["running_vms"]++
		}
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Statistics map[string]int `json:"hypervisor_statistics"`
	}{stats})
	return nil
}
