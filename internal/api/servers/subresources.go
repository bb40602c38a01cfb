package servers

import (
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/lookup"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Read-only server sub-resources and small documents that clients such as
// Terraform's OpenStack provider and the SDK read after a create. ingot has
// no tags or zones of its own yet, so those answer empty, as Nova
// does for a server without any.

func (s *Service) SubresourceRoutes() {
	s.Compute("GET /v2.1/servers/{id}/metadata", s.serverMetadata)
	s.Compute("GET /v2.1/servers/{id}/ips", s.serverIPs)
	s.Compute("GET /v2.1/servers/{id}/os-interface", s.serverInterfaces)
	s.Compute("GET /v2.1/servers/{id}/os-volume_attachments", s.serverVolumeAttachments)
	s.Compute("GET /v2.1/servers/{id}/os-volume_attachments/{volume}", s.serverVolumeAttachment)
	s.Compute("GET /v2.1/os-availability-zone", s.admin.AvailabilityZones)
	s.Compute("GET /v2.1/os-availability-zone/detail", s.admin.AvailabilityZonesDetail)
	for _, prefix := range []string{"/v2.1", "/v2.1/v2.0", "/network/v2.0"} {
		s.Plain("GET "+prefix+"/ports", s.lookup.ListPorts)
	}
}

func (s *Service) serverMetadata(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServerMetadataIndex)
	if err != nil {
		return err
	}
	md := sv.Spec.Metadata
	if md == nil {
		md = map[string]string{}
	}
	core.WriteJSON(w, http.StatusOK, serverMetadata{Metadata: md})
	return nil
}

func (s *Service) serverIPs(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.IPsIndex)
	if err != nil {
		return err
	}
	ports, err := s.Cfg.Store.Ports(r.Context(), sv.ID)
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
	core.WriteJSON(w, http.StatusOK, addressesBody{Addresses: s.renderer(r).basicAddresses(addrs)})
	return nil
}

func (s *Service) serverInterfaces(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.InterfacesList)
	if err != nil {
		return err
	}
	if s.Cfg.Neutron != nil {
		return s.neutronInterfaces(w, r, sv.ID)
	}
	ports, err := s.Cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("ports of %s: %w", sv.ID, err)
	}
	out := make([]any, 0, len(ports))
	for _, p := range ports {
		out = append(out, interfaceShown(r, embeddedInterface(p)))
	}
	core.WriteJSON(w, http.StatusOK, interfacesBody{InterfaceAttachments: out})
	return nil
}

// embeddedInterface is Nova's view of an embedded IPAM's port.
func embeddedInterface(p store.Port) interfaceAttachment {
	return interfaceAttachment{PortID: p.ID, NetID: p.NetworkID, MACAddr: p.MAC, PortState: lookup.PortStatus(p),
		FixedIPs: []fixedIP{{SubnetID: lookup.SubnetID(p.NetworkID), IPAddress: p.IP}}}
}

// serverEmpty answers an always-empty list of a visible server.
func (s *Service) serverEmpty(key, rule string) core.HandlerFunc {
	return func(w http.ResponseWriter, r *core.Request) error {
		if _, err := s.visibleServer(r, r.PathValue("id"), rule); err != nil {
			return err
		}
		core.WriteJSON(w, http.StatusOK, map[string][]any{key: {}})
		return nil
	}
}
