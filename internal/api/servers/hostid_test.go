package servers

import (
	"fmt"
	"testing"

	"github.com/ingot-dev/ingot/internal/store"
)

// TestHostIDIsTheComputeHosts: as with Nova's Ironic driver, a project's
// servers on nodes of one compute service share a hostId (affinity members
// show the same one), other projects see another, and nodes of different
// compute services differ.
func TestHostIDIsTheComputeHosts(t *testing.T) {
	one := []store.Service{{ID: 1, Host: "ingot-a", Binary: store.BinaryCompute}}
	if hostID("p", "node-1", one) != hostID("p", "node-2", one) {
		t.Error("two nodes of one compute host: different hostIds")
	}
	if hostID("p", "node-1", one) == hostID("q", "node-1", one) {
		t.Error("two projects: the same hostId")
	}
	if hostID("p", "", one) != "" {
		t.Error("no node: a hostId")
	}
	two := append(one, store.Service{ID: 2, Host: "ingot-b", Binary: store.BinaryCompute})
	seen := map[string]bool{}
	for i := range 20 {
		seen[hostID("p", fmt.Sprintf("node-%d", i), two)] = true
	}
	if len(seen) != 2 {
		t.Errorf("20 nodes over two compute hosts: %d hostIds", len(seen))
	}
}
