package admin

import (
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// AvailabilityZones lists the zones of the compute hosts (zones.go), each
// available while one of its compute services is enabled.
func (s *Service) AvailabilityZones(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AZList, r.Own()); err != nil {
		return err
	}
	z, err := s.Zones(r)
	if err != nil {
		return err
	}
	out := []zoneInfo{}
	for _, name := range z.compute() {
		out = append(out, zoneInfo{ZoneName: name, ZoneState: zoneState{Available: zoneAvailable(z, name)}})
	}
	core.WriteJSON(w, http.StatusOK, zonesBody{Zones: out})
	return nil
}

// zoneAvailable: the zone has an enabled compute service, or no compute
// service has registered yet (the default zone of a starting replica).
func zoneAvailable(z Zones, name string) bool {
	computes := store.ComputeServices(z.Services)
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

// AvailabilityZonesDetail is what `openstack availability zone list
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
		core.WriteJSON(w, http.StatusOK, zonesBody{Zones: []zoneInfo{{
			ZoneName: core.AvailabilityZone, ZoneState: zoneState{Available: true},
			Hosts: map[string]map[string]zoneService{core.HostName: {"nova-compute": {
				Available: true, Active: true, UpdatedAt: s.Cfg.Clock.Now().UTC().Format(core.NovaUsecTime)}}},
		}}})
		return nil
	}
	out := []zoneInfo{}
	for _, name := range z.compute() {
		hosts := map[string]map[string]zoneService{}
		for _, sv := range store.ComputeServices(z.Services) {
			if z.of(sv) != name {
				continue
			}
			if hosts[sv.Host] == nil {
				hosts[sv.Host] = map[string]zoneService{}
			}
			hosts[sv.Host][sv.Binary] = zoneService{Available: s.serviceUp(sv), Active: !sv.Disabled,
				UpdatedAt: sv.UpdatedAt.UTC().Format(core.NovaUsecTime)}
		}
		out = append(out, zoneInfo{ZoneName: name, ZoneState: zoneState{Available: zoneAvailable(z, name)}, Hosts: hosts})
	}
	core.WriteJSON(w, http.StatusOK, zonesBody{Zones: out})
	return nil
}

type zonesBody struct {
	Zones []zoneInfo `json:"availabilityZoneInfo"`
}

// zoneInfo is a zone; hosts is null in the list, host → binary → state in
// the detail.
type zoneInfo struct {
	Hosts     map[string]map[string]zoneService `json:"hosts"`
	ZoneName  string                            `json:"zoneName"`
	ZoneState zoneState                         `json:"zoneState"`
}

type zoneState struct {
	Available bool `json:"available"`
}

type zoneService struct {
	Active    bool   `json:"active"`
	Available bool   `json:"available"`
	UpdatedAt string `json:"updated_at"`
}
