package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-services: every ingot replica registers itself as Nova's compute,
// scheduler and conductor (one process does the three), with a heartbeat
// (internal/app). A replica is up while its heartbeat is younger than
// ServiceDownTime and it is not forced down. New builds are scheduled only
// while some nova-compute service is enabled and not forced down
// (internal/scheduler, Options.Schedulable).

// Register registers the admin compute surface: services, hosts,
// hypervisors, flavor management, server groups and host aggregates.
func (s *Service) Register() {
	s.Compute("GET /v2.1/os-services", s.listServices)
	s.Compute("PUT /v2.1/os-services/{id}", s.updateService)
	s.Compute("DELETE /v2.1/os-services/{id}", s.deleteService)
	s.hostRoutes()
	s.hypervisorRoutes()
}

func (s *Service) downTime() time.Duration {
	if s.Cfg.ServiceDownTime > 0 {
		return s.Cfg.ServiceDownTime
	}
	return 60 * time.Second
}

// serviceUp is Nova's servicegroup check: a recent heartbeat, not forced down.
func (s *Service) serviceUp(sv store.Service) bool {
	return !sv.ForcedDown && s.Cfg.Clock.Now().Sub(sv.UpdatedAt) <= s.downTime()
}

func serviceStatus(sv store.Service) string {
	if sv.Disabled {
		return "disabled"
	}
	return "enabled"
}

// serviceView shows sv in its zone (zones.go).
func (s *Service) serviceView(r *core.Request, sv store.Service, z Zones) serviceView {
	v := serviceView{ID: serviceID(r, sv), Binary: sv.Binary, Host: sv.Host, Zone: z.of(sv),
		Status: serviceStatus(sv), State: map[bool]string{true: "up", false: "down"}[s.serviceUp(sv)],
		UpdatedAt: sv.UpdatedAt.UTC().Format(core.NovaUsecTime), DisabledReason: sv.DisabledReason}
	if r.MV.AtLeast(mvForcedDown) {
		v.ForcedDown = &sv.ForcedDown
	}
	return v
}

// serviceView is a service of os-services; forced_down from 2.11.
type serviceView struct {
	Binary         string  `json:"binary"`
	DisabledReason *string `json:"disabled_reason"`
	ForcedDown     *bool   `json:"forced_down,omitempty"`
	Host           string  `json:"host"`
	ID             any     `json:"id"`
	State          string  `json:"state"`
	Status         string  `json:"status"`
	UpdatedAt      string  `json:"updated_at"`
	Zone           string  `json:"zone"`
}

// serviceChange is the answer of a pre-2.53 PUT: what the action changed.
type serviceChange struct {
	Binary         string  `json:"binary"`
	DisabledReason *string `json:"disabled_reason,omitempty"`
	ForcedDown     *bool   `json:"forced_down,omitempty"`
	Host           string  `json:"host"`
	Status         *string `json:"status,omitempty"`
}

// serviceID is the integer id before 2.53, the UUID from 2.53.
func serviceID(r *core.Request, sv store.Service) any {
	if r.MV.AtLeast(mvUUIDs) {
		return sv.UUID
	}
	return sv.ID
}

func (s *Service) listServices(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServicesList, r.Own()); err != nil {
		return err
	}
	q := r.URL.Query()
	if r.MV.AtLeast(mvAPICleanup) {
		for k := range q {
			if k != "host" && k != "binary" {
				return core.BadRequest("Invalid input for query parameters %s. Additional properties are not allowed.", k)
			}
		}
	}
	z, err := s.Zones(r)
	if err != nil {
		return err
	}
	out := []serviceView{}
	for _, sv := range z.Services {
		if (q.Has("host") && sv.Host != q.Get("host")) || (q.Has("binary") && sv.Binary != q.Get("binary")) {
			continue
		}
		out = append(out, s.serviceView(r, sv, z))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Services []serviceView `json:"services"`
	}{out})
	return nil
}

// NodeHost is the compute host a server on node reports (OS-EXT-SRV-ATTR:host,
// the host filter): its node's compute service, or ingot's default name
// before any service registered.
func NodeHost(node string, computes []store.Service) string {
	if svc, ok := store.ServiceOfNode(node, computes); ok {
		return svc.Host
	}
	return core.HostName
}

func (s *Service) findService(r *core.Request, match func(store.Service) bool) (store.Service, error) {
	all, err := s.Cfg.Store.ListServices(r.Context())
	if err != nil {
		return store.Service{}, fmt.Errorf("list services: %w", err)
	}
	if i := slices.IndexFunc(all, match); i >= 0 {
		return all[i], nil
	}
	return store.Service{}, errNoService
}

var errNoService = errors.New("no such service")

// updateService is PUT /os-services/{id}: from 2.53 id is the service's
// UUID and the body its new status, disabled_reason and forced_down; below,
// id is an action (enable, disable, disable-log-reason, force-down from
// 2.11) on the service a body's host and binary name.
func (s *Service) updateService(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServicesUpdate, r.Own()); err != nil {
		return err
	}
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	if r.MV.AtLeast(mvUUIDs) {
		return s.updateServiceByID(w, r, body)
	}
	action := r.PathValue("id")
	want := map[string][]string{
		"enable": {"host", "binary"}, "disable": {"host", "binary"},
		"disable-log-reason": {"host", "binary", "disabled_reason"},
	}
	if r.MV.AtLeast(mvForcedDown) {
		want["force-down"] = []string{"host", "binary", "forced_down"}
	}
	keys, ok := want[action]
	if !ok {
		return core.NotFound("Unknown action")
	}
	for k := range body {
		if !slices.Contains(keys, k) {
			return core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed.", k)
		}
	}
	host, err := core.RequiredString(body, "host", 255)
	if err != nil {
		return err
	}
	binary, err := core.RequiredString(body, "binary", 255)
	if err != nil {
		return err
	}
	u := store.ServiceUpdate{}
	var reason *string
	switch action {
	case "enable", "disable":
		d := action == "disable"
		u.Disabled = &d
		if !d {
			u.DisabledReason = &reason
		}
	case "disable-log-reason":
		rs, err := core.RequiredString(body, "disabled_reason", 255)
		if err != nil {
			return err
		}
		d := true
		reason = &rs
		u.Disabled, u.DisabledReason = &d, &reason
	case "force-down":
		raw, ok := body["forced_down"]
		var fd bool
		if !ok || json.Unmarshal(raw, &fd) != nil {
			return core.BadRequest("Invalid input for field/attribute forced_down. It must be a boolean.")
		}
		u.ForcedDown = &fd
	}
	sv, err := s.findService(r, func(sv store.Service) bool { return sv.Host == host && sv.Binary == binary })
	if errors.Is(err, errNoService) {
		return core.NotFound("Service %s on host %s could not be found.", binary, host)
	}
	if err != nil {
		return err
	}
	if sv, err = s.Cfg.Store.UpdateService(r.Context(), sv.UUID, u); err != nil {
		return s.serviceErr(err, sv.UUID)
	}
	v := serviceChange{Host: sv.Host, Binary: sv.Binary}
	status := serviceStatus(sv)
	switch action {
	case "force-down":
		v.ForcedDown = &sv.ForcedDown
	case "disable-log-reason":
		v.Status, v.DisabledReason = &status, sv.DisabledReason
	default:
		v.Status = &status
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Service serviceChange `json:"service"`
	}{v})
	return nil
}

func (s *Service) serviceErr(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Service %s could not be found.", id)
	}
	return fmt.Errorf("service %s: %w", id, err)
}

// updateServiceByID is the 2.53 form.
func (s *Service) updateServiceByID(w http.ResponseWriter, r *core.Request, body map[string]json.RawMessage) error {
	for k := range body {
		if k != "status" && k != "disabled_reason" && k != "forced_down" {
			return core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed.", k)
		}
	}
	u := store.ServiceUpdate{}
	status, err := core.OptionalString(body, "status", 255)
	if err != nil {
		return err
	}
	_, hasReason := body["disabled_reason"]
	reason, err := core.OptionalString(body, "disabled_reason", 255)
	if err != nil {
		return err
	}
	switch status {
	case "enabled":
		d, none := false, (*string)(nil)
		u.Disabled, u.DisabledReason = &d, &none
	case "disabled":
		d, rp := true, (*string)(nil)
		if hasReason {
			rp = &reason
		}
		u.Disabled, u.DisabledReason = &d, &rp
	case "":
		if _, ok := body["status"]; ok {
			return core.BadRequest("Invalid input for field/attribute status. It is not one of ['enabled', 'disabled'].")
		}
	default:
		return core.BadRequest("Invalid input for field/attribute status. Value: %s. It is not one of ['enabled', 'disabled'].", status)
	}
	if hasReason && status != "disabled" {
		return core.BadRequest("Specifying 'disabled_reason' with status other than 'disabled' is invalid.")
	}
	if raw, ok := body["forced_down"]; ok {
		var fd bool
		if json.Unmarshal(raw, &fd) != nil {
			return core.BadRequest("Invalid input for field/attribute forced_down. Value: %s. It is not of type 'boolean'.", raw)
		}
		u.ForcedDown = &fd
	}
	if u.Disabled == nil && u.ForcedDown == nil {
		return core.BadRequest("No updates were requested. Fields 'status' or 'forced_down' should be specified.")
	}
	id := r.PathValue("id")
	if !core.IsUUID(id) {
		return core.BadRequest("Invalid uuid %s", id)
	}
	sv, err := s.findService(r, func(sv store.Service) bool { return sv.UUID == id })
	if errors.Is(err, errNoService) {
		return core.NotFound("Service with UUID %s could not be found.", id)
	}
	if err != nil {
		return err
	}
	if sv.Binary != store.BinaryCompute {
		return core.BadRequest("Updating a %s service is not supported. Only nova-compute services can be updated.", sv.Binary)
	}
	if sv, err = s.Cfg.Store.UpdateService(r.Context(), id, u); err != nil {
		return s.serviceErr(err, id)
	}
	z, err := s.Zones(r)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Service serviceView `json:"service"`
	}{s.serviceView(r, sv, z)})
	return nil
}

// deleteService is DELETE /os-services/{id} (integer id below 2.53, UUID
// from it). A running replica re-registers at its next start, as Nova's.
func (s *Service) deleteService(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServicesDelete, r.Own()); err != nil {
		return err
	}
	id := r.PathValue("id")
	var match func(store.Service) bool
	if r.MV.AtLeast(mvUUIDs) {
		if !core.IsUUID(id) {
			return core.BadRequest("Invalid uuid %s", id)
		}
		match = func(sv store.Service) bool { return sv.UUID == id }
	} else {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return core.BadRequest("Invalid ID %s", id)
		}
		match = func(sv store.Service) bool { return sv.ID == n }
	}
	sv, err := s.findService(r, match)
	if errors.Is(err, errNoService) {
		return core.NotFound("Service %s could not be found.", id)
	}
	if err != nil {
		return err
	}
	if err := s.Cfg.Store.DeleteService(r.Context(), sv.UUID); err != nil {
		return s.serviceErr(err, id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
