package servers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"slices"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/neutron"
)

// neutronRequest is the networks member resolved against Neutron: the
// network ids (one port each), with the fixed IPs and the user's own
// ports by network.
type neutronRequest struct {
	networks  []string
	fixedIPs  map[string]string
	userPorts map[string]string
}

// resolveNeutronNetworks reads the networks member as Nova does with
// Neutron: [{uuid, fixed_ip, port, tag}], "auto" (the one network the
// project may use) or "none"; every network, port and address is checked
// in Neutron (core.NetworkResolver) with Nova's answers.
func (s *Service) resolveNeutronNetworks(ctx context.Context, project string, raw json.RawMessage, count int) (neutronRequest, error) {
	nr := neutronResolver{s.Cfg.Neutron}
	var out neutronRequest
	var word string
	if raw == nil || string(raw) == "null" {
		word = "auto"
	} else if json.Unmarshal(raw, &word) != nil {
		word = ""
	}
	switch word {
	case "none":
		return out, nil
	case "auto":
		ids, err := nr.Usable(ctx, project)
		if err != nil {
			return out, err
		}
		switch len(ids) {
		case 0:
			return out, nil
		case 1:
			out.networks = ids
			return out, nil
		}
		return out, core.Conflict("Multiple possible networks found, use a Network ID to be more specific.")
	case "":
	default:
		return out, core.BadRequest("Invalid input for field/attribute networks. Value: %s. It must be a list, \"auto\" or \"none\".", raw)
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return out, core.BadRequest("Invalid input for field/attribute networks. Value: %s. It must be a list of objects, \"auto\" or \"none\".", raw)
	}
	for _, item := range list {
		netID, fixedIP, portID, err := networkEntry(item)
		if err != nil {
			return out, err
		}
		if portID != "" {
			if count > 1 {
				return out, core.BadRequest("Unable to launch multiple instances with a single configured port ID. Please launch your instance one by one with different ports.")
			}
			if netID, err = nr.Port(ctx, project, portID); err != nil {
				return out, err
			}
		} else if err := nr.Network(ctx, project, netID); err != nil {
			return out, err
		}
		if slices.Contains(out.networks, netID) {
			return out, core.BadRequest("Network %s is requested twice; ingot allocates one port per network.", netID)
		}
		if fixedIP != "" {
			if count > 1 {
				return out, core.BadRequest("max_count cannot be greater than 1 if an fixed_ip is specified.")
			}
			if err := nr.FixedIP(ctx, netID, fixedIP); err != nil {
				return out, err
			}
			out.fixedIPs = setKey(out.fixedIPs, netID, fixedIP)
		}
		if portID != "" {
			out.userPorts = setKey(out.userPorts, netID, portID)
		}
		out.networks = append(out.networks, netID)
	}
	return out, nil
}

func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// networkEntry reads one {uuid, fixed_ip, port, tag} as Nova's schema:
// a port, or a network uuid (with or without a fixed IPv4 or IPv6 address).
func networkEntry(item map[string]json.RawMessage) (netID, fixedIP, portID string, err error) {
	if item == nil {
		return "", "", "", core.BadRequest("Invalid input for field/attribute networks: each entry must be an object.")
	}
	for k := range item {
		switch k {
		case "uuid", "tag", "port", "fixed_ip":
		default:
			return "", "", "", core.BadRequest("Invalid input for field/attribute networks. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	if netID, err = core.OptionalString(item, "uuid", 36); err != nil {
		return "", "", "", err
	}
	if portID, err = core.OptionalString(item, "port", 36); err != nil {
		return "", "", "", err
	}
	if fixedIP, err = core.OptionalString(item, "fixed_ip", 64); err != nil {
		return "", "", "", err
	}
	switch {
	case portID != "" && !core.IsUUID(portID):
		return "", "", "", core.BadRequest("Bad networks format: port uuid is not in proper format (%s)", portID)
	case portID != "" && fixedIP != "":
		// Nova: a port has its addresses already.
		return "", "", "", core.BadRequest("Invalid input for field/attribute networks: fixed_ip cannot be given with a port.")
	case portID != "":
		return "", "", portID, nil
	case netID == "":
		return "", "", "", core.BadRequest("Invalid input for field/attribute networks: each entry needs a uuid or a port.")
	case !core.IsUUID(netID):
		return "", "", "", core.BadRequest("Bad networks format: network uuid is not in proper format (%s)", netID)
	}
	if fixedIP != "" && !validIP(fixedIP) {
		return "", "", "", core.BadRequest("Invalid input for field/attribute fixed_ip. Value: %s. '%s' is not a 'ipv4' or 'ipv6'.", fixedIP, fixedIP)
	}
	return netID, fixedIP, "", nil
}

func validIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// neutronResolver checks what a create asks of Neutron, with Nova's answers.
type neutronResolver struct{ n core.Neutron }

// usableBy: Nova lets a project use its own networks and shared ones.
func usableBy(n neutron.Network, project string) bool {
	return n.Shared || n.ProjectID == project
}

// Usable lists the networks "auto" may take: the project's and the shared
// ones, not external.
func (r neutronResolver) Usable(ctx context.Context, project string) ([]string, error) {
	all, err := r.n.ListNetworks(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	var ids []string
	for _, n := range all {
		if usableBy(n, project) && !n.External {
			ids = append(ids, n.ID)
		}
	}
	return ids, nil
}

// Network checks that the project may put a port on the network.
func (r neutronResolver) Network(ctx context.Context, project, id string) error {
	n, err := r.n.GetNetwork(ctx, id)
	if errors.Is(err, neutron.ErrNetworkNotFound) || errors.Is(err, neutron.ErrNotFound) || (err == nil && !usableBy(n, project)) {
		return core.BadRequest("Network %s could not be found.", id)
	}
	return unavailable(err)
}

// Port resolves a user's pre-created port to its network: it must be the
// project's and free (Nova: PortNotFound 400, PortInUse 409).
func (r neutronResolver) Port(ctx context.Context, project, id string) (string, error) {
	p, err := r.n.GetPort(ctx, id)
	if errors.Is(err, neutron.ErrPortNotFound) || errors.Is(err, neutron.ErrNotFound) || (err == nil && p.ProjectID != project) {
		return "", core.BadRequest("Port %s could not be found.", id)
	}
	if err != nil {
		return "", unavailable(err)
	}
	if p.DeviceID != "" {
		return "", core.Conflict("Port %s is still in use.", id)
	}
	return p.NetworkID, nil
}

// FixedIP checks that no port of the network holds the address (Nova's
// FixedIpAlreadyInUse, 400).
func (r neutronResolver) FixedIP(ctx context.Context, networkID, ip string) error {
	ports, err := r.n.ListPorts(ctx, neutron.PortFilter{NetworkID: networkID})
	if err != nil {
		return unavailable(err)
	}
	for _, p := range ports {
		if p.HasAddress(ip) {
			return core.BadRequest("Fixed IP address %s is already in use on instance %s.", ip, p.DeviceID)
		}
	}
	return nil
}

// unavailable: Neutron did not answer as it should; the create is not
// taken (a 503 the client may retry).
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return core.Unavailable("The network service is unavailable; try again later.")
}

// neutronInterfaces answers os-interface from Neutron, as Nova does: the
// ports whose device is the server (one call).
func (s *Service) neutronInterfaces(w http.ResponseWriter, r *core.Request, serverID string) error {
	ports, err := s.Cfg.Neutron.ListPorts(r.Context(), neutron.PortFilter{DeviceID: serverID})
	if err != nil {
		return unavailable(err)
	}
	out := make([]any, 0, len(ports))
	for _, p := range ports {
		out = append(out, interfaceShown(r, neutronInterface(p)))
	}
	core.WriteJSON(w, http.StatusOK, interfacesBody{InterfaceAttachments: out})
	return nil
}

// neutronInterface is Nova's view of a Neutron port.
func neutronInterface(p neutron.Port) interfaceAttachment {
	ips := make([]fixedIP, 0, len(p.FixedIPs))
	for _, f := range p.FixedIPs {
		ips = append(ips, fixedIP{IPAddress: f.IPAddress, SubnetID: f.SubnetID})
	}
	return interfaceAttachment{PortID: p.ID, NetID: p.NetworkID, MACAddr: p.MACAddress, PortState: p.Status, FixedIPs: ips}
}
