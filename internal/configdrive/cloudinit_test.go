package configdrive

import (
	"testing"

	"github.com/ingot-dev/ingot/internal/cloudinittest"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/store"
)

// cloud-init's own parser on what NetworkData writes: a DHCP network on a
// bond with bonding options, a static one on a NIC with an MTU; and the
// failure a generated MAC meets on a machine that does not have it.
func TestNetworkDataCloudInit(t *testing.T) {
	ports := []store.Port{
		{ID: "p1", NetworkID: netB.ID, IP: "10.1.0.9", MAC: "52:54:00:00:00:02", Binding: store.Binding{
			PortgroupUUID: "pg1", BondMode: "balance-xor", BondProperties: map[string]any{"xmit_hash_policy": "layer3+4"},
			Members: []store.BondMember{{PortUUID: "ip2", MAC: "52:54:00:00:00:02"}, {PortUUID: "ip3", MAC: "52:54:00:00:00:03"}}}},
		{ID: "p2", NetworkID: netA.ID, IP: "10.0.0.6", MAC: "52:54:00:00:00:01", Binding: store.Binding{PortUUID: "ip1"}},
	}
	nics := map[string]string{"52:54:00:00:00:01": "eno1", "52:54:00:00:00:02": "eno2", "52:54:00:00:00:03": "eno3"}
	cfg, err := cloudinittest.Convert(t, NetworkData(ports, network.Networks{netA, netB}), nics)
	if err != nil {
		t.Fatal(err)
	}
	var bond map[string]any
	for _, e := range cfg.Config {
		if e["type"] == "bond" {
			bond = e
		}
	}
	params, _ := bond["params"].(map[string]any)
	subnets, _ := bond["subnets"].([]any)
	if bond == nil || params["bond_mode"] != "balance-xor" || params["bond_xmit_hash_policy"] != "layer3+4" || len(subnets) != 1 ||
		subnets[0].(map[string]any)["type"] != "dhcp4" {
		t.Errorf("bond = %v", bond)
	}
	if e := cfg.Named("eno1"); e == nil || e["mtu"] != float64(9000) {
		t.Errorf("eno1 = %v", e)
	}

	// A MAC the machine does not have: cloud-init gives up on the network.
	ports[1].MAC = "fa:16:3e:12:34:56"
	if _, err := cloudinittest.Convert(t, NetworkData(ports, network.Networks{netA, netB}), nics); err == nil {
		t.Error("cloud-init accepted a link whose MAC is none of the machine's NICs")
	}
}
