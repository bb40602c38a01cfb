package scenario

import (
	"context"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cloudinittest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// guestConfig adds a flavor that needs CUSTOM_GPU and a second network with
// an MTU, DNS servers and a static route.
func guestConfig(c *config.Config) {
	c.Flavors = append(c.Flavors, config.Flavor{Name: "bm.gpu", ResourceClass: rc, DiskGB: 10,
		ExtraSpecs: map[string]string{"trait:CUSTOM_GPU": "required", "capabilities:boot_mode": "uefi"}})
	c.Networks[0].DNSNameservers = []string{"192.0.2.1", "192.0.2.53"}
	c.Networks[0].Routes = []config.Route{{Destination: "192.168.0.0/16", Gateway: "10.0.0.254"}}
	c.Networks = append(c.Networks, config.Network{Name: "storage", CIDR: "10.20.0.0/20", MTU: 9000})
}

// createWithKey imports a keypair through os-keypairs and creates a server
// that names it, both through the API as a user would.
func (e *env) createWithKey(name, flavor string, networks []string) (id, key string) {
	e.t.Helper()
	key = e.ImportKeypair("alice")
	nets := []map[string]string{}
	for _, n := range networks {
		nets = append(nets, map[string]string{"uuid": n})
	}
	return e.Create(map[string]any{"name": name, "flavorRef": flavor, "imageRef": e.imgID, "networks": nets, "key_name": "alice"}), key
}

// TestGuestConfigDrive builds a server on a node with one NIC and a bond of
// two, and has cloud-init's own parser read the config drive the simulator
// received, with the node's port MACs as the machine's NICs.
func TestGuestConfigDrive(t *testing.T) {
	cloudinittest.Require(t)
	e := newEnv(t, envOpts{nodes: 2, configure: guestConfig})
	gpu := e.sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: rc, NamePrefix: "gpu", Traits: []string{"CUSTOM_GPU"},
		Properties: map[string]any{"capabilities": "boot_mode:uefi"}, Ports: 1, BondPorts: 2, BondMode: "802.3ad"})[0]
	nets := []string{e.app.Config.Networks[0].ID, e.app.Config.Networks[1].ID}
	id, testKey := e.createWithKey("Web Server_01.Example", "bm.gpu", nets)
	got := e.WaitStatus(id, "ACTIVE", 20*time.Second)
	if rec := e.record(id); rec.NodeID != gpu {
		t.Fatalf("server on %s, want the only node with CUSTOM_GPU (%s)", rec.NodeID, gpu)
	}

	node, _ := e.sim.Node(gpu)
	if tr, _ := node.InstanceInfo["traits"].([]any); len(tr) != 1 || tr[0] != "CUSTOM_GPU" {
		t.Errorf("instance_info.traits = %v", node.InstanceInfo["traits"])
	}
	if caps, _ := node.InstanceInfo["capabilities"].(map[string]any); caps["boot_mode"] != "uefi" {
		t.Errorf("instance_info.capabilities = %v", node.InstanceInfo["capabilities"])
	}
	cd, _ := node.InstanceInfo["configdrive"].(map[string]any)
	nics := map[string]string{}
	for i, p := range node.Ports {
		nics[p.Address] = "eth" + string(rune('0'+i))
	}
	ports, _ := e.app.Store.Ports(context.Background(), id)
	if len(ports) != 2 {
		t.Fatalf("ports = %+v", ports)
	}
	cfg := cloudinittest.CheckConfigDrive(t, cd, nics, cloudinittest.Want{
		UUID: id, Name: "Web Server_01.Example", Hostname: "web-server-01-example", ProjectID: "ingot",
		KeyName: "alice", Key: testKey, Nameservers: []string{"192.0.2.1", "192.0.2.53"},
		Links: []cloudinittest.Link{
			// The first network takes the bond (Ironic prefers portgroups), the second the single NIC.
			{NICs: []string{"eth1", "eth2"}, BondMode: "802.3ad", Address: netip.MustParsePrefix(ports[0].IP + "/24"),
				Gateway: "10.0.0.1", Routes: []string{"192.168.0.0/16 via 10.0.0.254"}},
			{NICs: []string{"eth0"}, Address: netip.MustParsePrefix(ports[1].IP + "/20"), Gateway: "10.20.0.1", MTU: 9000},
		},
	})
	t.Logf("cloud-init network config for %s:\n%s", id, cfg)
	_ = got

	// ingot's ports took the NICs' MACs, and the VIFs sit on those NICs (flat-like simulator).
	for _, p := range ports {
		if !slices.ContainsFunc(node.Ports, func(ip ironicsim.PortSnapshot) bool { return ip.Address == p.MAC }) {
			t.Errorf("port %s has MAC %s, not one of the node's NICs", p.ID, p.MAC)
		}
	}
	if vifs := e.sim.VIFs(gpu); len(vifs) != 2 {
		t.Errorf("VIFs on the node: %v", vifs)
	}
	e.Delete(id)
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
}

// TestGuestTraitsNoValidHost: a required trait no node has is no_valid_host naming it.
func TestGuestTraitsNoValidHost(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 2, configure: guestConfig})
	id := e.createWith("gpu-less", "bm.gpu")
	got := e.WaitStatus(id, "ERROR", 10*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "no_valid_host" || got.Fault == nil || !strings.Contains(got.Fault.Message, "CUSTOM_GPU") {
		t.Fatalf("fault = %+v", got.IngotFault)
	}
	e.checkInvariants(id)
}

// TestGuestTooFewPortsReschedules: a node with fewer free ports than
// networks, found only after the reservation (a port was removed after the
// scheduler's last port listing), is a reschedulable failure.
func TestGuestTooFewPortsReschedules(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, configure: func(c *config.Config) {
		guestConfig(c)
		c.Flavors = append(c.Flavors,
			config.Flavor{Name: "bm.x", ResourceClass: rc, DiskGB: 10, Traits: []string{"CUSTOM_X"}},
			config.Flavor{Name: "bm.plain", ResourceClass: rc, DiskGB: 10, ExtraSpecs: map[string]string{"trait:CUSTOM_X": "forbidden"}})
	}})
	x := e.sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: rc, NamePrefix: "x", Traits: []string{"CUSTOM_X"}, Ports: 2})[0]
	// A first build lists the inventory and the ports (x has two), and lands elsewhere.
	w := e.createWith("warm-up", "bm.plain")
	e.WaitStatus(w, "ACTIVE", 10*time.Second)
	n, _ := e.sim.Node(x)
	req, _ := http.NewRequest("DELETE", e.ironS.URL+"/v1/ports/"+n.Ports[1].UUID, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete a port of %s: %v %v", x, resp, err)
	}
	id := e.Create(map[string]any{"name": "two-nets", "flavorRef": "bm.x", "imageRef": e.imgID,
		"networks": []map[string]string{{"uuid": e.app.Config.Networks[0].ID}, {"uuid": e.app.Config.Networks[1].ID}}})
	got := e.WaitStatus(id, "ERROR", 10*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "vif_attach_failed" || len(got.Attempts) != 1 ||
		got.Attempts[0].Node != x || got.Fault == nil || !strings.Contains(got.Fault.Message, "1 free Ironic port(s) or portgroup(s) for 2 network(s)") {
		t.Fatalf("fault = %+v %+v attempts = %+v", got.IngotFault, got.Fault, got.Attempts)
	}
	e.checkInvariants(w, id)
}

// TestGuestNodeWithoutPortsWarns: a node without any Ironic port keeps the
// generated MAC, and the server's events say so.
func TestGuestNodeWithoutPortsWarns(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1})
	_ = e.sim.SetMaintenance(e.nodes[0], true, "keep out")
	bare := e.sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: rc, NamePrefix: "bare", NetworkInterface: "noop"})[0]
	id := e.create("bare")
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	if rec := e.record(id); rec.NodeID != bare {
		t.Fatalf("on %s, want %s", rec.NodeID, bare)
	}
	evs, err := e.app.Store.AllEvents(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, ev := range evs {
		warned = warned || (ev.Name == "compute_attach_networks" && strings.Contains(ev.Details, "has no Ironic ports"))
	}
	if !warned {
		t.Errorf("no warning about the node without Ironic ports in %+v", evs)
	}
	ports, _ := e.app.Store.Ports(context.Background(), id)
	if len(ports) != 1 || !strings.HasPrefix(ports[0].MAC, "fa:16:3e:") || ports[0].Binding.Bound() {
		t.Errorf("ports = %+v, want the generated MAC", ports)
	}
	_ = e.sim.SetMaintenance(e.nodes[0], false, "")
	e.Delete(id) // (a noop node shows no VIFs, which an ACTIVE server's check wants)
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
}
