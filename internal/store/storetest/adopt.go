package storetest

import (
	"errors"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// testAdopt: AdoptServer writes the server, its ports and its create
// action together or not at all — a taken address, a held node or a
// duplicate id leaves nothing of the refused server — and the adopted one
// needs no work (phase active, node held).
func testAdopt(t *testing.T, st store.Store) {
	ctx := t.Context()
	mustCreate(t, st, MinimalServer("other", T0))
	if err := st.CreatePort(ctx, store.Port{ID: "taken", ServerID: "other", NetworkID: "net-a", IP: "10.0.0.9"}); err != nil {
		t.Fatal(err)
	}
	adopted := func(id, node string) *lifecycle.Server {
		s := MinimalServer(id, T0)
		s.Phase, s.NodeID, s.DeployRequested, s.PortsAllocated, s.LaunchedAt = lifecycle.PhaseActive, node, true, true, T0
		return s
	}
	ports := []store.Port{
		{ID: "vif-1", NetworkID: "net-a", IP: "10.0.0.5", MAC: "52:54:00:00:00:01", VIFNode: "node-1",
			Binding: store.Binding{PortUUID: "ironic-port-1"}, CreatedAt: T0},
		{ID: "vif-2", NetworkID: "net-b", IP: "10.1.0.5", VIFNode: "node-1", NeutronID: "vif-2", CreatedAt: T0},
	}
	s := adopted("a1", "node-1")
	if err := st.AdoptServer(ctx, s, ports, nil); err != nil {
		t.Fatalf("AdoptServer: %v", err)
	}
	got := mustGet(t, st, "a1")
	if got.Phase != lifecycle.PhaseActive || got.NodeID != "node-1" || !got.DeployRequested || got.Version != 1 || got.NeedsWork() {
		t.Fatalf("adopted: %+v", got)
	}
	want := []store.Port{ports[0], ports[1]}
	want[0].ServerID, want[1].ServerID = "a1", "a1"
	gotPorts, err := st.Ports(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	requirePorts(t, "adopted ports", gotPorts, want)
	if acts, err := st.Actions(ctx, "a1"); err != nil || len(acts) != 1 || acts[0].Action != lifecycle.ActionCreate {
		t.Fatalf("actions of a1: %+v %v", acts, err)
	}
	if holders, err := st.NodeHolders(ctx); err != nil || holders["node-1"] != "a1" {
		t.Fatalf("holders: %v %v", holders, err)
	}

	for _, c := range []struct {
		name  string
		s     *lifecycle.Server
		ports []store.Port
		want  error
	}{
		{"duplicate id", adopted("a1", "node-9"), nil, store.ErrExists},
		{"node held", adopted("a2", "node-1"), nil, store.ErrNodeTaken},
		{"address taken", adopted("a3", "node-3"), []store.Port{
			{ID: "vif-3", NetworkID: "net-b", IP: "10.1.0.7", VIFNode: "node-3"},
			{ID: "vif-4", NetworkID: "net-a", IP: "10.0.0.9", VIFNode: "node-3"}}, store.ErrAddressInUse},
	} {
		if err := st.AdoptServer(ctx, c.s, c.ports, nil); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		if c.s.ID == "a1" {
			continue
		}
		if _, err := st.GetServer(ctx, c.s.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s: the refused server was written: %v", c.name, err)
		}
		for _, p := range c.ports {
			if _, err := st.GetPort(ctx, p.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s: port %s written: %v", c.name, p.ID, err)
			}
		}
	}
	if got := mustGet(t, st, "a1"); got.NodeID != "node-1" || !got.CreatedAt.Equal(T0) {
		t.Fatalf("a1 changed by the refused adoptions: %+v", got)
	}
	testAdoptVolumes(t, st, adopted)
}

// testAdoptVolumes: an adopted server's volumes are held in-use on its
// node with their Cinder attachments, in the same transaction; a volume
// another server holds refuses the whole adoption.
func testAdoptVolumes(t *testing.T, st store.Store, adopted func(id, node string) *lifecycle.Server) {
	ctx := t.Context()
	mustCreateVolume(t, st, "av-boot")
	mustCreateVolume(t, st, "av-data")
	s := adopted("av1", "node-v")
	s.VolumesOnNode = true
	s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "av-boot", BootIndex: 0, DeleteOnTermination: true}, {ID: "av-data", BootIndex: -1}}
	err := st.AdoptServer(ctx, s, nil, []store.Volume{{ID: "av-boot", AttachmentID: "att-1"}, {ID: "av-data", AttachmentID: "att-2"}})
	if err != nil {
		t.Fatalf("AdoptServer with volumes: %v", err)
	}
	vols, err := st.ServerVolumes(ctx, "av1")
	if err != nil || len(vols) != 2 {
		t.Fatalf("volumes of av1: %+v %v", vols, err)
	}
	for i, want := range []struct {
		id, att string
		boot    int
		dot     bool
	}{{"av-boot", "att-1", 0, true}, {"av-data", "att-2", -1, false}} {
		v := vols[i]
		if v.ID != want.id || v.Status != store.VolumeInUse || v.NodeID != "node-v" || v.AttachmentID != want.att ||
			v.AttachmentNode != "node-v" || v.BootIndex != want.boot || v.DeleteOnTermination != want.dot {
			t.Errorf("adopted volume %d: %+v", i, v)
		}
	}
	s2 := adopted("av2", "node-w")
	s2.Spec.Volumes = []lifecycle.VolumeRef{{ID: "av-data", BootIndex: -1}}
	if err := st.AdoptServer(ctx, s2, nil, []store.Volume{{ID: "av-data", AttachmentID: "att-3"}}); !errors.Is(err, store.ErrVolumeInUse) {
		t.Fatalf("adopting a held volume: %v, want ErrVolumeInUse", err)
	}
	if _, err := st.GetServer(ctx, "av2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused server was written: %v", err)
	}
}
