// Package neutronsim is an in-process Neutron for tests and the
// deterministic simulation: networks, subnets, ports (with bare-metal
// binding as the test ML2 driver of internal/neutrontest does it) and
// security groups, over Neutron's v2.0 JSON with Neutron's error types and
// the policy checks a build meets (a member's fixed IP on a network it does
// not own, binding:* admin-only). internal/neutron's contract test holds it
// to the real neutron-server.
//
// IDs, MACs and times come from counters and Options.Now, so a run is
// reproducible. Everything is in memory; the handler is safe for
// concurrent use.
package neutronsim

import (
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// Identity is what a token stands for.
type Identity struct {
	ProjectID string
	Admin     bool
}

// Options configures a Sim.
type Options struct {
	// Identify resolves a token (X-Auth-Token); false answers 401.
	Identify func(token string) (Identity, bool)
	// Now gives created_at (whole seconds, as Neutron); default time.Now.
	Now func() time.Time
}

// Sim is one simulated Neutron.
type Sim struct {
	opts Options

	mu       sync.Mutex
	seq      int
	networks map[string]*network
	subnets  map[string]*subnet
	ports    map[string]*port
	groups   map[string]*group
	refused  map[string]bool
}

type network struct {
	ID, Name, ProjectID string
	Shared              bool
	MTU                 int
	Type, Physnet       string
	Segment             int
	Subnets             []string
}

type subnet struct {
	ID, NetworkID, Name, ProjectID string
	IPVersion                      int
	Prefix                         netip.Prefix
	Gateway                        string
	DNS                            []string
	Routes                         []Route
	Pools                          []Pool
	V6Address, V6RA                string
	next                           netip.Addr
}

type port struct {
	ID, NetworkID, Name, ProjectID string
	DeviceID, DeviceOwner          string
	MAC                            string
	IPs                            []fixedIP
	Groups                         []string
	Host, VNIC, VIF                string
	Profile                        map[string]any
	Status                         string
	Created                        string
}

type fixedIP struct {
	SubnetID  string `json:"subnet_id"`
	IPAddress string `json:"ip_address"`
}

type group struct {
	ID, Name, ProjectID string
}

// Route is a host route.
type Route struct {
	Destination string `json:"destination"`
	NextHop     string `json:"nexthop"`
}

// Pool is an allocation pool.
type Pool struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// New makes an empty Sim.
func New(o Options) *Sim {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Identify == nil {
		o.Identify = func(string) (Identity, bool) { return Identity{}, false }
	}
	return &Sim{opts: o, networks: map[string]*network{}, subnets: map[string]*subnet{},
		ports: map[string]*port{}, groups: map[string]*group{}, refused: map[string]bool{}}
}

// id returns the next UUID-shaped id; kind tells resources apart at a glance.
func (s *Sim) id(kind int) string {
	s.seq++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", kind, s.seq)
}

// NetworkSpec is a provider network made by an operator.
type NetworkSpec struct {
	Name      string
	ProjectID string
	Shared    bool
	// Physnet and VLAN: a flat segment unless VLAN is set.
	Physnet string
	VLAN    int
	MTU     int // default 1500
}

// AddNetwork adds a network and returns its id.
func (s *Sim) AddNetwork(n NetworkSpec) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	nw := &network{ID: s.id(1), Name: n.Name, ProjectID: n.ProjectID, Shared: n.Shared, MTU: n.MTU,
		Type: "flat", Physnet: n.Physnet, Segment: n.VLAN}
	if n.VLAN != 0 {
		nw.Type = "vlan"
	}
	if nw.MTU == 0 {
		nw.MTU = 1500
	}
	s.networks[nw.ID] = nw
	return nw.ID
}

// SubnetSpec is a subnet; Gateway empty takes the prefix's first address
// (for IPv6 the subnet-router anycast address, as Neutron).
type SubnetSpec struct {
	NetworkID, Name, CIDR, Gateway string
	DNS                            []string
	Routes                         []Route
	Pools                          []Pool
	IPv6AddressMode, IPv6RAMode    string
}

// AddSubnet adds a subnet to an existing network and returns its id.
func (s *Sim) AddSubnet(o SubnetSpec) (string, error) {
	prefix, err := netip.ParsePrefix(o.CIDR)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	nw := s.networks[o.NetworkID]
	if nw == nil {
		return "", fmt.Errorf("neutronsim: no network %s", o.NetworkID)
	}
	sn := &subnet{ID: s.id(2), NetworkID: nw.ID, Name: o.Name, ProjectID: nw.ProjectID, Prefix: prefix.Masked(),
		Gateway: o.Gateway, DNS: o.DNS, Routes: o.Routes, Pools: o.Pools,
		V6Address: o.IPv6AddressMode, V6RA: o.IPv6RAMode, IPVersion: 4}
	if prefix.Addr().Is6() {
		sn.IPVersion = 6
	}
	first := sn.Prefix.Addr()
	if sn.IPVersion == 4 {
		first = first.Next()
	}
	if sn.Gateway == "" {
		sn.Gateway = first.String()
	}
	if sn.Pools == nil {
		sn.Pools = []Pool{{Start: first.Next().String(), End: lastAddr(sn.Prefix).String()}}
	}
	sn.next, _ = netip.ParseAddr(sn.Pools[0].Start)
	s.subnets[sn.ID] = sn
	nw.Subnets = append(nw.Subnets, sn.ID)
	return sn.ID, nil
}

// lastAddr is the last usable address (IPv4: before broadcast).
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	if a.Is4() {
		a = a.Prev()
	}
	return a
}

// RefuseBinding makes bindings to these hosts fail (binding_failed),
// replacing the previous list.
func (s *Sim) RefuseBinding(hosts ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused = map[string]bool{}
	for _, h := range hosts {
		s.refused[h] = true
	}
}

// PortCount counts the ports with that device_id ("" counts all).
func (s *Sim) PortCount(deviceID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.ports {
		if deviceID == "" || p.DeviceID == deviceID {
			n++
		}
	}
	return n
}
