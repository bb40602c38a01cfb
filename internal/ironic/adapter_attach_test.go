package ironic_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/portbind"
)

// adapterVolumes is TestAdapter's Volumes subtest.
func adapterVolumes(ctx context.Context, t *testing.T, h *ironictest.Env) {
	c, _ := newClient(t, h.URL, 0)
	id := enroll(t, h, "vt-a", "vt")
	if err := c.SetStorageInterface(ctx, id, "external"); err != nil {
		t.Fatal(err)
	}
	cid, err := c.CreateVolumeConnector(ctx, id, "iqn", "iqn.2010-10.org.openstack:vt-a")
	if err != nil || cid == "" {
		t.Fatalf("CreateVolumeConnector = %q, %v", cid, err)
	}
	conns, err := c.ListVolumeConnectors(ctx, id)
	if err != nil || len(conns) != 1 || conns[0].UUID != cid || conns[0].ConnectorID != "iqn.2010-10.org.openstack:vt-a" {
		t.Fatalf("ListVolumeConnectors = %+v, %v", conns, err)
	}
	tid, err := c.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: id, VolumeType: "iscsi", VolumeID: "vol-1",
		BootIndex: 0, Properties: map[string]any{"target_lun": 0}})
	if err != nil || tid == "" {
		t.Fatalf("CreateVolumeTarget = %q, %v", tid, err)
	}
	_, err = c.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: id, VolumeType: "iscsi", VolumeID: "vol-2"})
	if !errors.Is(err, ironic.ErrInvalid) {
		t.Fatalf("duplicate boot index = %v, want ErrInvalid", err)
	}
	targets, err := c.ListVolumeTargets(ctx, id)
	if err != nil || len(targets) != 1 || targets[0].UUID != tid || targets[0].VolumeID != "vol-1" || targets[0].NodeID != id {
		t.Fatalf("ListVolumeTargets = %+v, %v", targets, err)
	}
	// Deleting a target needs power_state "power off" (§5).
	if r := h.Request(t, "PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "power on"}); r.Status != 202 {
		t.Fatalf("power on: %d %s", r.Status, r.Fault())
	}
	waitNode(t, c, id, 10*time.Second, "powered on", func(n ironic.Node) bool { return n.PowerState == "power on" })
	if err := c.DeleteVolumeTarget(ctx, tid); !errors.Is(err, ironic.ErrInvalidState) {
		t.Fatalf("DeleteVolumeTarget while not powered off = %v, want ErrInvalidState", err)
	}
	if err := c.SetPowerOff(ctx, id); err != nil {
		t.Fatal(err)
	}
	// NOTE: the power change holds the node's lock a little past the new
	// power_state; a target delete sent then gets ErrNodeLocked (seen).
	unlockedOff := func(n ironic.Node) bool { return n.PowerState == "power off" && n.Reservation == "" }
	waitNode(t, c, id, 10*time.Second, "powered off and unlocked", unlockedOff)
	if err := c.SetPowerOff(ctx, id); err != nil {
		t.Fatalf("SetPowerOff on a node already off: %v", err)
	}
	waitNode(t, c, id, 10*time.Second, "powered off and unlocked", unlockedOff)
	if err := c.DeleteVolumeTarget(ctx, tid); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteVolumeTarget(ctx, tid); !errors.Is(err, ironic.ErrNotFound) {
		t.Fatalf("second DeleteVolumeTarget = %v, want ErrNotFound", err)
	}
	if err := c.DeleteVolumeConnector(ctx, cid); err != nil {
		t.Fatal(err)
	}
	if targets, err := c.ListVolumeTargets(ctx, id); err != nil || len(targets) != 0 {
		t.Fatalf("targets after delete: %+v, %v", targets, err)
	}
	if conns, err := c.ListVolumeConnectors(ctx, id); err != nil || len(conns) != 0 {
		t.Fatalf("connectors after delete: %+v, %v", conns, err)
	}
}

// adapterPorts is TestAdapter's Ports subtest.
func adapterPorts(ctx context.Context, t *testing.T, h *ironictest.Env) {
	c, cnt := newClient(t, h.URL, 0)
	plain := h.EnrollNode(t, ironictest.NodeSpec{Name: "ports-plain", ResourceClass: "ports", Ports: 2, PhysicalNetwork: "physnet1"})
	bond := h.EnrollNode(t, ironictest.NodeSpec{Name: "ports-bond", ResourceClass: "ports", Ports: 1, BondPorts: 2, BondMode: "802.3ad",
		Properties: map[string]any{"capabilities": "boot_mode:uefi,secure_boot:true"}})
	cnt.take()
	inv, err := c.NodePorts(ctx, plain)
	if err != nil || len(inv.Ports) != 2 || inv.Portgroups != nil || !inv.Ports[0].PXE || inv.Ports[0].Physnet != "physnet1" ||
		inv.Ports[0].Node != plain || inv.Ports[0].MAC != h.Ports(t, plain)[0].Address {
		t.Fatalf("NodePorts(plain) = %+v, %v", inv, err)
	}
	if got := cnt.take(); got["port.list"] != 1 || got["portgroup.list"] != 0 {
		t.Errorf("calls for a node without a bond: %v, want one port list", got)
	}
	inv, err = c.NodePorts(ctx, bond)
	if err != nil || len(inv.Ports) != 3 || len(inv.Portgroups) != 1 || inv.Portgroups[0].Mode != "802.3ad" ||
		inv.Ports[1].Portgroup != inv.Portgroups[0].UUID || inv.Ports[0].Portgroup != "" {
		t.Fatalf("NodePorts(bond) = %+v, %v", inv, err)
	}
	if got := cnt.take(); got["port.list"] != 1 || got["portgroup.list"] != 1 {
		t.Errorf("calls for a node with a bond: %v, want a port list and a portgroup list", got)
	}
	all, err := c.ListPorts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, p := range all {
		per[p.Node]++
	}
	if per[plain] != 2 || per[bond] != 3 {
		t.Errorf("ListPorts: %v per node", per)
	}
	// VIF attach on a named port and portgroup (noop on the harness's Ironic).
	if err := c.AttachVIFTo(ctx, bond, uuid.NewString(), portbind.Target{Portgroup: inv.Portgroups[0].UUID}); err != nil {
		t.Errorf("AttachVIFTo portgroup: %v", err)
	}
	if err := c.AttachVIFTo(ctx, bond, uuid.NewString(), portbind.Target{Port: inv.Ports[0].UUID}); err != nil {
		t.Errorf("AttachVIFTo port: %v", err)
	}
	nodes, err := c.ListAvailable(ctx, "ports")
	if err != nil || len(nodes) != 2 {
		t.Fatalf("ListAvailable = %d nodes, %v", len(nodes), err)
	}
	for _, n := range nodes {
		want := map[string]string(nil)
		if n.UUID == bond {
			want = map[string]string{"boot_mode": "uefi", "secure_boot": "true"}
		}
		if fmt.Sprint(n.Capabilities) != fmt.Sprint(want) {
			t.Errorf("node %s capabilities %v, want %v", n.Name, n.Capabilities, want)
		}
	}
}
