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
	MTU        int
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
