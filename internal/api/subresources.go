package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Read-only server sub-resources and small documents that clients such as
// Terraform's OpenStack provider and the SDK read after a create. ingot has
// no tags or zones of its own yet, so those answer empty, as Nova
// does for a server without any.

func (s *server) subresourceRoutes() {
	s.compute("GET /v2.1/servers/{id}/metadata", s.serverMetadata)
	s.compute("GET /v2.1/servers/{id}/ips", s.serverIPs)
	s.compute("GET /v2.1/servers/{id}/os-interface", s.serverInterfaces)
	s.compute("GET /v2.1/servers/{id}/os-volume_attachments", s.serverVolumeAttachments)
	s.compute("GET /v2.1/os-availability-zone", s.availabilityZones)
	s.compute("GET /v2.1/os-availability-zone/detail", s.availabilityZonesDetail)
	for _, prefix := range []string{"/v2.1", "/v2.1/v2.0", "/network/v2.0"} {
		s.plain("GET "+prefix+"/ports", s.listPorts)
	}
}

func (s *server) serverMetadata(w http.ResponseWriter, r *request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServerMetadataIndex)
	if err != nil {
		return err
	}
	md := sv.Spec.Metadata
	if md == nil {
		md = map[string]string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata": md})
	return nil
}

func (s *server) serverIPs(w http.ResponseWriter, r *request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.IPsIndex)
	if err != nil {
		return err
	}
	ports, err := s.cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("ports of %s: %w", sv.ID, err)
	}
	// addr and version only: Nova's ips view has no OS-EXT-IPS members.
	var addrs []portAddr
	for name, list := range s.renderer(r).addresses(ports) {
		for _, a := range list {
			addrs = append(addrs, portAddr{network: name, addr: a.Addr, version: a.Version})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"addresses": s.renderer(r).basicAddresses(addrs)})
	return nil
}

func (s *server) serverInterfaces(w http.ResponseWriter, r *request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.InterfacesList)
	if err != nil {
		return err
	}
	ports, err := s.cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("ports of %s: %w", sv.ID, err)
	}
	out := make([]map[string]any, 0, len(ports))
	for _, p := range ports {
		out = append(out, map[string]any{
			"port_id": p.ID, "net_id": p.NetworkID, "mac_addr": p.MAC, "port_state": portStatus(p),
			"fixed_ips": []map[string]string{{"subnet_id": subnetID(p.NetworkID), "ip_address": p.IP}},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"interfaceAttachments": out})
	return nil
}

// serverEmpty answers an always-empty list of a visible server.
func (s *server) serverEmpty(key, rule string) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		if _, err := s.visibleServer(r, r.PathValue("id"), rule); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{key: []any{}})
		return nil
	}
}

func (s *server) availabilityZones(w http.ResponseWriter, r *request) error {
	if err := r.authorize(policy.AZList, r.own()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": []map[string]any{{
		"zoneName": availabilityZone, "zoneState": map[string]bool{"available": true}, "hosts": nil,
	}}})
	return nil
}

// availabilityZonesDetail is what `openstack availability zone list
// --compute` reads: the zone with its one compute host, ingot.
func (s *server) availabilityZonesDetail(w http.ResponseWriter, r *request) error {
	if err := r.authorize(policy.AZDetail, r.own()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": []map[string]any{{
		"zoneName": availabilityZone, "zoneState": map[string]bool{"available": true},
		"hosts": map[string]any{hostName: map[string]any{"nova-compute": map[string]any{
			"available": true, "active": true, "updated_at": s.cfg.Clock.Now().UTC().Format(novaUsecTime)}}},
	}}})
	return nil
}

// listPorts answers Neutron's port list for one server (?device_id=), or
// the SDK's look-up of a `--port` value by id or name (?id=, ?name=; ingot's
// ports have no names, so a name matches nothing and the CLI says "No Port
// found"); without any of them the answer is a 400, never a scan of every
// port.
func (s *server) listPorts(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	dev := q.Get("device_id")
	var ports []store.Port
	switch {
	case dev != "":
		if ok, err := s.portsVisible(r, dev); err != nil {
			return err
		} else if ok {
			if ports, err = s.cfg.Store.Ports(r.Context(), dev); err != nil {
				return fmt.Errorf("ports of %s: %w", dev, err)
			}
		}
	case q.Has("id"):
		if id := q.Get("id"); isUUID(id) {
			p, err := s.cfg.Store.GetPort(r.Context(), id)
			switch {
			case err == nil:
				ok, err := s.portsVisible(r, p.ServerID)
				if err != nil {
					return err
				}
				if ok {
					ports = append(ports, p)
				}
			case !errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("get port %s: %w", id, err)
			}
		}
	case q.Has("name"):
		if q.Get("name") != "" {
			break // no port of ingot's has a name
		}
		return badRequest("ingot lists ports by device_id, id or a name only.")
	default:
		return badRequest("ingot lists ports by device_id, id or a name only.")
	}
	if !r.authorized {
		// Nothing was found to decide on: the caller may still list its own.
		if err := r.authorize(policy.Ports, r.own()); err != nil {
			return err
		}
	}
	out := make([]map[string]any, 0, len(ports))
	for _, p := range ports {
		if q.Has("network_id") && q.Get("network_id") != p.NetworkID {
			continue
		}
		out = append(out, portView(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"ports": out})
	return nil
}

// portsVisible reports whether the caller may see the ports of server id
// (its project's, or an admin's), checking the ports rule on it; an
// unknown or invisible server lists nothing, as Neutron filters by project.
func (s *server) portsVisible(r *request, serverID string) (bool, error) {
	if !isUUID(serverID) {
		return false, nil
	}
	sv, err := s.cfg.Store.GetServer(r.Context(), serverID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get server %s: %w", serverID, err)
	}
	if !r.sees(sv.ProjectID) {
		return false, nil
	}
	if err := r.authorize(policy.Ports, target(sv.ProjectID, sv.UserID)); err != nil {
		return false, err
	}
	return true, nil
}
