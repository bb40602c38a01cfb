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
	if err := st.AdoptServer(ctx, s, ports); err != nil {
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
		if err := st.AdoptServer(ctx, c.s, c.ports); !errors.Is(err, c.want) {
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
}
