package lookup

import (
	"net/http"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/policy"
)

// Nova's os-networks is a proxy of Neutron's network list, served up to
// microversion 2.35 (404 from 2.36, as every network proxy). Since
// nova-network is gone it fills two members, id and label (the network's
// name), and sends every other member as null; an admin gets the longer
// list of (null) members. ingot answers it from the configured networks,
// which are shared with every project, or with Neutron from the networks
// the caller's project may use (its own and shared ones; an admin's, all),
// as Nova's list with the caller's token shows them.

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

// mvNoNetworkProxy (2.36) removed Nova's network proxies.
const mvNoNetworkProxy = 36

func (s *Service) NovaNetworkRoutes() {
	s.Compute("GET /v2.1/os-networks", s.listNovaNetworks)
	s.Compute("GET /v2.1/os-networks/{id}", s.showNovaNetwork)
}

// novaNetworkView is Nova's network_dict for a Neutron network: a map, as
// its members are a list of names, all null but id and label.
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

func (s *Service) listNovaNetworks(w http.ResponseWriter, r *core.Request) error {
	if r.MV.AtLeast(mvNoNetworkProxy) {
		return core.NotFound("The resource could not be found.")
	}
	if err := r.Authorize(policy.NovaNetworksList, r.Own()); err != nil {
		return err
	}
	admin := r.IsAdmin()
	nets, err := s.novaNetworks(r)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(nets))
	for _, n := range nets {
		out = append(out, novaNetworkView(n, admin))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Networks []map[string]any `json:"networks"`
	}{out})
	return nil
}

func (s *Service) showNovaNetwork(w http.ResponseWriter, r *core.Request) error {
	if r.MV.AtLeast(mvNoNetworkProxy) {
		return core.NotFound("The resource could not be found.")
	}
	if err := r.Authorize(policy.NovaNetworksShow, r.Own()); err != nil {
		return err
	}
	id := r.PathValue("id")
	nets, err := s.novaNetworks(r)
	if err != nil {
		return err
	}
	for _, n := range nets {
		if strings.EqualFold(n.ID, id) {
			core.WriteJSON(w, http.StatusOK, struct {
				Network map[string]any `json:"network"`
			}{novaNetworkView(n, r.IsAdmin())})
			return nil
		}
	}
	return core.NotFound("Network not found")
}

// novaNetworks are the networks os-networks shows the caller.
func (s *Service) novaNetworks(r *core.Request) (network.Networks, error) {
	if s.Cfg.Neutron == nil {
		return s.Cfg.Networks, nil
	}
	all, err := s.Cfg.Neutron.ListNetworks(r.Context())
	if err != nil {
		return nil, core.NeutronError(err, core.NotFound("Network not found"))
	}
	var out network.Networks
	admin := r.IsAdmin()
	for _, n := range all {
		if admin || n.Shared || n.ProjectID == r.Ident.ProjectID {
			out = append(out, network.Network{ID: n.ID, Name: n.Name})
		}
	}
	return out, nil
}
