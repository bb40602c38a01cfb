package api

import (
	"net/http"
	"strings"

	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/policy"
)

// Nova's os-networks is a proxy of Neutron's network list, served up to
// microversion 2.35 (404 from 2.36, as every network proxy). Since
// nova-network is gone it fills two members, id and label (the network's
// name), and sends every other member as null; an admin gets the longer
// list of (null) members. ingot answers it from the configured networks,
// which are shared with every project.

// novaNetworkFields are the members Nova sends to everyone; the admin
// fields follow for admins.
var (
	novaNetworkFields = []string{"id", "cidr", "netmask", "gateway", "broadcast", "dns1", "dns2",
		"cidr_v6", "gateway_v6", "label", "netmask_v6"}
	novaNetworkAdminFields = []string{"created_at", "updated_at", "deleted_at", "deleted",
		"injected", "bridge", "vlan", "vpn_public_address", "vpn_public_port", "vpn_private_address", "dhcp_start",
		"project_id", "host", "bridge_interface", "multi_host", "priority", "rxtx_base", "mtu", "dhcp_server",
		"enable_dhcp", "share_address"}
)

// maxProxyMinor is the last microversion of Nova's network proxies.
const maxProxyMinor = 35

func (s *server) novaNetworkRoutes() {
	s.compute("GET /v2.1/os-networks", s.listNovaNetworks)
	s.compute("GET /v2.1/os-networks/{id}", s.showNovaNetwork)
}

// novaNetworkView is Nova's network_dict for a Neutron network.
func novaNetworkView(n network.Network, admin bool) map[string]any {
	out := map[string]any{}
	fields := novaNetworkFields
	if admin {
		fields = append(append([]string(nil), fields...), novaNetworkAdminFields...)
	}
	for _, f := range fields {
		out[f] = nil
	}
	out["id"], out["label"] = n.ID, n.Name
	return out
}

func (s *server) listNovaNetworks(w http.ResponseWriter, r *request) error {
	if r.mv.atLeast(maxProxyMinor + 1) {
		return notFound("The resource could not be found.")
	}
	if err := r.authorize(policy.NovaNetworksList, r.own()); err != nil {
		return err
	}
	admin := r.isAdmin()
	out := make([]map[string]any, 0, len(s.cfg.Networks))
	for _, n := range s.cfg.Networks {
		out = append(out, novaNetworkView(n, admin))
	}
	writeJSON(w, http.StatusOK, map[string]any{"networks": out})
	return nil
}

func (s *server) showNovaNetwork(w http.ResponseWriter, r *request) error {
	if r.mv.atLeast(maxProxyMinor + 1) {
		return notFound("The resource could not be found.")
	}
	if err := r.authorize(policy.NovaNetworksShow, r.own()); err != nil {
		return err
	}
	id := r.PathValue("id")
	for _, n := range s.cfg.Networks {
		if strings.EqualFold(n.ID, id) {
			writeJSON(w, http.StatusOK, map[string]any{"network": novaNetworkView(n, r.isAdmin())})
			return nil
		}
	}
	return notFound("Network not found")
}
