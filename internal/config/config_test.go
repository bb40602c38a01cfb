package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseIssueExample(t *testing.T) {
	c, err := Parse([]byte(`
listen: 127.0.0.1:8774
database: /var/lib/ingot/ingot.db
ironic:
  url: http://127.0.0.1:6385
poll_interval: 2s
build_timeout: 60m
max_attempts: 3
flavors:
  - {name: bm.small, resource_class: baremetal, disk_gb: 100}
images:
  - {name: debian-12, id: 3f1d1b9e-6c1e-4d5c-9d0a-1c2b3a4d5e6f, url: http://images.example/debian-12.qcow2}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.BuildTimeout != time.Hour || c.Flavors[0].ID != "bm.small" || c.Networks[0].ID == "" {
		t.Fatalf("defaults not applied: %+v", c)
	}
	again, _ := Parse([]byte("networks:\n  - {name: provisioning, cidr: 10.0.0.0/24}\n"))
	if again.Networks[0].ID != c.Networks[0].ID {
		t.Errorf("network id not stable across loads")
	}
	if nets := c.NetworkList(); len(nets) != 1 || nets[0].CIDR.String() != "10.0.0.0/24" {
		t.Errorf("NetworkList = %+v", nets)
	}
}

func TestParseNetworkAndFlavorExtras(t *testing.T) {
	c, err := Parse([]byte(`
flavors:
  - name: bm.gpu
    resource_class: baremetal
    traits: [CUSTOM_RAID]
    extra_specs:
      trait:CUSTOM_GPU: required
      trait:CUSTOM_SLOW: forbidden
      capabilities:boot_mode: uefi
networks:
  - name: prov
    cidr: 10.0.0.0/24
    mtu: 9000
    dns_nameservers: [10.0.0.2, 192.0.2.53]
    routes: [{destination: 192.168.0.0/16, gateway: 10.0.0.254}]
    physical_network: physnet1
  - {name: dhcp, cidr: 10.1.0.0/24, dhcp: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := c.Catalog().Flavor("bm.gpu")
	if strings.Join(f.Traits, ",") != "CUSTOM_GPU,CUSTOM_RAID" || strings.Join(f.ForbiddenTraits, ",") != "CUSTOM_SLOW" ||
		len(f.Capabilities) != 1 || f.Capabilities["boot_mode"] != "uefi" {
		t.Errorf("flavor = %+v", f)
	}
	nets := c.NetworkList()
	n := nets[0]
	if n.MTU != 9000 || len(n.DNS) != 2 || n.DNS[1].String() != "192.0.2.53" || len(n.Routes) != 1 ||
		n.Routes[0].Destination.String() != "192.168.0.0/16" || n.Routes[0].Gateway.String() != "10.0.0.254" ||
		n.PhysicalNetwork != "physnet1" || n.DHCP {
		t.Errorf("network = %+v", n)
	}
	if !nets[1].DHCP {
		t.Errorf("dhcp network = %+v", nets[1])
	}
}

func TestParseEmptyIsDefaults(t *testing.T) {
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8774" || c.MaxAttempts != 3 {
		t.Fatalf("got %+v", c)
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	tests := []struct{ yaml, key string }{
		{"listen: nope", "listen"},
		{"ironic: {url: ftp://x}", "ironic.url"},
		{"poll_interval: -1s", "poll_interval"},
		{"max_attempts: 0", "max_attempts"},
		{"flavors: [{name: a}]", "flavors[0].resource_class"},
		{"images: [{name: a, url: x}]", "images[0].url"},
		{"images: [{name: a, id: nope, url: http://x/y}]", "images[0].id"},
		{"networks: [{name: a, cidr: 10.0.0.0/33}]", "networks[0].cidr"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, gateway: 10.0.1.1}]", "networks[0].gateway"},
		{"networks: [{name: a, cidr: 10.0.0.0/24}, {name: a, cidr: 10.0.1.0/24}]", "networks[1]"},
		{"pol_interval: 2s", "pol_interval"},
		{"build_timeout: soon", "build_timeout"},
		{"database: postgres://u@h", "database"},
		{"database: 'postgres://u:p@h:port/db'", "database"},
		{"database: mysql://u@h/db", "database"},
		{"database: postgres://u@h/db\nironic: {url: sim}", "ironic.sim.state"},
		{"database_max_conns: 0", "database_max_conns"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, mtu: 20}]", "networks[0].mtu"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, dns_nameservers: [10.0.0.1, nope]}]", "networks[0].dns_nameservers[1]"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, dns_nameservers: [10.0.0.1, 10.0.0.1]}]", "networks[0].dns_nameservers[1]"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, routes: [{destination: 192.168.0.0/33, gateway: 10.0.0.9}]}]", "networks[0].routes[0].destination"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, routes: [{destination: 192.168.1.0/16, gateway: 10.0.0.9}]}]", "networks[0].routes[0].destination"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, routes: [{destination: 0.0.0.0/0, gateway: 10.0.0.9}]}]", "networks[0].routes[0].destination"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, routes: [{destination: 192.168.0.0/16, gateway: 10.9.0.9}]}]", "networks[0].routes[0].gateway"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, routes: [{destination: 192.168.0.0/16, gateway: 10.0.0.9}, {destination: 192.168.0.0/16, gateway: 10.0.0.8}]}]", "networks[0].routes[1].destination"},
		{"networks: [{name: a, cidr: 10.0.0.0/24, physical_network: 'has space'}]", "networks[0].physical_network"},
		{"networks:\n  - name: a\n    cidr: 10.0.0.0/24\n    dhcp: maybe\n", "networks[0].dhcp"},
		{"flavors: [{name: a, resource_class: rc, traits: [gpu]}]", "flavors[0].traits[0]"},
		{"flavors: [{name: a, resource_class: rc, extra_specs: {'trait:CUSTOM_GPU': yes}}]", "flavors[0].extra_specs.trait:CUSTOM_GPU"},
		{"flavors: [{name: a, resource_class: rc, extra_specs: {'trait:gpu': required}}]", "flavors[0].extra_specs.trait:gpu"},
		{"flavors: [{name: a, resource_class: rc, traits: [CUSTOM_A], extra_specs: {'trait:CUSTOM_A': forbidden}}]", "flavors[0].extra_specs.trait:CUSTOM_A"},
		{"flavors: [{name: a, resource_class: rc, extra_specs: {'capabilities:boot_mode': '<in> uefi'}}]", "flavors[0].extra_specs.capabilities:boot_mode"},
		{"flavors: [{name: a, resource_class: rc, extra_specs: {'capabilities:boot_mode': 'a,b'}}]", "flavors[0].extra_specs.capabilities:boot_mode"},
		{"flavors: [{name: a, resource_class: rc, extra_specs: {'resources:VCPU': '1'}}]", "flavors[0].extra_specs.resources:VCPU"},
		{"flavors: [{name: a, resource_class: rc, extra_specs: {'hw:cpu_policy': dedicated}}]", "flavors[0].extra_specs.hw:cpu_policy"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%q: error %v does not name %s", tt.yaml, err, tt.key)
		}
	}
}

func TestDevIsValid(t *testing.T) {
	c := Dev(t.TempDir())
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
	if c.Ironic.URL != "sim" || len(c.Flavors) == 0 || len(c.Images) == 0 || len(c.Networks) == 0 {
		t.Fatalf("dev config incomplete: %+v", c)
	}
}

// TestSimDefaults: `ironic.url: sim` alone starts the simulator README
// describes (8 nodes of class baremetal, 3 s deploys, 1 s undeploys), and
// any sim key given overrides only itself.
func TestSimDefaults(t *testing.T) {
	c, err := Parse([]byte("ironic: {url: sim}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Sim{Nodes: 8, ResourceClass: "baremetal", DeployTime: 3 * time.Second, UndeployTime: time.Second}
	if c.Ironic.Sim != want {
		t.Errorf("url: sim alone: sim = %+v, want %+v", c.Ironic.Sim, want)
	}
	c, err = Parse([]byte("ironic: {url: sim, sim: {nodes: 2, deploy_time: 10s}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want.Nodes, want.DeployTime = 2, 10*time.Second
	if c.Ironic.Sim != want {
		t.Errorf("sim: {nodes: 2, deploy_time: 10s}: sim = %+v, want %+v", c.Ironic.Sim, want)
	}
	if d := Dev("/data"); d.Ironic.Sim.Nodes != 8 {
		t.Errorf("dev: %d nodes, want 8", d.Ironic.Sim.Nodes)
	}
}

// TestLoadOverDev: `serve --dev --config x.yaml` reads the file over the
// development defaults; keys it leaves out keep Dev's values.
func TestLoadOverDev(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.yaml")
	if err := os.WriteFile(path, []byte("drift_interval: 500ms\nironic: {sim: {nodes: 3}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dev := Dev("/data")
	c, err := LoadOver(dev, path)
	if err != nil {
		t.Fatal(err)
	}
	if c.DriftInterval != 500*time.Millisecond || c.Ironic.Sim.Nodes != 3 {
		t.Errorf("file keys not applied: drift %s, nodes %d", c.DriftInterval, c.Ironic.Sim.Nodes)
	}
	if c.Ironic.URL != "sim" || c.Database != dev.Database || len(c.Flavors) != 1 || c.Ironic.Sim.DeployTime != 3*time.Second {
		t.Errorf("dev defaults lost: %+v", c)
	}
}

// TestPostgresDatabase: a postgres:// or postgresql:// URL is accepted (the
// PostgreSQL store); its password never shows in an error or a log line.
func TestPostgresDatabase(t *testing.T) {
	for _, dsn := range []string{"postgres://ingot@db.example:5432/ingot?sslmode=require", "postgresql://ingot:secret@db/ingot"} {
		c, err := Parse([]byte("database: " + dsn + "\ndatabase_max_conns: 4\n"))
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if !IsPostgres(c.Database) || c.DatabaseMaxConns != 4 {
			t.Errorf("%s: IsPostgres %v, max conns %d", dsn, IsPostgres(c.Database), c.DatabaseMaxConns)
		}
	}
	if IsPostgres("/var/lib/ingot/ingot.db") {
		t.Error("a path is not PostgreSQL")
	}
	if got := RedactDSN("postgres://ingot:secret@db/ingot"); strings.Contains(got, "secret") {
		t.Errorf("RedactDSN kept the password: %s", got)
	}
	_, err := Parse([]byte("database: 'postgres://ingot:secret@db:port/ingot'\n"))
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad URL: error %v (want one, without the password)", err)
	}
}

func TestSimStatePath(t *testing.T) {
	c, err := Parse([]byte("database: /var/lib/ingot/ingot.db\nironic: {url: sim}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SimStatePath(); got != "/var/lib/ingot/ingot.db.ironicsim.json" {
		t.Errorf("default state path %q", got)
	}
	c.Ironic.Sim.State = "/tmp/sim.json"
	if got := c.SimStatePath(); got != "/tmp/sim.json" {
		t.Errorf("ironic.sim.state: path %q", got)
	}
}
