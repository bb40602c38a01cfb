package admin

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-hosts (removed at 2.43, 404 above): one row per service, as Nova; a
// host's resources are those of its Ironic nodes (reported as zero, as
// Nova's Ironic driver reports them) and of the servers on them. Power
// actions and status changes are what Nova's Ironic driver does not
// implement: 501.

func (s *Service) hostRoutes() {
	s.Compute("GET /v2.1/os-hosts", s.hostsOnly(policy.HostsList, s.listHosts))
	s.Compute("GET /v2.1/os-hosts/{host}", s.hostsOnly(policy.HostsShow, s.showHost))
	s.Compute("PUT /v2.1/os-hosts/{host}", s.hostsOnly(policy.HostsUpdate, s.updateHost))
	for action, rule := range map[string]string{"startup": policy.HostsStart, "shutdown": policy.HostsShutdown, "reboot": policy.HostsReboot} {
		s.Compute("GET /v2.1/os-hosts/{host}/"+action, s.hostsOnly(rule, s.hostPowerAction))
	}
}

// hostsOnly answers 404 from 2.43 and checks rule below it.
func (s *Service) hostsOnly(rule string, h core.HandlerFunc) core.HandlerFunc {
	return func(w http.ResponseWriter, r *core.Request) error {
		if r.MV.AtLeast(mvHostsRemoved) {
			r.Authorized = true // a 404 for everyone, as Nova's removed API
			return core.NotFound("The resource could not be found.")
		}
		if err := r.Authorize(rule, r.Own()); err != nil {
			return err
		}
		return h(w, r)
	}
}

// topics are the "service" member of os-hosts: Nova's RPC topic.
var topics = map[string]string{store.BinaryCompute: "compute", store.BinaryScheduler: "scheduler", store.BinaryConductor: "conductor"}

func (s *Service) listHosts(w http.ResponseWriter, r *core.Request) error {
	z, err := s.Zones(r)
	if err != nil {
		return err
	}
	zone := r.URL.Query().Get("zone")
	out := []map[string]string{}
	for _, sv := range z.Services {
		if zone != "" && z.of(sv) != zone {
			continue
		}
		out = append(out, map[string]string{"host_name": sv.Host, "service": topics[sv.Binary], "zone": z.of(sv)})
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Hosts []map[string]string `json:"hosts"`
	}{out})
	return nil
}

// hostCompute finds the compute service of host (404 when none).
func (s *Service) hostCompute(r *core.Request, host string) (store.Service, []store.Service, error) {
	all, err := s.Cfg.Store.ListServices(r.Context())
	if err != nil {
		return store.Service{}, nil, fmt.Errorf("list services: %w", err)
	}
	computes := store.ComputeServices(all)
	i := slices.IndexFunc(computes, func(sv store.Service) bool { return sv.Host == host })
	if i < 0 {
		return store.Service{}, nil, core.NotFound("Compute host %s could not be found.", host)
	}
	return computes[i], computes, nil
}

type hostResource struct {
	Host     string `json:"host"`
	Project  string `json:"project"`
	CPU      int    `json:"cpu"`
	MemoryMB int    `json:"memory_mb"`
	DiskGB   int    `json:"disk_gb"`
}

// showHost lists (total) and (used_now) (zero: Ironic reports no standard
// resources), (used_max) and one row per project: what the servers on the
// host's nodes were built with.
func (s *Service) showHost(w http.ResponseWriter, r *core.Request) error {
	host := r.PathValue("host")
	svc, computes, err := s.hostCompute(r, host)
	if err != nil {
		return err
	}
	holders, err := s.Cfg.Store.NodeHolders(r.Context())
	if err != nil {
		return fmt.Errorf("node holders: %w", err)
	}
	used := hostResource{Host: host, Project: "(used_max)"}
	byProject := map[string]*hostResource{}
	for node, id := range holders {
		if on, _ := store.ServiceOfNode(node, computes); on.ID != svc.ID {
			continue
		}
		sv, err := s.Cfg.Store.GetServer(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("server %s: %w", id, err)
		}
		p := byProject[sv.ProjectID]
		if p == nil {
			p = &hostResource{Host: host, Project: sv.ProjectID}
			byProject[sv.ProjectID] = p
		}
		for _, res := range []*hostResource{&used, p} {
			res.CPU += sv.Spec.VCPUs
			res.MemoryMB += sv.Spec.RAMMB
			res.DiskGB += sv.Spec.RootGB
		}
	}
	rows := []map[string]hostResource{
		{"resource": {Host: host, Project: "(total)"}},
		{"resource": {Host: host, Project: "(used_now)"}},
		{"resource": used},
	}
	projects := make([]string, 0, len(byProject))
	for p := range byProject {
		projects = append(projects, p)
	}
	sort.Strings(projects)
	for _, p := range projects {
		rows = append(rows, map[string]hostResource{"resource": *byProject[p]})
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Host []map[string]hostResource `json:"host"`
	}{rows})
	return nil
}

// updateHost validates as Nova does, then answers that Ironic has no host
// status or maintenance mode of its own.
func (s *Service) updateHost(w http.ResponseWriter, r *core.Request) error {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return core.BadRequest("Invalid input for field/attribute. 'status' or 'maintenance_mode' is required.")
	}
	for k := range body {
		if k != "status" && k != "maintenance_mode" {
			return core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed.", k)
		}
		v, err := core.OptionalString(body, k, 255)
		if err != nil {
			return err
		}
		if v != "enable" && v != "disable" {
			return core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not one of ['enable', 'disable'].", k, v)
		}
	}
	if _, _, err := s.hostCompute(r, r.PathValue("host")); err != nil {
		return err
	}
	if _, ok := body["status"]; ok {
		return &core.APIError{Status: http.StatusNotImplemented, Message: "Virt driver does not implement host disabled status."}
	}
	return &core.APIError{Status: http.StatusNotImplemented, Message: "Virt driver does not implement host maintenance mode."}
}

func (s *Service) hostPowerAction(w http.ResponseWriter, r *core.Request) error {
	if _, _, err := s.hostCompute(r, r.PathValue("host")); err != nil {
		return err
	}
	return &core.APIError{Status: http.StatusNotImplemented, Message: "Virt driver does not implement host power management."}
}
