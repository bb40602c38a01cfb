package scheduler

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
)

// filterInventory is a simulator whose nodes (all of class rc) are made
// by the test.
func filterInventory(t *testing.T, specs ...ironicsim.NodeSpec) (*inventory, []string) {
	t.Helper()
	sim := ironicsim.New(ironicsim.Options{Seed: 1})
	var ids []string
	for _, s := range specs {
		s.ResourceClass = "rc"
		ids = append(ids, sim.AddNodes(1, s)...)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	c, err := ironic.New(ironic.Config{URL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &inventory{Client: c, sim: sim}, ids
}

// picks asks for a node for n different servers like s (each claim
// released, so every pick sees every node) and returns the nodes chosen.
func picks(t *testing.T, sc *Scheduler, n int, spec lifecycle.Spec) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range n {
		s := &lifecycle.Server{ID: fmt.Sprintf("server-%04d", i), Spec: spec}
		s.Spec.ResourceClass = "rc"
		node, err := sc.Pick(context.Background(), s)
		if err != nil {
			t.Fatalf("pick %d: %v", i, err)
		}
		got[node]++
		sc.Release(node, s.ID)
	}
	return got
}

func only(t *testing.T, what string, got map[string]int, want ...string) {
	t.Helper()
	for node := range got {
		if !slices.Contains(want, node) {
			t.Fatalf("%s: picked %s (picks %v), want only %v", what, node, got, want)
		}
	}
}

func TestRequiredTraitLandsOnlyOnANodeWithIt(t *testing.T) {
	specs := make([]ironicsim.NodeSpec, 8)
	specs[5].Traits = []string{"CUSTOM_GPU", "CUSTOM_RAID"}
	specs[2].Traits = []string{"CUSTOM_RAID"}
	inv, ids := filterInventory(t, specs...)
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	only(t, "trait CUSTOM_GPU", picks(t, sc, 30, lifecycle.Spec{RequiredTraits: []string{"CUSTOM_GPU"}}), ids[5])
	only(t, "trait CUSTOM_RAID", picks(t, sc, 30, lifecycle.Spec{RequiredTraits: []string{"CUSTOM_RAID"}}), ids[2], ids[5])
	if got := picks(t, sc, 30, lifecycle.Spec{}); len(got) < 4 {
		t.Errorf("picks without traits spread over %d node(s), want most of 8", len(got))
	}
}

func TestRequiredTraitNoNodeNamesIt(t *testing.T) {
	inv, _ := filterInventory(t, ironicsim.NodeSpec{Traits: []string{"CUSTOM_RAID"}}, ironicsim.NodeSpec{})
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	s := &lifecycle.Server{ID: "s", Spec: lifecycle.Spec{ResourceClass: "rc", RequiredTraits: []string{"CUSTOM_RAID", "CUSTOM_GPU"}}}
	_, err := sc.Pick(context.Background(), s)
	if !errors.Is(err, ErrNoCandidate) || Why(err) != "no available node has required trait CUSTOM_GPU" {
		t.Fatalf("Pick = %v (why %q), want ErrNoCandidate naming CUSTOM_GPU", err, Why(err))
	}
}

func TestForbiddenTraitIsAvoided(t *testing.T) {
	inv, ids := filterInventory(t, ironicsim.NodeSpec{Traits: []string{"CUSTOM_SLOW"}}, ironicsim.NodeSpec{},
		ironicsim.NodeSpec{Traits: []string{"CUSTOM_SLOW", "CUSTOM_GPU"}})
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	only(t, "forbidden CUSTOM_SLOW", picks(t, sc, 30, lifecycle.Spec{ForbiddenTraits: []string{"CUSTOM_SLOW"}}), ids[1])
	s := &lifecycle.Server{ID: "s", Spec: lifecycle.Spec{ResourceClass: "rc", RequiredTraits: []string{"CUSTOM_GPU"},
		ForbiddenTraits: []string{"CUSTOM_SLOW"}}}
	_, err := sc.Pick(context.Background(), s)
	if !errors.Is(err, ErrNoCandidate) || !strings.Contains(Why(err), "has forbidden trait CUSTOM_SLOW") {
		t.Fatalf("Pick = %v (why %q), want no candidate for the forbidden trait", err, Why(err))
	}
}

func TestCapabilitiesFilter(t *testing.T) {
	caps := func(c string) ironicsim.NodeSpec {
		return ironicsim.NodeSpec{Properties: map[string]any{"cpus": 8, "capabilities": c}}
	}
	inv, ids := filterInventory(t, caps("boot_mode:bios"), caps("boot_mode:uefi,secure_boot:true"), caps(""), caps("boot_mode:uefi"))
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	only(t, "boot_mode uefi", picks(t, sc, 30, lifecycle.Spec{Capabilities: map[string]string{"boot_mode": "uefi"}}), ids[1], ids[3])
	only(t, "uefi and secure boot", picks(t, sc, 30, lifecycle.Spec{Capabilities: map[string]string{"boot_mode": "uefi", "secure_boot": "true"}}), ids[1])
	s := &lifecycle.Server{ID: "s", Spec: lifecycle.Spec{ResourceClass: "rc", Capabilities: map[string]string{"boot_mode": "legacy"}}}
	if _, err := sc.Pick(context.Background(), s); !errors.Is(err, ErrNoCandidate) || !strings.Contains(Why(err), "4 node(s) lacks capability boot_mode:legacy") {
		t.Fatalf("Pick = %v (why %q)", err, Why(err))
	}
}

func TestPortCountsFilter(t *testing.T) {
	inv, ids := filterInventory(t,
		ironicsim.NodeSpec{Ports: 1},
		ironicsim.NodeSpec{Ports: 1, BondPorts: 2}, // a port and a bond: two attachments
		ironicsim.NodeSpec{BondPorts: 2},           // one bond: one attachment
		ironicsim.NodeSpec{Ports: 3},
	)
	nets := network.Networks{{ID: "a"}, {ID: "b"}}
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{Networks: nets})
	only(t, "two networks", picks(t, sc, 30, lifecycle.Spec{Networks: []string{"a", "b"}}), ids[1], ids[3])
	if got := picks(t, sc, 30, lifecycle.Spec{Networks: []string{"a"}}); len(got) < 3 {
		t.Errorf("one network spread over %v, want all four nodes open", got)
	}
	if n := inv.sim.Counts()["GET /v1/ports"]; n != 1 {
		t.Errorf("%d port listings for 60 picks, want 1", n)
	}
	s := &lifecycle.Server{ID: "s", Spec: lifecycle.Spec{ResourceClass: "rc", Networks: []string{"a", "b", "a", "b"}}}
	if _, err := sc.Pick(context.Background(), s); !errors.Is(err, ErrNoCandidate) || !strings.Contains(Why(err), "too few free Ironic ports for 4 network(s)") {
		t.Fatalf("Pick = %v (why %q)", err, Why(err))
	}
}

func TestPhysicalNetworkFilter(t *testing.T) {
	// The first node's ports are on physnet "other": a network on "storage" cannot use them.
	inv, ids := filterInventory(t, ironicsim.NodeSpec{Ports: 2, PhysicalNetwork: "other"}, ironicsim.NodeSpec{Ports: 2})
	nets := network.Networks{{ID: "st", PhysicalNetwork: "storage"}}
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{Networks: nets})
	only(t, "storage network", picks(t, sc, 20, lifecycle.Spec{Networks: []string{"st"}}), ids[1])
}

func TestNoNetworksNoPortListing(t *testing.T) {
	inv, _ := filterInventory(t, ironicsim.NodeSpec{Ports: 1})
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	picks(t, sc, 5, lifecycle.Spec{})
	if n := inv.sim.Counts()["GET /v1/ports"]; n != 0 {
		t.Errorf("%d port listings for servers without networks", n)
	}
}
