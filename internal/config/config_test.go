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
		{"database: postgres://u@h/db", "database"},
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
