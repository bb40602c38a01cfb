package neutron_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/neutronsim"
	"github.com/ingot-dev/ingot/internal/neutrontest"
)

// TestAgainstSim runs the same contract against the in-process Neutron,
// with fixed tokens standing for the keystonetest users.
func TestAgainstSim(t *testing.T) {
	ids := map[string]neutronsim.Identity{
		"tok-admin":    {ProjectID: "project-admin", Admin: true},
		"tok-ingot":    {ProjectID: "project-service", Admin: true},
		"tok-member-a": {ProjectID: "project-a"},
		"tok-member-b": {ProjectID: "project-b"},
	}
	sim := neutronsim.New(neutronsim.Options{Identify: func(tok string) (neutronsim.Identity, bool) {
		id, ok := ids[tok]
		return id, ok
	}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	pc := &gophercloud.ProviderClient{}
	pc.SetToken("tok-ingot")
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/", ResourceBase: srv.URL + "/v2.0/", Type: "network"}
	runContract(t, &world{b: simBackend{sim}, sc: sc, service: neutron.New(sc, 0),
		token:        func(_ *testing.T, user string) string { return "tok-" + user },
		project:      func(user string) string { return ids["tok-"+user].ProjectID },
		refusedToken: func(*testing.T) string { return "tok-revoked" }})
}

// simBackend is the operator's side of the simulator.
type simBackend struct{ s *neutronsim.Sim }

func (b simBackend) CreateNetwork(t testing.TB, o neutrontest.NetworkOptions) neutrontest.Network {
	physnet := o.Physnet
	if physnet == "" {
		physnet = neutrontest.PhysicalNetwork
	}
	id := b.s.AddNetwork(neutronsim.NetworkSpec{Name: o.Name, ProjectID: o.ProjectID, Shared: o.Shared,
		Physnet: physnet, VLAN: o.VLAN, MTU: o.MTU})
	mtu := o.MTU
	if mtu == 0 {
		mtu = 1500
	}
	return neutrontest.Network{ID: id, Name: o.Name, MTU: mtu}
}

func (b simBackend) CreateSubnet(t testing.TB, o neutrontest.SubnetOptions) string {
	spec := neutronsim.SubnetSpec{NetworkID: o.NetworkID, Name: o.Name, CIDR: o.CIDR, Gateway: o.Gateway,
		DNS: o.DNS, IPv6AddressMode: o.IPv6AddressMode, IPv6RAMode: o.IPv6RAMode}
	for _, r := range o.HostRoutes {
		spec.Routes = append(spec.Routes, neutronsim.Route{Destination: r.Destination, NextHop: r.NextHop})
	}
	for _, p := range o.Pools {
		spec.Pools = append(spec.Pools, neutronsim.Pool{Start: p.Start, End: p.End})
	}
	id, err := b.s.AddSubnet(spec)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (b simBackend) RefuseBinding(t testing.TB, hosts ...string) {
	b.s.RefuseBinding(hosts...)
	t.Cleanup(func() { b.s.RefuseBinding() })
}

// PortCount understands the one query the contract uses, device_id=X.
func (b simBackend) PortCount(t testing.TB, query string) int {
	dev, ok := strings.CutPrefix(query, "device_id=")
	if !ok {
		t.Fatalf("simBackend: query %q", query)
	}
	return b.s.PortCount(dev)
}
