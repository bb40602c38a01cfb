package neutrontest

import (
	"net/http"
	"testing"

	"github.com/ingot-dev/ingot/internal/testproc"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// TestStart: Neutron answers through its catalog endpoint with a member's
// token, the admin makes a provider network and subnet, and the test driver
// binds a baremetal port (ACTIVE, vif_type other) except on a refused host.
func TestStart(t *testing.T) {
	ks := keystonetest.Start(t)
	e := Start(t, ks)
	rss, procs := e.Proc.RSS()
	t.Logf("neutron-server: migrate %s, start %s, RSS %d MiB over %d processes",
		e.MigrateTime.Round(1e6), e.Proc.StartTime.Round(1e6), rss>>20, procs)

	net := e.CreateNetwork(t, NetworkOptions{Name: "prov", Shared: true})
	e.CreateSubnet(t, SubnetOptions{NetworkID: net.ID, CIDR: "192.0.2.0/24", Gateway: "192.0.2.1",
		DNS: []string{"192.0.2.53"}, HostRoutes: []Route{{Destination: "198.51.100.0/24", NextHop: "192.0.2.254"}},
		Pools: []Pool{{Start: "192.0.2.100", End: "192.0.2.199"}}})
	if net.MTU != 1500 {
		t.Errorf("MTU %d, want 1500", net.MTU)
	}
	admin := e.AdminToken(t)
	bind := func(host string) (vif, status string) {
		var out struct {
			Port map[string]any `json:"port"`
		}
		if err := testproc.Call(e.hc, admin, http.MethodPost, e.URL+"/v2.0/ports", map[string]any{"port": map[string]any{
			"network_id": net.ID, "binding:vnic_type": "baremetal", "binding:host_id": host}}, &out); err != nil {
			t.Fatal(err)
		}
		return out.Port["binding:vif_type"].(string), out.Port["status"].(string)
	}
	if vif, status := bind("node-1"); vif != "other" || status != "ACTIVE" {
		t.Errorf("bound port: vif_type %s status %s, want other ACTIVE", vif, status)
	}
	e.RefuseBinding(t, "node-2")
	if vif, _ := bind("node-2"); vif != "binding_failed" {
		t.Errorf("refused host: vif_type %s, want binding_failed", vif)
	}
	if n := e.PortCount(t, "network_id="+net.ID); n != 2 {
		t.Errorf("%d ports, want 2", n)
	}
	var member struct {
		Groups []struct{ ID string } `json:"security_groups"`
	}
	if err := testproc.Call(e.hc, ks.Token(t, "member-a"), http.MethodGet, e.URL+"/v2.0/security-groups", nil, &member); err != nil {
		t.Fatal(err)
	}
	if len(member.Groups) != 1 {
		t.Errorf("member sees %d security groups, want its default one", len(member.Groups))
	}
}
