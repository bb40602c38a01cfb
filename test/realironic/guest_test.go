package realironic

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cloudinittest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// TestRealIronicConfigDrive builds a server on a real Ironic node with one
// NIC and a portgroup of two, reads the config drive Ironic received from
// its database (the API masks it), and has cloud-init's own parser read it
// with the node's port MACs as the machine's NICs.
func TestRealIronicConfigDrive(t *testing.T) {
	cloudinittest.Require(t)
	ir := ironictest.StartReal(t, ironictest.RealOptions{})
	const rc = "rc-guest"
	s := newStack(t, ir, rc, func(c *config.Config) {
		c.Flavors = append(c.Flavors, config.Flavor{Name: "bm.gpu", ResourceClass: rc, DiskGB: 10,
			ExtraSpecs: map[string]string{"trait:CUSTOM_GPU": "required", "trait:CUSTOM_SLOW": "forbidden", "capabilities:boot_mode": "uefi"}})
		c.Networks[0].DNSNameservers = []string{"192.0.2.1", "192.0.2.53"}
		c.Networks[0].Routes = []config.Route{{Destination: "192.168.0.0/16", Gateway: "10.0.0.254"}}
		c.Networks = append(c.Networks, config.Network{Name: "storage", CIDR: "10.20.0.0/20", MTU: 9000})
	})
	// Decoys: a node without the trait, one with the forbidden trait.
	ir.EnrollNode(t, ironictest.NodeSpec{Name: "plain", ResourceClass: rc, Ports: 3})
	ir.EnrollNode(t, ironictest.NodeSpec{Name: "slow", ResourceClass: rc, Ports: 3, Traits: []string{"CUSTOM_GPU", "CUSTOM_SLOW"},
		Properties: map[string]any{"capabilities": "boot_mode:uefi"}})
	node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "gpu", ResourceClass: rc, Traits: []string{"CUSTOM_GPU"},
		Properties: map[string]any{"capabilities": "boot_mode:uefi"}, Ports: 1, BondPorts: 2, BondMode: "802.3ad"})

	// A keypair imported through os-keypairs, and a server that names it.
	name := "Web Server_01.Example"
	guestKey := s.ImportKeypair("alice")
	id := s.Create(map[string]any{"name": name, "flavorRef": "bm.gpu", "imageRef": s.imgID, "key_name": "alice",
		"networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}, {"uuid": s.app.Config.Networks[1].ID}}})
	start := time.Now()
	s.WaitStatus(id, "ACTIVE", 90*time.Second)
	t.Logf("ACTIVE %s after create", time.Since(start).Round(time.Millisecond))
	if got := s.rec(id).NodeID; got != node {
		t.Fatalf("server on node %s, want %s (the only one with CUSTOM_GPU and without CUSTOM_SLOW)", got, node)
	}
	info, _ := ir.GetNode(t, node)["instance_info"].(map[string]any)
	if tr, _ := info["traits"].([]any); len(tr) != 1 || tr[0] != "CUSTOM_GPU" {
		t.Errorf("instance_info.traits = %v", info["traits"])
	}
	if caps, _ := info["capabilities"].(map[string]any); caps["boot_mode"] != "uefi" {
		t.Errorf("instance_info.capabilities = %v", info["capabilities"])
	}
	if info["configdrive"] != "******" {
		t.Errorf("the API shows configdrive %v, want it masked", info["configdrive"])
	}

	ironicPorts := ir.Ports(t, node)
	nics := map[string]string{}
	for i, p := range ironicPorts {
		nics[p.Address] = "eno" + string(rune('1'+i))
	}
	ports, err := s.app.Store.Ports(context.Background(), id)
	if err != nil || len(ports) != 2 {
		t.Fatalf("ports = %+v, %v", ports, err)
	}
	cfg := cloudinittest.CheckConfigDrive(t, ir.ConfigDrive(t, node), nics, cloudinittest.Want{
		UUID: id, Name: name, Hostname: "web-server-01-example", ProjectID: "ingot",
		KeyName: "alice", Key: guestKey, Nameservers: []string{"192.0.2.1", "192.0.2.53"},
		Links: []cloudinittest.Link{
			{NICs: []string{"eno2", "eno3"}, BondMode: "802.3ad", Address: netip.MustParsePrefix(ports[0].IP + "/24"),
				Gateway: "10.0.0.1", Routes: []string{"192.168.0.0/16 via 10.0.0.254"}},
			{NICs: []string{"eno1"}, Address: netip.MustParsePrefix(ports[1].IP + "/20"), Gateway: "10.20.0.1", MTU: 9000},
		},
	})
	t.Logf("cloud-init (%d NICs) network config for %s:\n%s", len(nics), id, cfg)

	s.Delete(id)
	s.WaitGone(id, 60*time.Second)
	s.released(node)
	s.noPorts(id)
}
