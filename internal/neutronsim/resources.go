package neutronsim

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

func (s *Sim) netVisible(who Identity, n *network) bool {
	return who.Admin || n.Shared || n.ProjectID == who.ProjectID
}

func (s *Sim) renderNetwork(who Identity, n *network) map[string]any {
	out := map[string]any{"id": n.ID, "name": n.Name, "project_id": n.ProjectID, "tenant_id": n.ProjectID,
		"shared": n.Shared, "mtu": n.MTU, "status": "ACTIVE", "admin_state_up": true,
		"router:external": false, "subnets": append([]string{}, n.Subnets...)}
	if who.Admin { // provider attributes are admin-only
		out["provider:network_type"] = n.Type
		out["provider:physical_network"] = n.Physnet
		out["provider:segmentation_id"] = nil
		if n.Segment != 0 {
			out["provider:segmentation_id"] = n.Segment
		}
	}
	return out
}

func (s *Sim) listNetworks(who Identity) (int, any, *fault) {
	out := []map[string]any{}
	for _, n := range sorted(s.networks) {
		if s.netVisible(who, n) {
			out = append(out, s.renderNetwork(who, n))
		}
	}
	return http.StatusOK, map[string]any{"networks": out}, nil
}

func (s *Sim) getNetwork(who Identity, id string) (int, any, *fault) {
	n := s.networks[id]
	if n == nil || !s.netVisible(who, n) {
		return 0, nil, notFound("Network", "Network", id)
	}
	return http.StatusOK, map[string]any{"network": s.renderNetwork(who, n)}, nil
}

func (s *Sim) listSubnets(who Identity, networkID string) (int, any, *fault) {
	out := []map[string]any{}
	for _, sn := range sorted(s.subnets) {
		n := s.networks[sn.NetworkID]
		if (networkID != "" && sn.NetworkID != networkID) || !s.netVisible(who, n) {
			continue
		}
		out = append(out, map[string]any{"id": sn.ID, "network_id": sn.NetworkID, "name": sn.Name,
			"project_id": sn.ProjectID, "ip_version": sn.IPVersion, "cidr": sn.Prefix.String(),
			"gateway_ip": sn.Gateway, "dns_nameservers": nonNil(sn.DNS), "host_routes": nonNil(sn.Routes),
			"allocation_pools": sn.Pools, "enable_dhcp": true,
			"ipv6_address_mode": nullable(sn.V6Address), "ipv6_ra_mode": nullable(sn.V6RA)})
	}
	return http.StatusOK, map[string]any{"subnets": out}, nil
}

func (s *Sim) portVisible(who Identity, p *port) bool {
	return who.Admin || p.ProjectID == who.ProjectID
}

func (s *Sim) visiblePort(who Identity, id string) (*port, *fault) {
	p := s.ports[id]
	if p == nil || !s.portVisible(who, p) {
		return nil, notFound("Port", "Port", id)
	}
	return p, nil
}

func (s *Sim) renderPort(who Identity, p *port) map[string]any {
	out := map[string]any{"id": p.ID, "network_id": p.NetworkID, "name": p.Name, "project_id": p.ProjectID,
		"tenant_id": p.ProjectID, "device_id": p.DeviceID, "device_owner": p.DeviceOwner, "mac_address": p.MAC,
		"fixed_ips": nonNil(p.IPs), "security_groups": nonNil(p.Groups), "status": p.Status,
		"admin_state_up": true, "created_at": p.Created, "updated_at": p.Created,
		"binding:host_id": nil, "binding:vnic_type": p.VNIC, "binding:vif_type": nil, "binding:profile": nil}
	if who.Admin { // binding:* but vnic_type is admin-only
		out["binding:host_id"], out["binding:vif_type"], out["binding:profile"] = p.Host, p.VIF, p.Profile
	}
	return out
}

func (s *Sim) listPorts(who Identity, q query) (int, any, *fault) {
	out := []map[string]any{}
	for _, p := range sorted(s.ports) {
		if !s.portVisible(who, p) || !match(q, "device_id", p.DeviceID) || !match(q, "network_id", p.NetworkID) ||
			!match(q, "name", p.Name) || !match(q, "project_id", p.ProjectID) || !match(q, "mac_address", p.MAC) {
			continue
		}
		out = append(out, s.renderPort(who, p))
	}
	return http.StatusOK, map[string]any{"ports": out}, nil
}

func match(q query, key, v string) bool {
	w := q.Get(key)
	return w == "" || w == v
}

var bindingKeys = []string{"binding:host_id", "binding:profile", "binding:vnic_type"}

func (s *Sim) createPort(who Identity, b map[string]any) (int, any, *fault) {
	netID, _ := b["network_id"].(string)
	if netID == "" {
		return 0, nil, badRequest("Failed to parse request. Required attribute 'network_id' not specified")
	}
	n := s.networks[netID]
	if n == nil || !s.netVisible(who, n) {
		return 0, nil, notFound("Network", "Network", netID)
	}
	for _, k := range bindingKeys[:2] {
		if _, ok := b[k]; ok && !who.Admin {
			return 0, nil, policy("create_port:" + k)
		}
	}
	p := &port{ID: s.id(3), NetworkID: n.ID, ProjectID: who.ProjectID, Status: "DOWN", VNIC: "normal",
		VIF: "unbound", Profile: map[string]any{}, Created: s.opts.Now().UTC().Format("2006-01-02T15:04:05Z")}
	if pid := str(b, "project_id", str(b, "tenant_id", "")); pid != "" && who.Admin {
		p.ProjectID = pid
	}
	p.Name, p.DeviceID, p.DeviceOwner = str(b, "name", ""), str(b, "device_id", ""), str(b, "device_owner", "")
	p.MAC = str(b, "mac_address", fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", s.seq>>16&0xff, s.seq>>8&0xff, s.seq&0xff))
	if f := s.macFree(n.ID, p.MAC, ""); f != nil {
		return 0, nil, f
	}
	if f := s.allocate(who, n, p, b["fixed_ips"]); f != nil {
		return 0, nil, f
	}
	if f := s.setGroups(who, p, b); f != nil {
		return 0, nil, f
	}
	s.applyBinding(n, p, b)
	s.ports[p.ID] = p
	return http.StatusCreated, map[string]any{"port": s.renderPort(who, p)}, nil
}

func (s *Sim) macFree(networkID, mac, self string) *fault {
	for _, o := range s.ports {
		if o.NetworkID == networkID && o.ID != self && strings.EqualFold(o.MAC, mac) {
			return &fault{http.StatusConflict, "MacAddressInUse", fmt.Sprintf(
				"Unable to complete operation for network %s. The mac address %s is in use.", networkID, mac)}
		}
	}
	return nil
}

// allocate gives the port its asked addresses, or one from each subnet.
func (s *Sim) allocate(who Identity, n *network, p *port, asked any) *fault {
	list, _ := asked.([]any)
	for _, a := range list {
		m, _ := a.(map[string]any)
		ip := str(m, "ip_address", "")
		if ip == "" {
			continue
		}
		if !who.Admin && n.ProjectID != who.ProjectID {
			return policy("create_port:fixed_ips:ip_address")
		}
		addr, err := netip.ParseAddr(ip)
		if err != nil {
			return badRequest(fmt.Sprintf("Invalid input for ip_address. Reason: '%s' is not a valid IP address.", ip))
		}
		sn := s.subnetFor(n, addr)
		if sn == nil {
			return &fault{http.StatusBadRequest, "InvalidIpForNetwork",
				fmt.Sprintf("IP address %s is not a valid IP for any of the subnets on the specified network.", ip)}
		}
		if s.inUse(n.ID, addr) {
			return &fault{http.StatusConflict, "IpAddressAlreadyAllocated",
				fmt.Sprintf("IP address %s already allocated in subnet %s", ip, sn.ID)}
		}
		p.IPs = append(p.IPs, fixedIP{SubnetID: sn.ID, IPAddress: addr.String()})
	}
	if len(p.IPs) > 0 {
		return nil
	}
	for _, sid := range n.Subnets {
		sn := s.subnets[sid]
		addr, ok := s.nextFree(sn)
		if !ok {
			return &fault{http.StatusConflict, "IpAddressGenerationFailure",
				fmt.Sprintf("No more IP addresses available on network %s.", n.ID)}
		}
		p.IPs = append(p.IPs, fixedIP{SubnetID: sn.ID, IPAddress: addr.String()})
	}
	return nil
}

func (s *Sim) subnetFor(n *network, a netip.Addr) *subnet {
	for _, sid := range n.Subnets {
		if sn := s.subnets[sid]; sn.Prefix.Contains(a) {
			return sn
		}
	}
	return nil
}

func (s *Sim) inUse(networkID string, a netip.Addr) bool {
	for _, o := range s.ports {
		if o.NetworkID == networkID && slices.ContainsFunc(o.IPs, func(f fixedIP) bool { return f.IPAddress == a.String() }) {
			return true
		}
	}
	return false
}

func (s *Sim) nextFree(sn *subnet) (netip.Addr, bool) {
	end, _ := netip.ParseAddr(sn.Pools[len(sn.Pools)-1].End)
	for a := sn.next; a.IsValid() && a.Compare(end) <= 0; a = a.Next() {
		if !s.inUse(sn.NetworkID, a) {
			sn.next = a.Next()
			return a, true
		}
	}
	return netip.Addr{}, false
}

func (s *Sim) setGroups(who Identity, p *port, b map[string]any) *fault {
	asked, ok := b["security_groups"].([]any)
	if !ok {
		p.Groups = []string{s.defaultGroup(p.ProjectID).ID}
		return nil
	}
	p.Groups = nil
	for _, a := range asked {
		id, _ := a.(string)
		g := s.groups[id]
		if g == nil || (!who.Admin && g.ProjectID != who.ProjectID) {
			return notFound("SecurityGroup", "Security group", id)
		}
		p.Groups = append(p.Groups, id)
	}
	return nil
}

// applyBinding sets the binding fields present in b and binds as the test
// ML2 driver does: vnic baremetal on a flat or vlan segment, unless the host
// is refused (binding_failed, HTTP 200 all the same).
func (s *Sim) applyBinding(n *network, p *port, b map[string]any) {
	touched := false
	if v, ok := b["binding:host_id"]; ok {
		p.Host, _ = v.(string)
		touched = true
	}
	if v, ok := b["binding:vnic_type"].(string); ok {
		p.VNIC, touched = v, true
	}
	if v, ok := b["binding:profile"]; ok {
		p.Profile, _ = v.(map[string]any)
		if p.Profile == nil {
			p.Profile = map[string]any{}
		}
		touched = true
	}
	if !touched {
		return
	}
	switch {
	case p.Host == "":
		p.VIF, p.Status = "unbound", "DOWN"
	case p.VNIC == "baremetal" && !s.refused[p.Host] && (n.Type == "flat" || n.Type == "vlan"):
		p.VIF, p.Status = "other", "ACTIVE"
	default:
		p.VIF, p.Status = "binding_failed", "DOWN"
	}
}

func (s *Sim) updatePort(who Identity, id string, b map[string]any) (int, any, *fault) {
	p, f := s.visiblePort(who, id)
	if f != nil {
		return 0, nil, f
	}
	for _, k := range bindingKeys[:2] {
		if _, ok := b[k]; ok && !who.Admin {
			return 0, nil, policy("update_port:" + k)
		}
	}
	if v, ok := b["mac_address"]; ok {
		mac, _ := v.(string)
		if mac == "" { // null: a new MAC, as Ironic asks on teardown
			s.seq++
			mac = fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", s.seq>>16&0xff, s.seq>>8&0xff, s.seq&0xff)
		}
		if !strings.EqualFold(mac, p.MAC) {
			if p.VIF != "unbound" && p.VIF != "binding_failed" {
				return 0, nil, &fault{http.StatusConflict, "PortBound", fmt.Sprintf(
					"Unable to complete operation on port %s, port is already bound, port type: %s, old_mac %s, new_mac %s.",
					p.ID, p.VIF, p.MAC, mac)}
			}
			if f := s.macFree(p.NetworkID, mac, p.ID); f != nil {
				return 0, nil, f
			}
			p.MAC = mac
		}
	}
	if v, ok := b["name"].(string); ok {
		p.Name = v
	}
	if v, ok := b["device_id"].(string); ok {
		p.DeviceID = v
	}
	if v, ok := b["device_owner"].(string); ok {
		p.DeviceOwner = v
	}
	if _, ok := b["security_groups"]; ok {
		if f := s.setGroups(who, p, b); f != nil {
			return 0, nil, f
		}
	}
	s.applyBinding(s.networks[p.NetworkID], p, b)
	return http.StatusOK, map[string]any{"port": s.renderPort(who, p)}, nil
}

func (s *Sim) deletePort(who Identity, id string) (int, any, *fault) {
	if _, f := s.visiblePort(who, id); f != nil {
		return 0, nil, f
	}
	delete(s.ports, id)
	return http.StatusNoContent, nil, nil
}

// defaultGroup returns the project's "default" group, made on first use
// as Neutron does.
func (s *Sim) defaultGroup(project string) *group {
	for _, g := range s.groups {
		if g.ProjectID == project && g.Name == "default" {
			return g
		}
	}
	g := &group{ID: s.id(4), Name: "default", ProjectID: project}
	s.groups[g.ID] = g
	return g
}

// renderGroup has Neutron's four default rules: any egress, ingress from
// the group itself, for IPv4 and IPv6.
func (s *Sim) renderGroup(g *group) map[string]any {
	rules := []map[string]any{}
	for i, r := range [][2]string{{"egress", "IPv4"}, {"egress", "IPv6"}, {"ingress", "IPv4"}, {"ingress", "IPv6"}} {
		var remote any
		if r[0] == "ingress" {
			remote = g.ID
		}
		rules = append(rules, map[string]any{"id": fmt.Sprintf("%s-rule-%d", g.ID, i), "direction": r[0],
			"ethertype": r[1], "protocol": nil, "port_range_min": nil, "port_range_max": nil,
			"remote_ip_prefix": nil, "remote_group_id": remote, "security_group_id": g.ID, "project_id": g.ProjectID})
	}
	return map[string]any{"id": g.ID, "name": g.Name, "description": "Default security group",
		"project_id": g.ProjectID, "tenant_id": g.ProjectID, "security_group_rules": rules}
}

func (s *Sim) listGroups(who Identity, project string) (int, any, *fault) {
	if !who.Admin || project == who.ProjectID {
		s.defaultGroup(who.ProjectID)
	}
	out := []map[string]any{}
	for _, g := range sorted(s.groups) {
		if (who.Admin || g.ProjectID == who.ProjectID) && (project == "" || g.ProjectID == project) {
			out = append(out, s.renderGroup(g))
		}
	}
	return http.StatusOK, map[string]any{"security_groups": out}, nil
}

func (s *Sim) getGroup(who Identity, id string) (int, any, *fault) {
	g := s.groups[id]
	if g == nil || (!who.Admin && g.ProjectID != who.ProjectID) {
		return 0, nil, notFound("SecurityGroup", "Security group", id)
	}
	return http.StatusOK, map[string]any{"security_group": s.renderGroup(g)}, nil
}

// sorted returns a map's values by id (ids are sequential: creation order).
func sorted[T any](m map[string]*T) []*T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*T, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func str(m map[string]any, key, def string) string {
	if v, ok := m[key].(string); ok {
		return v
	}
	return def
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
