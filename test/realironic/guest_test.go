package realironic

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/cloudinittest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/configdrive"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

const guestKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGj8yJ7b3c1k0l6b7T0m1c2k3d4e5f6g7h8i9j0k1l2m alice@example"

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

	// Recorded as the API records a create, with the key a keypair gives
	// (the os-keypairs API is built alongside).
	f, _ := s.app.Config.Catalog().Flavor("bm.gpu")
	now := time.Now().UTC()
	id, name := uuid.NewString(), "Web Server_01.Example"
	sv := &lifecycle.Server{ID: id, Name: name, ProjectID: "proj-1", UserID: "alice",
		Spec: lifecycle.Spec{FlavorID: f.ID, ImageID: s.imgID, ResourceClass: rc, ImageSource: "http://127.0.0.1:1/debian-12.qcow2",
			RootGB: f.DiskGB, Networks: []string{s.app.Config.Networks[0].ID, s.app.Config.Networks[1].ID},
			Hostname: configdrive.DefaultHostname(name, id), KeyName: "alice", PublicKey: guestKey,
			RequiredTraits: f.Traits, ForbiddenTraits: f.ForbiddenTraits, Capabilities: f.Capabilities},
		Desired: lifecycle.DesiredActive, Phase: lifecycle.PhasePending, CreatedAt: now, UpdatedAt: now, PhaseSince: now,
		Deadline: now.Add(2 * time.Minute), CreateRequestID: "req-" + id}
	if err := s.app.Store.CreateServer(context.Background(), sv); err != nil {
		t.Fatal(err)
	}
	s.app.Reconciler.Kick()
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
		UUID: id, Name: name, Hostname: "web-server-01-example", ProjectID: "proj-1",
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
