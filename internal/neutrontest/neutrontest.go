// Package neutrontest starts a real neutron-server for tests: Debian's
// Neutron (ML2 with the flat and vlan type drivers, no agents, the router
// service plugin), a fresh PostgreSQL database and RabbitMQ vhost, behind a
// keystonetest Keystone whose catalog gets its "network" endpoint and a
// service user. Ports of vnic_type baremetal bind through a test-only ML2
// mechanism driver kept in ml2/ (no in-tree driver binds them without
// agents), which refuses the hosts given to RefuseBinding.
//
// A start costs about 10 s (schema migration, then 4–7 s until the API
// answers) and ~600 MiB over 4 processes: start one per test binary (one
// top-level test with subtests) where the tests allow it.
//
// Skipped when neutron-server is missing, unless INGOT_TEST_IRONIC=1: then a
// missing or broken Neutron fails the test. .ci/install-neutron.sh installs
// the packages.
package neutrontest

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/servicetest"
)

// Paths of Debian's Neutron.
const (
	serverBin = "/usr/bin/neutron-server"
	manageBin = "/usr/bin/neutron-db-manage"
	pasteIni  = "/etc/neutron/api-paste.ini"
	script    = ".ci/install-neutron.sh"
)

// PhysicalNetwork is the physical network of the flat and vlan segments
// (VLANs 100–199 on it).
const PhysicalNetwork = "physnet1"

//go:embed ml2
var ml2Files embed.FS

// Env is one running neutron-server.
type Env struct {
	// URL is Neutron's root, e.g. http://127.0.0.1:40123 (the catalog's
	// "network" endpoint; the API is under /v2.0).
	URL string
	// Keystone is the identity service Neutron validates tokens with.
	Keystone *keystonetest.Env
	// ServiceUser is Neutron's own user in project service (admin, service).
	ServiceUser string
	// Proc is the server's process group (log, start time, RSS).
	Proc *servicetest.Proc
	// MigrateTime is how long neutron-db-manage upgrade heads took.
	MigrateTime time.Duration

	refuseFile string
	hc         *http.Client
}

var confTmpl = template.Must(template.New("neutron.conf").Parse(`# Written by ingot's internal/neutrontest.
[DEFAULT]
bind_host = 127.0.0.1
bind_port = {{.Port}}
core_plugin = ml2
# An empty list aborts the start (ExtensionsNotFound auto-allocated-topology, dns-integration).
service_plugins = router
auth_strategy = keystone
api_paste_config = {{.Paste}}
api_workers = 1
rpc_workers = 0
rpc_state_report_workers = 0
transport_url = {{.Transport}}
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dns_domain = example.test.
# Ironic opens a keep-alive connection per call and never closes it: with
# the defaults the one worker stopped answering after ~100 of them.
wsgi_keep_alive = false
client_socket_timeout = 30
state_path = {{.Dir}}/state
debug = false

[database]
connection = {{.DB}}

[oslo_concurrency]
lock_path = {{.Dir}}/lock

{{.Authtoken}}
[ml2]
type_drivers = flat,vlan
tenant_network_types = vlan
mechanism_drivers = ingot_test_binder
extension_drivers = port_security,dns

[ml2_type_flat]
flat_networks = *

[ml2_type_vlan]
network_vlan_ranges = {{.Physnet}}:100:199

[oslo_messaging_notifications]
driver = noop
`))

// Start starts a neutron-server behind ks for the test and stops it when the
// test ends.
func Start(t testing.TB, ks *keystonetest.Env) *Env {
	t.Helper()
	servicetest.Require(t, script, serverBin, manageBin, pasteIni)
	st := servicetest.Prepare(t, ks, "network", "neutron", "state", "lock")
	dir := st.Dir
	if err := writeBinder(dir); err != nil {
		t.Fatalf("neutrontest: %v", err)
	}
	e := &Env{URL: st.URL, Keystone: ks, ServiceUser: st.User, refuseFile: filepath.Join(dir, "refuse-hosts"),
		hc: &http.Client{Timeout: 60 * time.Second}}
	conf := filepath.Join(dir, "neutron.conf")
	var b bytes.Buffer
	if err := confTmpl.Execute(&b, map[string]any{"Port": st.Port, "Paste": pasteIni, "Dir": dir,
		"Transport": servicetest.Vhost(t), "DB": servicetest.Database(t), "Authtoken": st.Authtoken, "Physnet": PhysicalNetwork}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PYTHONPATH=" + filepath.Join(dir, "ml2"), "INGOT_TEST_REFUSE_FILE=" + e.refuseFile}
	begin := time.Now()
	if err := servicetest.Exec(dir, env, manageBin, "--config-file", conf, "upgrade", "heads"); err != nil {
		t.Fatalf("neutrontest: %v", err)
	}
	e.MigrateTime = time.Since(begin)
	e.Proc = servicetest.Run(t, servicetest.Command{Name: "neutron-server", Dir: dir, Env: env, Port: st.Port,
		Argv:  []string{serverBin, "--config-file", conf, "--log-file", filepath.Join(dir, "neutron-server.log")},
		Ready: e.URL + "/"})
	return e
}

// writeBinder copies the test mechanism driver (ml2/) into dir/ml2.
func writeBinder(dir string) error {
	return fs.WalkDir(ml2Files, "ml2", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, path)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := ml2Files.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
}

// RefuseBinding makes the test driver refuse to bind ports on hosts (Neutron
// then answers 200 with binding:vif_type binding_failed) until the test ends.
func (e *Env) RefuseBinding(t testing.TB, hosts ...string) {
	t.Helper()
	if err := os.WriteFile(e.refuseFile, []byte(strings.Join(hosts, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(e.refuseFile) })
}

// AdminToken is a token of Keystone's admin (project admin).
func (e *Env) AdminToken(t testing.TB) string {
	t.Helper()
	return e.Keystone.Token(t, "admin")
}
