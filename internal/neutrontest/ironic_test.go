package neutrontest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/servicetest"
)

// ironicConf is the least Ironic needs to attach Neutron ports to a node on
// its flat network interface: [neutron] credentials (a service user), the
// catalog's network endpoint, a cleaning network by UUID (flat's validate
// needs one; a name costs two GETs per request).
const ironicConf = `[DEFAULT]
auth_strategy = keystone
rpc_transport = none
host = localhost
enabled_hardware_types = fake-hardware
enabled_boot_interfaces = fake
enabled_deploy_interfaces = fake
enabled_management_interfaces = fake
enabled_power_interfaces = fake
enabled_network_interfaces = noop,flat,neutron
default_network_interface = flat
enabled_storage_interfaces = noop
enabled_rescue_interfaces = no-rescue

[api]
host_ip = 127.0.0.1
port = %d

[database]
connection = sqlite:///%s/ironic.sqlite

[dhcp]
dhcp_provider = none

[conductor]
automated_clean = false

[nova]
send_power_notifications = false

[oslo_concurrency]
lock_path = %s

%s
[neutron]
auth_type = password
auth_url = %s
username = %s
password = %s
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
cleaning_network = %s
provisioning_network = %s
`

// TestIronicFlatAttach pins what a real Ironic needs to accept a Neutron
// port from this harness: on a node with the flat network interface, VIF
// attach succeeds and Ironic sets the Neutron port's MAC to its own port's.
func TestIronicFlatAttach(t *testing.T) {
	servicetest.Require(t, ".ci/install-ironic.sh", "/usr/bin/ironic", "/usr/bin/ironic-dbsync")
	ks := keystonetest.Start(t)
	n := Start(t, ks)
	net := n.CreateNetwork(t, NetworkOptions{Name: "tenant", Shared: true})
	n.CreateSubnet(t, SubnetOptions{NetworkID: net.ID, CIDR: "192.0.2.0/24"})

	st := servicetest.Prepare(t, ks, "baremetal", "ironic", "lock")
	conf := filepath.Join(st.Dir, "ironic.conf")
	auth := strings.TrimSuffix(ks.URL, "/v3")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(ironicConf, st.Port, st.Dir, filepath.Join(st.Dir, "lock"),
		st.Authtoken, auth, st.User, keystonetest.Password, net.ID, net.ID)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := servicetest.Exec(st.Dir, nil, "/usr/bin/ironic-dbsync", "--config-file", conf, "create_schema"); err != nil {
		t.Fatal(err)
	}
	ironic := servicetest.Run(t, servicetest.Command{Name: "ironic", Dir: st.Dir, Port: st.Port,
		Argv: []string{"/usr/bin/ironic", "--config-file", conf}, Ready: st.URL + "/v1"})
	rss, procs := ironic.RSS()
	t.Logf("ironic up in %s (RSS %d MiB over %d processes)", ironic.StartTime.Round(time.Millisecond), rss>>20, procs)

	admin := ks.Token(t, "admin")
	hc := &http.Client{Timeout: 120 * time.Second}
	bm := func(method, path string, body, out any) error {
		return testproc.CallWith(hc, admin, method, st.URL+path, body, out,
			map[string]string{"X-OpenStack-Ironic-API-Version": "1.78"})
	}
	var node struct{ UUID string }
	if err := bm(http.MethodPost, "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": "flat-0",
		"network_interface": "flat"}, &node); err != nil {
		t.Fatal(err)
	}
	const mac = "52:54:00:12:34:56"
	if err := bm(http.MethodPost, "/v1/ports", map[string]any{"node_uuid": node.UUID, "address": mac,
		"physical_network": PhysicalNetwork}, nil); err != nil {
		t.Fatal(err)
	}
	var port struct {
		Raw map[string]any `json:"port"`
	}
	if err := testproc.Call(n.hc, admin, http.MethodPost, n.URL+"/v2.0/ports", map[string]any{"port": map[string]any{
		"network_id": net.ID, "device_id": "server-0", "device_owner": "compute:nova"}}, &port); err != nil {
		t.Fatal(err)
	}
	portID := port.Raw["id"].(string)
	begin := time.Now()
	if err := bm(http.MethodPost, "/v1/nodes/"+node.UUID+"/vifs", map[string]any{"id": portID}, nil); err != nil {
		t.Fatalf("VIF attach: %v", err)
	}
	attach := time.Since(begin)
	var after struct {
		Port map[string]any `json:"port"`
	}
	if err := testproc.Call(n.hc, admin, http.MethodGet, n.URL+"/v2.0/ports/"+portID, nil, &after); err != nil {
		t.Fatal(err)
	}
	t.Logf("VIF attach %s; Neutron port after: mac %v host %q vnic %v vif %v status %v", attach.Round(time.Millisecond),
		after.Port["mac_address"], after.Port["binding:host_id"], after.Port["binding:vnic_type"],
		after.Port["binding:vif_type"], after.Port["status"])
	if after.Port["mac_address"] != mac {
		t.Errorf("Neutron port MAC %v, want the Ironic port's %s", after.Port["mac_address"], mac)
	}
	if err := bm(http.MethodDelete, "/v1/nodes/"+node.UUID+"/vifs/"+portID, nil, nil); err != nil {
		t.Fatalf("VIF detach: %v", err)
	}
}
