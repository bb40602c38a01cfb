// Package network is ingot's embedded IPAM: networks from the configuration,
// one port (MAC and IPv4 address) per requested network per server.
package network

import (
	"net/netip"
	"strings"
)

// Network is a configured network.
type Network struct {
	ID         string // UUID
	Name       string
	CIDR       netip.Prefix
	Gateway    netip.Addr // zero when none
	RangeStart netip.Addr // first allocatable address
	RangeEnd   netip.Addr // last allocatable address
	MTU        int        // 0: not set (the machine keeps its default)
	// DNS are the nameservers the machine is told about (network_data.json services).
	DNS []netip.Addr
	// Routes are static routes beyond the default route via Gateway.
	Routes []Route
	// PhysicalNetwork names the Ironic physical_network the network is on:
	// only Ironic ports of that physical network (or of none) may carry it.
	PhysicalNetwork string
	// DHCP: an external DHCP server hands out the address; the machine is
	// told to ask for it (ipv4_dhcp) instead of given a static address.
	DHCP bool
	// Given: described by a network service (Neutron), as it is; Defaults
	// fills nothing (a subnet without a gateway has none).
	Given bool
}

// Route is a static route: Destination reached through Gateway.
type Route struct {
	Destination netip.Prefix
	Gateway     netip.Addr
}

// Networks is the configured set, looked up by id or name.
type Networks []Network

// Lookup finds a network by id (case-insensitive), then by exact name.
func (ns Networks) Lookup(ref string) (Network, bool) {
	for _, n := range ns {
		if strings.EqualFold(n.ID, ref) {
			return n, true
		}
	}
	for _, n := range ns {
		if n.Name == ref {
			return n, true
		}
	}
	return Network{}, false
}
