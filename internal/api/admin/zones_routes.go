package admin

import (
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
)

// availabilityZones lists the zones of the compute hosts (zones.go), each
// available while one of its compute services is enabled.
func (s *Service) AvailabilityZones(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AZList, r.Own()); err != nil {
		return err
	}
	z, err := s.Zones(r)
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, name := range z.compute() {
		out = append(out, map[string]any{"zoneName": name, "zoneState": map[string]bool{"available": zoneAvailable(z, name)}, "hosts": nil})
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": out})
	return nil
}

// zoneAvailable: the zone has an enabled compute service, or no compute
// service has registered yet (the default zone of a starting replica).
func zoneAvailable(z Zones, name string) bool {
	computes := ComputeServices(z.Services)
	if len(computes) == 0 {
		return true
	}
	for _, sv := range computes {
		if z.of(sv) == name && !sv.Disabled {
			return true
		}
	}
	return false
}

// availabilityZonesDetail is what `openstack availability zone list
// --compute` reads: each compute zone with its compute hosts. Nova adds
// the internal zone of the scheduler and conductor; ingot's are the same
// processes as its compute services, so it leaves that zone out and the
// CLI lists the zones servers can be in. Before any service registered,
// the default zone with ingot's one compute host.
func (s *Service) AvailabilityZonesDetail(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AZDetail, r.Own()); err != nil {
		return err
	}
	z, err := s.Zones(r)
	if err != nil {
		return err
	}
	if len(z.Services) == 0 {
		core.WriteJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": []map[string]any{{
			"zoneName": core.AvailabilityZone, "zoneState": map[string]bool{"available": true},
			"hosts": map[string]any{core.HostName: map[string]any{"nova-compute": map[string]any{
				"available": true, "active": true, "updated_at": s.Cfg.Clock.Now().UTC().Format(core.NovaUsecTime)}}},
		}}})
		return nil
	}
	out := []map[string]any{}
	for _, name := range z.compute() {
		hosts := map[string]map[string]any{}
		for _, sv := range ComputeServices(z.Services) {
			if z.of(sv) != name {
				continue
			}
			if hosts[sv.Host] == nil {
				hosts[sv.Host] = map[string]any{}
			}
			hosts[sv.Host][sv.Binary] = map[string]any{"available": s.serviceUp(sv), "active": !sv.Disabled,
				"updated_at": sv.UpdatedAt.UTC().Format(core.NovaUsecTime)}
		}
		out = append(out, map[string]any{"zoneName": name, "zoneState": map[string]bool{"available": zoneAvailable(z, name)}, "hosts": hosts})
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": out})
	return nil
}
