package neutron_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/servicecatalog"
)

// backend is what the contract needs of a Neutron beyond the adapter: the
// operator's side (provider networks, subnets), the test driver's refusals
// and a port count. neutrontest.Env (the real one) and simBackend have it.
type backend interface {
	CreateNetwork(t testing.TB, o neutrontest.NetworkOptions) neutrontest.Network
	CreateSubnet(t testing.TB, o neutrontest.SubnetOptions) string
	RefuseBinding(t testing.TB, hosts ...string)
	PortCount(t testing.TB, query string) int
}

// world is one Neutron shared by the contract's subtests, with a shared flat
// provider network and its subnet, and the tokens of the keystonetest users
// (admin, member-a, member-b; ingot for the service).
type world struct {
	b       backend
	sc      *gophercloud.ServiceClient // ingot's service user
	service *neutron.Client
	token   func(t *testing.T, user string) string
	project func(user string) string
	// refusedToken is a token Keystone no longer accepts.
	refusedToken func(t *testing.T) string
	net          neutrontest.Network
	subnet       string
}

func (w *world) member(t *testing.T, user string) *neutron.Client {
	return neutron.New(servicecatalog.WithToken(w.sc, w.token(t, user)), 0)
}

// TestAgainstNeutron runs the adapter's contract against a real
// neutron-server found through Keystone's catalog.
func TestAgainstNeutron(t *testing.T) {
	ks := keystonetest.Start(t)
	n := neutrontest.Start(t, ks)
	pc, err := servicecatalog.Authenticate(context.Background(), servicecatalog.Credentials{
		AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := servicecatalog.Network(pc, servicecatalog.Endpoint{Region: "RegionOne", Interface: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	runContract(t, &world{b: n, sc: sc, service: neutron.New(sc, 0),
		token:   func(t *testing.T, user string) string { return ks.Token(t, user) },
		project: func(user string) string { return ks.Users[user].ProjectID },
		refusedToken: func(t *testing.T) string {
			tok := ks.Token(t, "member-b")
			ks.Revoke(t, tok)
			return tok
		}})
	rss, procs := n.Proc.RSS()
	t.Logf("neutron-server after the contract: RSS %d MiB over %d processes (migrate %s, start %s)",
		rss>>20, procs, n.MigrateTime.Round(1e6), n.Proc.StartTime.Round(1e6))
}

func runContract(t *testing.T, w *world) {
	w.net = w.b.CreateNetwork(t, neutrontest.NetworkOptions{Name: "provider", Shared: true})
	w.subnet = w.b.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: w.net.ID, Name: "v4", CIDR: "192.0.2.0/24",
		Gateway: "192.0.2.1", DNS: []string{"192.0.2.53", "192.0.2.54"},
		HostRoutes: []neutrontest.Route{{Destination: "198.51.100.0/24", NextHop: "192.0.2.254"}},
		Pools:      []neutrontest.Pool{{Start: "192.0.2.100", End: "192.0.2.199"}}})
	for _, c := range contract {
		t.Run(c.name, func(t *testing.T) { c.run(t, w) })
	}
}

var contract = []struct {
	name string
	run  func(t *testing.T, w *world)
}{
	{"port-lifecycle", testPortLifecycle},
	{"ensure-port-finds-after-crash", testEnsureFinds},
	{"fixed-ip-in-use", testFixedIPInUse},
	{"member-fixed-ip-on-shared-network-forbidden", testMemberFixedIPForbidden},
	{"binding-refused", testBindingRefused},
	{"network-data-inputs", testNetworkData},
	{"security-groups", testSecurityGroups},
	{"not-found", testNotFound},
	{"pre-created-port-claim-release", testClaimRelease},
	{"token-refused", testTokenRefused},
}

const owner = "compute:nova"

func mustIs(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want %v", err, kind)
	}
}

// A member's port for a server: created with device_id and device_owner,
// bound by the service as Ironic does (host = node, baremetal,
// local_link_information, the Ironic port's MAC), a bound port's MAC
// refused, unbound, deleted twice.
func testPortLifecycle(t *testing.T, w *world) {
	ctx := context.Background()
	server := "5a7d2c61-0000-4000-8000-000000000001"
	p, created, err := w.member(t, "member-a").EnsurePort(ctx, neutron.PortSpec{NetworkID: w.net.ID,
		ServerID: server, DeviceOwner: owner, Name: "ingot-" + server + "-0"})
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	if p.DeviceID != server || p.DeviceOwner != owner || len(p.FixedIPs) != 1 || p.Status != "DOWN" {
		t.Fatalf("created port: %+v", p)
	}
	if p.HostID != "" || p.Bound() {
		t.Fatalf("a member's port came bound: %+v", p)
	}
	node := "1be26c0b-0000-4000-8000-00000000000a"
	lli := neutron.Profile{"local_link_information": []map[string]string{
		{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Ethernet1/1", "switch_info": "tor-1"}}}
	b, err := w.service.BindPort(ctx, p.ID, neutron.Binding{HostID: node, Profile: lli, MACAddress: "52:54:00:00:00:0a"})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Bound() || b.VIFType != "other" || b.Status != "ACTIVE" || b.HostID != node || b.VNICType != neutron.VNICBaremetal ||
		b.MACAddress != "52:54:00:00:00:0a" || b.Profile["local_link_information"] == nil {
		t.Fatalf("bound port: %+v", b)
	}
	// Idempotent.
	if _, err := w.service.BindPort(ctx, p.ID, neutron.Binding{HostID: node, Profile: lli, MACAddress: "52:54:00:00:00:0a"}); err != nil {
		t.Fatal(err)
	}
	_, err = w.service.BindPort(ctx, p.ID, neutron.Binding{HostID: node, MACAddress: "52:54:00:00:00:0b"})
	mustIs(t, err, neutron.ErrPortBound)
	u, err := w.service.UnbindPort(ctx, p.ID)
	if err != nil || u.Bound() || u.VIFType != neutron.VIFUnbound || u.HostID != "" || u.DeviceID != server {
		t.Fatalf("unbound port: %+v %v", u, err)
	}
	if err := w.service.DeletePort(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.service.DeletePort(ctx, p.ID); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	_, err = w.service.GetPort(ctx, p.ID)
	mustIs(t, err, neutron.ErrPortNotFound)
}

// A retry after a crash between Neutron's create and ingot's record finds
// the port instead of making a second; another NIC of the same server gets
// its own.
func testEnsureFinds(t *testing.T, w *world) {
	ctx := context.Background()
	server := "5a7d2c61-0000-4000-8000-000000000002"
	m := w.member(t, "member-a")
	spec := neutron.PortSpec{NetworkID: w.net.ID, ServerID: server, DeviceOwner: owner, Name: "ingot-" + server + "-0"}
	first, _, err := m.EnsurePort(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	again, created, err := m.EnsurePort(ctx, spec)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("retry: %v created=%v id %s, want %s", err, created, again.ID, first.ID)
	}
	spec.Name = "ingot-" + server + "-1"
	other, created, err := m.EnsurePort(ctx, spec)
	if err != nil || !created || other.ID == first.ID {
		t.Fatalf("second NIC: %v created=%v", err, created)
	}
	if n := w.b.PortCount(t, "device_id="+server); n != 2 {
		t.Fatalf("%d ports of the server, want 2", n)
	}
	all, err := m.ListPorts(ctx, neutron.PortFilter{DeviceID: server})
	if err != nil || len(all) != 2 || !slices.ContainsFunc(all, func(p neutron.Port) bool { return p.ID == first.ID }) {
		t.Fatalf("list by device: %v %+v", err, all)
	}
	for _, p := range all {
		if err := w.service.DeletePort(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// The same fixed IP twice → ErrIPAddressInUse, Neutron's type kept.
func testFixedIPInUse(t *testing.T, w *world) {
	ctx := context.Background()
	spec := neutron.PortSpec{NetworkID: w.net.ID, ServerID: "5a7d2c61-0000-4000-8000-000000000003",
		DeviceOwner: owner, Name: "ingot-a", FixedIP: "192.0.2.150"}
	p, _, err := w.service.EnsurePort(ctx, spec)
	if err != nil || !p.HasAddress("192.0.2.150") {
		t.Fatalf("fixed IP: %v %+v", err, p)
	}
	t.Cleanup(func() { _ = w.service.DeletePort(ctx, p.ID) })
	spec.ServerID, spec.Name = "5a7d2c61-0000-4000-8000-000000000004", "ingot-b"
	_, _, err = w.service.EnsurePort(ctx, spec)
	mustIs(t, err, neutron.ErrIPAddressInUse)
	var ne *neutron.Error
	if !errors.As(err, &ne) || ne.Status != 409 || ne.Type != "IpAddressAlreadyAllocated" || ne.Message == "" {
		t.Fatalf("error detail: %#v", err)
	}
}

// A member asking a fixed IP on the admin's shared network → ErrForbidden
// (policy create_port:fixed_ips:ip_address).
func testMemberFixedIPForbidden(t *testing.T, w *world) {
	_, _, err := w.member(t, "member-a").EnsurePort(context.Background(), neutron.PortSpec{NetworkID: w.net.ID,
		ServerID: "5a7d2c61-0000-4000-8000-000000000005", DeviceOwner: owner, Name: "ingot-f", FixedIP: "192.0.2.160"})
	mustIs(t, err, neutron.ErrForbidden)
}

// A host the mechanism driver refuses → ErrBindingFailed (Neutron says 200).
func testBindingRefused(t *testing.T, w *world) {
	ctx := context.Background()
	w.b.RefuseBinding(t, "node-refused")
	p, _, err := w.service.EnsurePort(ctx, neutron.PortSpec{NetworkID: w.net.ID,
		ServerID: "5a7d2c61-0000-4000-8000-000000000006", DeviceOwner: owner, Name: "ingot-r"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.service.DeletePort(ctx, p.ID) })
	b, err := w.service.BindPort(ctx, p.ID, neutron.Binding{HostID: "node-refused"})
	mustIs(t, err, neutron.ErrBindingFailed)
	if b.VIFType != neutron.VIFBindingFailed || b.Bound() {
		t.Fatalf("refused binding: %+v", b)
	}
}

// What network_data.json is made of reads back: MTU and provider
// attributes, subnet CIDR, gateway, DNS, routes, pools, IPv6 modes.
func testNetworkData(t *testing.T, w *world) {
	ctx := context.Background()
	n, err := w.service.GetNetwork(ctx, w.net.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n.MTU != 1500 || n.NetworkType != "flat" || n.PhysicalNetwork != neutrontest.PhysicalNetwork || !n.Shared || len(n.Subnets) != 1 {
		t.Fatalf("network: %+v", n)
	}
	v6 := w.b.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: w.net.ID, Name: "v6", CIDR: "2001:db8::/64",
		IPVersion: 6, IPv6AddressMode: "slaac", IPv6RAMode: "slaac"})
	subnets, err := w.member(t, "member-a").ListSubnets(ctx, w.net.ID)
	if err != nil || len(subnets) != 2 {
		t.Fatalf("subnets: %v %+v", err, subnets)
	}
	for _, s := range subnets {
		switch s.ID {
		case w.subnet:
			if s.CIDR != "192.0.2.0/24" || s.GatewayIP != "192.0.2.1" || s.IPVersion != 4 ||
				len(s.DNSNameservers) != 2 || s.DNSNameservers[1] != "192.0.2.54" ||
				len(s.HostRoutes) != 1 || s.HostRoutes[0] != (neutron.Route{Destination: "198.51.100.0/24", NextHop: "192.0.2.254"}) ||
				len(s.AllocationPools) != 1 || s.AllocationPools[0].Start != "192.0.2.100" || !s.EnableDHCP {
				t.Errorf("v4 subnet: %+v", s)
			}
		case v6:
			if s.IPVersion != 6 || s.IPv6AddressMode != "slaac" || s.IPv6RAMode != "slaac" || s.GatewayIP != "2001:db8::" {
				t.Errorf("v6 subnet: %+v", s)
			}
		default:
			t.Errorf("unexpected subnet %+v", s)
		}
	}
	// A member reads the network without its provider attributes.
	m, err := w.member(t, "member-b").GetNetwork(ctx, w.net.ID)
	if err != nil || m.MTU != 1500 || m.PhysicalNetwork != "" {
		t.Fatalf("member's network: %v %+v", err, m)
	}
}

// A project's default group and its rules; one by id; one unknown.
func testSecurityGroups(t *testing.T, w *world) {
	ctx := context.Background()
	m := w.member(t, "member-a")
	project := w.project("member-a")
	groups, err := m.ListSecurityGroups(ctx, project)
	if err != nil || len(groups) != 1 || groups[0].Name != "default" || len(groups[0].Rules) != 4 {
		t.Fatalf("groups: %v %+v", err, groups)
	}
	g, err := m.GetSecurityGroup(ctx, groups[0].ID)
	if err != nil || g.ID != groups[0].ID || g.ProjectID != project {
		t.Fatalf("group: %v %+v", err, g)
	}
	_, err = m.GetSecurityGroup(ctx, "00000000-0000-4000-8000-000000000000")
	mustIs(t, err, neutron.ErrSecurityGroupNotFound)
	// Another project's group is not found for a member.
	_, err = w.member(t, "member-b").GetSecurityGroup(ctx, g.ID)
	mustIs(t, err, neutron.ErrSecurityGroupNotFound)
}

func testNotFound(t *testing.T, w *world) {
	ctx := context.Background()
	missing := "00000000-0000-4000-8000-0000000000ff"
	_, err := w.service.GetNetwork(ctx, missing)
	mustIs(t, err, neutron.ErrNetworkNotFound)
	_, _, err = w.service.EnsurePort(ctx, neutron.PortSpec{NetworkID: missing, ServerID: missing, Name: "x"})
	mustIs(t, err, neutron.ErrNetworkNotFound)
	_, err = w.service.BindPort(ctx, missing, neutron.Binding{HostID: "h"})
	mustIs(t, err, neutron.ErrPortNotFound)
	if err := w.service.ReleasePort(ctx, missing); err != nil {
		t.Fatalf("release of a gone port: %v", err)
	}
}

// A user's pre-created port: claimed by the server, refused to another,
// released (unbound, device cleared) and kept.
func testClaimRelease(t *testing.T, w *world) {
	ctx := context.Background()
	m := w.member(t, "member-a")
	own, _, err := m.EnsurePort(ctx, neutron.PortSpec{NetworkID: w.net.ID, ServerID: "user-made", Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.service.DeletePort(ctx, own.ID) })
	// The user's port starts with no device.
	if err := w.service.ReleasePort(ctx, own.ID); err != nil {
		t.Fatal(err)
	}
	server := "5a7d2c61-0000-4000-8000-000000000007"
	p, err := m.ClaimPort(ctx, own.ID, server, owner)
	if err != nil || p.DeviceID != server || p.DeviceOwner != owner {
		t.Fatalf("claim: %v %+v", err, p)
	}
	if _, err := w.service.BindPort(ctx, own.ID, neutron.Binding{HostID: "node-7"}); err != nil {
		t.Fatal(err)
	}
	_, err = m.ClaimPort(ctx, own.ID, "5a7d2c61-0000-4000-8000-000000000008", owner)
	mustIs(t, err, neutron.ErrPortInUse)
	if err := w.service.ReleasePort(ctx, own.ID); err != nil {
		t.Fatal(err)
	}
	r, err := w.service.GetPort(ctx, own.ID)
	if err != nil || r.DeviceID != "" || r.DeviceOwner != "" || r.HostID != "" || r.Bound() {
		t.Fatalf("released: %v %+v", err, r)
	}
}

// A refused token → ErrNotAuthorized; no answer → ErrUnavailable.
func testTokenRefused(t *testing.T, w *world) {
	ctx := context.Background()
	_, err := neutron.New(servicecatalog.WithToken(w.sc, w.refusedToken(t)), 0).ListNetworks(ctx)
	mustIs(t, err, neutron.ErrNotAuthorized)
	dead := *w.sc
	dead.Endpoint, dead.ResourceBase = "http://127.0.0.1:1/", "http://127.0.0.1:1/v2.0/"
	_, err = neutron.New(&dead, 0).ListNetworks(ctx)
	mustIs(t, err, neutron.ErrUnavailable)
}
