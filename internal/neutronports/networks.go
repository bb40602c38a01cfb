package neutronports

import (
	"context"
	"net/netip"
	"time"

	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/store"
)

// networkTTL is how long a network's description is reused: the
// networking step and the deploy of one build read it once.
const networkTTL = 30 * time.Second

type described struct {
	net     neutron.Network
	subnets []neutron.Subnet
	at      time.Time
}

// describeNetwork reads a network and its subnets (two calls), or reuses
// what was read less than networkTTL ago.
func (b *Backend) describeNetwork(ctx context.Context, id string) (described, error) {
	b.mu.Lock()
	d, ok := b.nets[id]
	b.mu.Unlock()
	if ok && b.now().Sub(d.at) < networkTTL {
		return d, nil
	}
	n, err := b.nc.GetNetwork(ctx, id)
	if err != nil {
		return described{}, refused(err)
	}
	subnets, err := b.nc.ListSubnets(ctx, id)
	if err != nil {
		return described{}, err
	}
	d = described{net: n, subnets: subnets, at: b.now()}
	b.mu.Lock()
	b.nets[id] = d
	b.mu.Unlock()
	return d, nil
}

// Networks describes each port's network as network_data.json needs it,
// as Nova's netutils takes it from Neutron: the MTU and physical network
// of the network, the CIDR, gateway, host routes and DNS servers of the
// subnet that holds the port's address.
func (b *Backend) Networks(ctx context.Context, ports []store.Port) (network.Networks, error) {
	var out network.Networks
	seen := map[string]bool{}
	for _, p := range ports {
		if seen[p.NetworkID] {
			continue
		}
		seen[p.NetworkID] = true
		d, err := b.describeNetwork(ctx, p.NetworkID)
		if err != nil {
			return nil, err
		}
		out = append(out, describe(d.net, subnetOf(d.subnets, p.IP)))
	}
	return out, nil
}

// subnetOf is the IPv4 subnet holding ip (or the first IPv4 one).
func subnetOf(subnets []neutron.Subnet, ip string) neutron.Subnet {
	addr, _ := netip.ParseAddr(ip)
	var first *neutron.Subnet
	for i, sn := range subnets {
		pfx, err := netip.ParsePrefix(sn.CIDR)
		if err != nil || !pfx.Addr().Is4() {
			continue
		}
		if addr.IsValid() && pfx.Contains(addr) {
			return sn
		}
		if first == nil {
			first = &subnets[i]
		}
	}
	if first != nil {
		return *first
	}
	return neutron.Subnet{}
}

func describe(n neutron.Network, sn neutron.Subnet) network.Network {
	out := network.Network{ID: n.ID, Name: n.Name, MTU: n.MTU, PhysicalNetwork: n.PhysicalNetwork, Given: true}
	out.CIDR, _ = netip.ParsePrefix(sn.CIDR)
	out.Gateway, _ = netip.ParseAddr(sn.GatewayIP) // none when gateway_ip is null
	for _, d := range sn.DNSNameservers {
		if a, err := netip.ParseAddr(d); err == nil {
			out.DNS = append(out.DNS, a)
		}
	}
	for _, r := range sn.HostRoutes {
		dst, err1 := netip.ParsePrefix(r.Destination)
		gw, err2 := netip.ParseAddr(r.NextHop)
		if err1 == nil && err2 == nil {
			out.Routes = append(out.Routes, network.Route{Destination: dst, Gateway: gw})
		}
	}
	return out
}
