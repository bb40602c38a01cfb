// Package neutron builds servers on a real Neutron: ingot (internal/app,
// network.backend: neutron) behind the real Keystone, with a real
// neutron-server (ML2 flat, no agents) and the real Ironic on its flat
// network interface, driven over HTTP as project A's member.
package neutron

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cloudinittest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestBuildOnRealNeutron: three servers at once — on a network, on the
// user's own port, with a fixed IP — each ends ACTIVE with its Neutron
// port owned by the server (device_id, device_owner compute:nova), carrying
// the Ironic port's MAC (set by Ironic's flat interface on VIF attach);
// network_data.json, read by cloud-init's parser, gives the subnet's
// address, gateway, route and DNS. The deletes leave Neutron's port count
// as it was, the user's port unbound and kept.
func TestBuildOnRealNeutron(t *testing.T) {
	w := startWorld(t, 3)
	before := w.neutron.PortCount(t, "")
	mine := w.memberPort(t, "")

	plain := w.create(t, "plain", []map[string]string{{"uuid": w.net}})
	withPort := w.create(t, "own-port", []map[string]string{{"port": mine}})
	withIP := w.create(t, "fixed-ip", []map[string]string{{"uuid": w.net, "fixed_ip": "192.0.2.77"}})
	start := time.Now()
	for _, id := range []string{plain, withPort, withIP} {
		w.waitStatus(t, id, "ACTIVE", 180*time.Second)
	}
	t.Logf("three servers ACTIVE %s after create (load-dependent)", time.Since(start).Round(time.Second))
	calls := w.neutronCalls(t)
	t.Logf("Neutron calls for three builds (API checks included), with ingot's token (ingot's own and Ironic's reads, which carry the caller's token): %v; with Ironic's service user: %v", calls["ingot"], calls["ironic"])

	for _, id := range []string{plain, withPort, withIP} {
		rows, err := w.app.Store.Ports(context.Background(), id)
		if err != nil || len(rows) != 1 || rows[0].NeutronID == "" {
			t.Fatalf("rows of %s: %+v, %v", id, rows, err)
		}
		p := w.adminPort(t, rows[0].NeutronID)
		node := w.rec(t, id).NodeID
		ironicMAC := w.ironic.Ports(t, node)[0].Address
		if p["device_id"] != id || p["device_owner"] != "compute:nova" || p["mac_address"] != ironicMAC {
			t.Errorf("%s: port device_id %v owner %v mac %v; want %s, compute:nova, the Ironic port's %s",
				id, p["device_id"], p["device_owner"], p["mac_address"], id, ironicMAC)
		}
		if vifs := w.ironic.ListVIFs(t, node); len(vifs) != 1 || vifs[0] != rows[0].NeutronID {
			t.Errorf("%s: VIFs %v on node %s, want the Neutron port %s", id, vifs, node, rows[0].NeutronID)
		}
		if id == withPort && rows[0].NeutronID != mine {
			t.Errorf("own-port server's port %s, want the user's %s", rows[0].NeutronID, mine)
		}
		if id == withIP && rows[0].IP != "192.0.2.77" {
			t.Errorf("fixed-ip server's address %s, want 192.0.2.77", rows[0].IP)
		}
		if id == plain {
			cfg := cloudinittest.CheckConfigDrive(t, w.ironic.ConfigDrive(t, node), map[string]string{ironicMAC: "eno1"},
				cloudinittest.Want{UUID: id, Name: "plain", Hostname: "plain", ProjectID: w.project,
					Nameservers: []string{"192.0.2.53"},
					Links: []cloudinittest.Link{{NICs: []string{"eno1"}, Address: netip.MustParsePrefix(rows[0].IP + "/24"),
						Gateway: "192.0.2.1", Routes: []string{"198.51.100.0/24 via 192.0.2.254"}, MTU: 1500}}})
			t.Logf("cloud-init network config:\n%s", cfg)
		}
	}
	// Nova's answers for what Neutron refuses.
	w.refused(t, http.StatusConflict, []map[string]string{{"port": mine}})
	w.refused(t, http.StatusBadRequest, []map[string]string{{"uuid": "6d2c5f7e-0b1a-4c3d-9e8f-7a6b5c4d3e2f"}})
	if msg := w.refused(t, http.StatusBadRequest, []map[string]string{{"uuid": w.net, "fixed_ip": "192.0.2.77"}}); !strings.Contains(msg, "already in use") {
		t.Errorf("fixed IP in use: %s", msg)
	}

	// The server body's addresses and os-interface come from Neutron.
	var body struct {
		Server struct {
			Addresses map[string][]map[string]any `json:"addresses"`
		} `json:"server"`
	}
	w.call(t, "GET", "/v2.1/servers/"+withIP, nil, &body)
	if a := body.Server.Addresses["tenant"]; len(a) != 1 || a[0]["addr"] != "192.0.2.77" {
		t.Errorf("addresses of the fixed-IP server: %v, want tenant: 192.0.2.77", body.Server.Addresses)
	}
	var ifaces struct {
		Interfaces []struct {
			PortID   string `json:"port_id"`
			NetID    string `json:"net_id"`
			MACAddr  string `json:"mac_addr"`
			FixedIPs []struct {
				SubnetID  string `json:"subnet_id"`
				IPAddress string `json:"ip_address"`
			} `json:"fixed_ips"`
		} `json:"interfaceAttachments"`
	}
	w.call(t, "GET", "/v2.1/servers/"+withPort+"/os-interface", nil, &ifaces)
	if f := ifaces.Interfaces; len(f) != 1 || f[0].PortID != mine || f[0].NetID != w.net || len(f[0].FixedIPs) != 1 ||
		f[0].FixedIPs[0].SubnetID != w.subnet {
		t.Errorf("os-interface of the own-port server: %+v, want port %s on %s, subnet %s", f, mine, w.net, w.subnet)
	}

	if got := w.neutron.PortCount(t, ""); got != before+3 {
		t.Errorf("ports while active: %d, want %d (before %d, one of them the user's)", got, before+3, before)
	}

	for _, id := range []string{plain, withPort, withIP} {
		w.call(t, "DELETE", "/v2.1/servers/"+id, nil, nil)
	}
	for _, id := range []string{plain, withPort, withIP} {
		w.waitGone(t, id, 120*time.Second)
	}
	after := w.neutron.PortCount(t, "")
	t.Logf("Neutron ports: %d before, %d with the user's port made, %d after the deletes", before, before+1, after)
	if after != before+1 {
		t.Errorf("ports after the deletes: %d, want %d (before, and the user's port)", after, before+1)
	}
	all := w.neutronCalls(t)
	t.Logf("Neutron calls, builds and deletes, with ingot's token: %v; with Ironic's: %v", all["ingot"], all["ironic"])
	p := w.adminPort(t, mine)
	if p["device_id"] != "" || p["device_owner"] != "" || p["binding:host_id"] != "" {
		t.Errorf("the user's port after delete: device_id %v owner %v host %v; want released",
			p["device_id"], p["device_owner"], p["binding:host_id"])
	}
}

// TestRealNeutronFaults: a delete during the VIF attach (Ironic's calls to
// Neutron take seconds) and a node deleted out of band mid-deploy (the
// build moves to the other node) leave Neutron's port count as it was.
// The first node deploys with the custom agent, so it waits in "wait
// call-back" unlocked and the delete lands mid-deploy whatever Ironic's
// pace (a fake deploy holds the node's lock to its end, and the delete
// then came after the server was ACTIVE); the node it moves to is enrolled
// then.
func TestRealNeutronFaults(t *testing.T) {
	spec := ironictest.NodeSpec{Name: "flat", ResourceClass: "baremetal", Ports: 1,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "flat"}
	long := spec
	long.Name, long.Kind = "long", ironictest.LongDeploy
	w := startWorldOn(t, 1, long, func(o *ironictest.RealOptions) {
		o.DeployDelay, o.CallbackTimeout = 3*time.Second, 10*time.Minute
	})
	before := w.neutron.PortCount(t, "")

	early := w.create(t, "early-delete", []map[string]string{{"uuid": w.net}})
	w.waitPhase(t, early, "networking", 60*time.Second)
	w.call(t, "DELETE", "/v2.1/servers/"+early, nil, nil)
	w.waitGone(t, early, 120*time.Second)
	if got := w.neutron.PortCount(t, ""); got != before {
		t.Errorf("ports after a delete during networking: %d, want %d", got, before)
	}

	moved := w.create(t, "moved", []map[string]string{{"uuid": w.net}})
	w.waitPhase(t, moved, "deploying", 120*time.Second)
	first := w.rec(t, moved).NodeID
	poll.Until(t, 120*time.Second, "the first node in wait call-back", func() (bool, string) {
		st := w.ironic.GetNode(t, first)["provision_state"]
		return st == "wait call-back", fmt.Sprintf("%v", st)
	})
	w.ironic.EnrollNode(t, spec)
	w.ironic.OutOfBandDelete(t, first)
	w.waitStatus(t, moved, "ACTIVE", 180*time.Second)
	if node := w.rec(t, moved).NodeID; node == first {
		t.Fatalf("server still on the deleted node %s", first)
	}
	if got := w.neutron.PortCount(t, ""); got != before+1 {
		t.Errorf("ports after the reschedule: %d, want %d (the first node's port gone)", got, before+1)
	}
	w.call(t, "DELETE", "/v2.1/servers/"+moved, nil, nil)
	w.waitGone(t, moved, 120*time.Second)
	after := w.neutron.PortCount(t, "")
	t.Logf("Neutron ports: %d before the fault scenarios, %d after", before, after)
	if after != before {
		t.Errorf("ports after the delete: %d, want %d", after, before)
	}
}

// TestBuildOnNeutronInterface: a node on Ironic's neutron network
// interface (ports with physical_network and local_link_connection). ingot
// leaves the tenant port unbound, as Nova does for this interface, and
// Ironic binds it late; the build ends ACTIVE with the port carrying the
// Ironic port's MAC, and the delete leaves Neutron's port count as it was
// (Ironic's provisioning port included).
func TestBuildOnNeutronInterface(t *testing.T) {
	w := startWorldOn(t, 1, ironictest.NodeSpec{Name: "multi", ResourceClass: "baremetal", Ports: 1,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "neutron", LocalLink: true})
	before := w.neutron.PortCount(t, "")
	id := w.create(t, "on-neutron-interface", []map[string]string{{"uuid": w.net}})
	w.waitStatus(t, id, "ACTIVE", 180*time.Second)
	rows, err := w.app.Store.Ports(context.Background(), id)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows: %+v, %v", rows, err)
	}
	p := w.adminPort(t, rows[0].NeutronID)
	node := w.rec(t, id).NodeID
	ironicMAC := w.ironic.Ports(t, node)[0].Address
	t.Logf("tenant port on the neutron interface: host %q vnic %v vif %v status %v profile %v; %d ports in Neutron",
		p["binding:host_id"], p["binding:vnic_type"], p["binding:vif_type"], p["status"], p["binding:profile"],
		w.neutron.PortCount(t, ""))
	if p["device_id"] != id || p["mac_address"] != ironicMAC {
		t.Errorf("port device_id %v mac %v; want %s and the Ironic port's %s", p["device_id"], p["mac_address"], id, ironicMAC)
	}
	w.call(t, "DELETE", "/v2.1/servers/"+id, nil, nil)
	w.waitGone(t, id, 120*time.Second)
	after := w.neutron.PortCount(t, "")
	t.Logf("Neutron ports: %d before, %d after", before, after)
	if after != before {
		t.Errorf("ports after the delete: %d, want %d", after, before)
	}
}

// ingotConfig is the service under test (ingotSettings puts its networks
// in Neutron: config.Parse validates, and Neutron needs Keystone).
const ingotConfig = `
poll_interval: 500ms
max_attempts: 3
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2"}
`

func ingotSettings(c *config.Config, ks *keystonetest.Env, dir string) {
	c.Database = filepath.Join(dir, "ingot.db")
	c.Host = "ingot-neutron"
	c.Auth.Strategy = "keystone"
	c.Auth.Keystone.AuthURL = ks.URL
	c.Auth.Keystone.Username = "ingot"
	c.Auth.Keystone.Password = keystonetest.Password
	c.Auth.Keystone.ProjectName = "service"
	c.Ironic.URL, c.Ironic.Auth = "catalog", "keystone"
	c.Network.Backend = config.NetworkNeutron
}
