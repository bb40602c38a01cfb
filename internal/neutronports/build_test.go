package neutronports_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/neutronports"
)

// userPort makes a port of the project in Neutron, as a user would
// before asking for it by id.
func (r *rig) userPort(fixedIP string) neutron.Port {
	r.t.Helper()
	body := map[string]any{"network_id": r.netID, "project_id": project, "name": "mine"}
	if fixedIP != "" {
		body["fixed_ips"] = []map[string]string{{"ip_address": fixedIP}}
	}
	raw, _ := json.Marshal(map[string]any{"port": body})
	req := httptest.NewRequest(http.MethodPost, "http://neutron.test/v2.0/ports", strings.NewReader(string(raw)))
	req.Header.Set("X-Auth-Token", "tok-ingot")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	r.neutron.ServeHTTP(rec, req)
	var out struct{ Port neutron.Port }
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
		r.t.Fatalf("create user port: %d %s", rec.Code, rec.Body)
	}
	return out.Port
}

func (r *rig) port(id string) (neutron.Port, error) {
	return r.nc.GetPort(context.Background(), id)
}

// onlyRow is the server's one port row.
func (r *rig) onlyRow(id string) (row struct{ ID, NeutronID, IP, MAC, VIFNode string }) {
	r.t.Helper()
	ports, err := r.st.Ports(context.Background(), id)
	if err != nil || len(ports) != 1 {
		r.t.Fatalf("ports of %s: %+v, %v; want one", id, ports, err)
	}
	p := ports[0]
	row.ID, row.NeutronID, row.IP, row.MAC, row.VIFNode = p.ID, p.NeutronID, p.IP, p.MAC, p.VIFNode
	return row
}

// TestBuildOnNeutron: a build makes one Neutron port for the server
// (device_id, device_owner, the deterministic name, the project's),
// attaches it to the node by its Neutron id, describes the subnet in
// network_data.json, and its delete leaves Neutron's port count as it was.
func TestBuildOnNeutron(t *testing.T) {
	r := newRig(t, rigOptions{nodes: 2})
	before := r.ports()
	id := r.create(nil)
	r.until("active", r.settled(id))
	if ph := r.phase(id); ph != lifecycle.PhaseActive {
		t.Fatalf("phase %s, want active (fault %+v)", ph, r.server(id).Fault)
	}
	// Find-or-create (list, create), and one description of the network
	// for both the choice of NIC and network_data.json.
	neutronCalls, ironicCalls := r.take("neutron"), r.take("ironic")
	t.Logf("build: %d Neutron calls %v; %d Ironic calls", len(neutronCalls), neutronCalls, len(ironicCalls))
	if want := []string{"GET /v2.0/ports", "POST /v2.0/ports", "GET /v2.0/networks/" + r.netID, "GET /v2.0/subnets"}; !slices.Equal(neutronCalls, want) {
		t.Errorf("Neutron calls of a build %v, want %v", neutronCalls, want)
	}
	row := r.onlyRow(id)
	p, err := r.port(row.NeutronID)
	if err != nil {
		t.Fatalf("Neutron port %q of the row: %v", row.NeutronID, err)
	}
	if p.DeviceID != id || p.DeviceOwner != "compute:nova" || p.Name != neutronports.PortName(row.ID) || p.ProjectID != project {
		t.Errorf("port device %q owner %q name %q project %q; want %s, compute:nova, %s, %s",
			p.DeviceID, p.DeviceOwner, p.Name, p.ProjectID, id, neutronports.PortName(row.ID), project)
	}
	if !p.HasAddress(row.IP) {
		t.Errorf("row address %s is not the port's %+v", row.IP, p.FixedIPs)
	}
	node := r.server(id).NodeID
	snap, _ := r.ironic.Node(node)
	if vifs := r.ironic.VIFs(node); len(vifs) != 1 || vifs[0] != p.ID {
		t.Errorf("VIFs on node %s: %v, want the Neutron port %s", node, vifs, p.ID)
	}
	if row.MAC != snap.Ports[0].Address {
		t.Errorf("row MAC %s, want the Ironic port's %s", row.MAC, snap.Ports[0].Address)
	}
	nd, _ := json.Marshal(r.drives[node]["network_data"])
	for _, want := range []string{`"ip_address":"` + row.IP + `"`, `"netmask":"255.255.255.0"`, `"gateway":"192.0.2.1"`,
		`"address":"192.0.2.53"`, `"mtu":9000`, `"vif_id":"` + p.ID + `"`, `"ethernet_mac_address":"` + snap.Ports[0].Address + `"`,
		`"network":"198.51.100.0"`, `"gateway":"192.0.2.254"`} {
		if !strings.Contains(string(nd), want) {
			t.Errorf("network_data.json lacks %s: %s", want, nd)
		}
	}
	if got := r.ports(); got != before+1 {
		t.Errorf("ports while active: %d, want %d", got, before+1)
	}
	r.take("neutron")
	r.requestDelete(id)
	r.until("deleted", r.settled(id))
	if got := r.ports(); got != before {
		t.Errorf("ports after delete: %d, want %d (before)", got, before)
	}
	if _, err := r.port(p.ID); err == nil {
		t.Errorf("port %s still in Neutron after the delete", p.ID)
	}
	t.Logf("delete: Neutron calls %v (the last one the test's)", r.take("neutron"))
}

// TestUserPortAndFixedIP: a pre-created port is claimed, attached and, on
// delete, released (device cleared) and kept; a fixed IP is the port's.
func TestUserPortAndFixedIP(t *testing.T) {
	r := newRig(t, rigOptions{nodes: 2})
	mine := r.userPort("")
	before := r.ports()
	withPort := r.create(func(s *lifecycle.Spec) { s.UserPorts = map[string]string{r.netID: mine.ID} })
	withIP := r.create(func(s *lifecycle.Spec) { s.FixedIPs = map[string]string{r.netID: "192.0.2.77"} })
	r.until("both active", func() bool { return r.settled(withPort)() && r.settled(withIP)() })
	for _, id := range []string{withPort, withIP} {
		if ph := r.phase(id); ph != lifecycle.PhaseActive {
			t.Fatalf("%s: phase %s, want active (fault %+v)", id, ph, r.server(id).Fault)
		}
	}
	if row := r.onlyRow(withPort); row.NeutronID != mine.ID {
		t.Errorf("the server's port is %s, want the user's %s", row.NeutronID, mine.ID)
	}
	if p, _ := r.port(mine.ID); p.DeviceID != withPort || p.DeviceOwner != "compute:nova" {
		t.Errorf("user port device %q owner %q, want %s compute:nova", p.DeviceID, p.DeviceOwner, withPort)
	}
	if row := r.onlyRow(withIP); row.IP != "192.0.2.77" {
		t.Errorf("fixed IP server's address %s, want 192.0.2.77", row.IP)
	}
	if vifs := r.ironic.VIFs(r.server(withPort).NodeID); len(vifs) != 1 || vifs[0] != mine.ID {
		t.Errorf("VIFs %v, want the user's port %s", vifs, mine.ID)
	}

	r.requestDelete(withPort)
	r.requestDelete(withIP)
	r.until("both deleted", func() bool { return r.settled(withPort)() && r.settled(withIP)() })
	p, err := r.port(mine.ID)
	if err != nil {
		t.Fatalf("the user's port was deleted: %v", err)
	}
	if p.DeviceID != "" || p.DeviceOwner != "" || p.HostID != "" {
		t.Errorf("user port after delete: device %q owner %q host %q; want released", p.DeviceID, p.DeviceOwner, p.HostID)
	}
	if got := r.ports(); got != before {
		t.Errorf("ports after the deletes: %d, want %d", got, before)
	}
}

// TestFixedIPTaken: an address another port holds fails the build
// (network allocation failed, ERROR) and leaves no port of the server.
func TestFixedIPTaken(t *testing.T) {
	r := newRig(t, rigOptions{nodes: 1})
	r.userPort("192.0.2.50")
	before := r.ports()
	id := r.create(func(s *lifecycle.Spec) { s.FixedIPs = map[string]string{r.netID: "192.0.2.50"} })
	r.until("settled", r.settled(id))
	s := r.server(id)
	if s.Phase != lifecycle.PhaseError || s.Fault == nil || !strings.Contains(s.Fault.Message, "network allocation failed") {
		t.Fatalf("phase %s fault %+v; want ERROR, network allocation failed", s.Phase, s.Fault)
	}
	if got := r.ports(); got != before {
		t.Errorf("ports: %d, want %d", got, before)
	}
}

// TestUserPortInUse: a user's port another device took between the
// create and the build fails the build (network allocation failed), and
// the release leaves that device's port as it is.
func TestUserPortInUse(t *testing.T) {
	r := newRig(t, rigOptions{nodes: 1})
	theirs := r.userPort("")
	if _, err := r.nc.ClaimPort(context.Background(), theirs.ID, "another-server", "compute:nova"); err != nil {
		t.Fatal(err)
	}
	before := r.ports()
	id := r.create(func(s *lifecycle.Spec) { s.UserPorts = map[string]string{r.netID: theirs.ID} })
	r.until("settled", r.settled(id))
	s := r.server(id)
	if s.Phase != lifecycle.PhaseError || s.Fault == nil || !strings.Contains(s.Fault.Message, "network allocation failed") {
		t.Fatalf("phase %s fault %+v; want ERROR, network allocation failed", s.Phase, s.Fault)
	}
	if p, err := r.port(theirs.ID); err != nil || p.DeviceID != "another-server" || p.DeviceOwner != "compute:nova" {
		t.Errorf("the other device's port after the release: %+v, %v; want it untouched", p, err)
	}
	if got := r.ports(); got != before {
		t.Errorf("ports: %d, want %d", got, before)
	}
}
