package adopt

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/portbind"
	"github.com/ingot-dev/ingot/internal/store"
)

// ports are the port rows of an adopted node: one per VIF Ironic lists
// (with the Ironic port or portgroup carrying it) and, with the embedded
// IPAM, one per address the node's config drive gives a VIF (a noop
// network interface keeps no VIFs). A reason when one VIF's port or
// address cannot be found: nothing of that instance is recorded then.
func (a *Adopter) ports(ctx context.Context, n ironic.Deployed, userGiven func(neutron.Port) bool) ([]store.Port, string, error) {
	vifs, err := a.d.Ironic.ListVIFs(ctx, n.UUID)
	if err != nil {
		return nil, "", fmt.Errorf("VIFs of node %s: %w", n.UUID, err)
	}
	var inv portbind.Inventory
	if len(vifs) > 0 {
		if inv, err = a.d.Ironic.NodePorts(ctx, n.UUID); err != nil {
			return nil, "", fmt.Errorf("ports of node %s: %w", n.UUID, err)
		}
	}
	if a.d.Neutron != nil {
		return a.neutronPorts(ctx, n, vifs, inv, userGiven)
	}
	found := configDriveAddresses(n.InstanceInfo)
	var out []store.Port
	seen := map[string]bool{}
	for _, vif := range vifs {
		seen[vif] = true
		addr, ok := found[vif]
		if !ok {
			return nil, fmt.Sprintf("port not found: no address for VIF %s in the node's config drive (Ironic shows it only under its show_instance_secrets policy)", vif), nil
		}
		p, why := a.embeddedPort(n, vif, addr, inv)
		if why != "" {
			return nil, why, nil
		}
		out = append(out, p)
	}
	for vif, addr := range found {
		if seen[vif] {
			continue
		}
		p, why := a.embeddedPort(n, vif, addr, inv)
		if why != "" {
			return nil, why, nil
		}
		out = append(out, p)
	}
	sortPorts(out)
	if why := oneEach(out); why != "" {
		return nil, why, nil
	}
	return out, "", nil
}

// embeddedPort is the row of a VIF with the embedded IPAM: its address
// in a configured network (the config drive's network_id, else the
// network whose range holds it).
func (a *Adopter) embeddedPort(n ironic.Deployed, vif string, addr cdAddress, inv portbind.Inventory) (store.Port, string) {
	ip, err := netip.ParseAddr(addr.IP)
	if err != nil {
		return store.Port{}, fmt.Sprintf("port not found: VIF %s has no valid address (%q)", vif, addr.IP)
	}
	netID := ""
	if nw, ok := a.d.Networks.Lookup(addr.NetworkID); ok && addr.NetworkID != "" && nw.CIDR.Contains(ip) {
		netID = nw.ID
	}
	for _, nw := range a.d.Networks {
		if netID == "" && nw.CIDR.Contains(ip) {
			netID = nw.ID
		}
	}
	if netID == "" {
		return store.Port{}, fmt.Sprintf("port not found: address %s of VIF %s is in no configured network", addr.IP, vif)
	}
	p := store.Port{ID: vif, NetworkID: netID, IP: ip.String(), MAC: strings.ToLower(addr.MAC), VIFNode: n.UUID}
	bindTo(&p, vif, inv)
	return p, ""
}

// neutronPorts records each VIF's Neutron port: as ingot's own (deleted
// with the server, as Nova deletes the ports it made), or, when userGiven
// says so, as a user's port (only unbound when the server goes, as Nova
// keeps the ports a user gave it). userGiven nil: every port is ingot's.
func (a *Adopter) neutronPorts(ctx context.Context, n ironic.Deployed, vifs []string, inv portbind.Inventory, userGiven func(neutron.Port) bool) ([]store.Port, string, error) {
	var out []store.Port
	for _, vif := range vifs {
		np, err := a.d.Neutron.GetPort(ctx, vif)
		if errors.Is(err, neutron.ErrPortNotFound) {
			return nil, fmt.Sprintf("port not found: Neutron has no port %s (VIF of node %s)", vif, n.UUID), nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("Neutron port %s: %w", vif, err)
		}
		if np.DeviceID != "" && np.DeviceID != n.InstanceUUID {
			return nil, fmt.Sprintf("conflict: Neutron port %s belongs to device %s, not %s", vif, np.DeviceID, n.InstanceUUID), nil
		}
		ip := ""
		for _, f := range np.FixedIPs {
			if a, err := netip.ParseAddr(f.IPAddress); err == nil && (ip == "" || a.Is4()) {
				ip = f.IPAddress
				if a.Is4() {
					break
				}
			}
		}
		if ip == "" {
			return nil, fmt.Sprintf("port not found: Neutron port %s has no address", vif), nil
		}
		// The row's own id is the port's: an adopted row needs no name to
		// be found again, its Neutron id is recorded with it.
		p := store.Port{ID: np.ID, NetworkID: np.NetworkID, IP: ip, MAC: strings.ToLower(np.MACAddress),
			VIFNode: n.UUID, NeutronID: np.ID, UserPort: userGiven != nil && userGiven(np)}
		bindTo(&p, vif, inv)
		out = append(out, p)
	}
	sortPorts(out)
	if why := oneEach(out); why != "" {
		return nil, why, nil
	}
	return out, "", nil
}

// bindTo records the Ironic port or portgroup carrying vif.
func bindTo(p *store.Port, vif string, inv portbind.Inventory) {
	for _, pg := range inv.Portgroups {
		if pg.VIF == vif {
			b := store.Binding{PortgroupUUID: pg.UUID, BondMode: pg.Mode, BondProperties: pg.Properties}
			for _, ip := range inv.Ports {
				if ip.Portgroup == pg.UUID {
					b.Members = append(b.Members, store.BondMember{PortUUID: ip.UUID, MAC: ip.MAC})
				}
			}
			p.Binding = b
			if p.MAC == "" {
				p.MAC = pg.MAC
			}
			return
		}
	}
	for _, ip := range inv.Ports {
		if ip.VIF == vif {
			p.Binding = store.Binding{PortUUID: ip.UUID}
			if p.MAC == "" {
				p.MAC = ip.MAC
			}
			return
		}
	}
}

// oneEach: ingot keeps one port per network per server.
func oneEach(ps []store.Port) string {
	seen := map[string]string{}
	for _, p := range ps {
		if other, ok := seen[p.NetworkID]; ok {
			return fmt.Sprintf("ports %s and %s are both on network %s: ingot keeps one port per network", other, p.ID, p.NetworkID)
		}
		seen[p.NetworkID] = p.ID
	}
	return ""
}
