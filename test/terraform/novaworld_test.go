package terraform

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/novatest"
	"github.com/ingot-dev/ingot/internal/servicetest"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// novaWorld is a real Nova on the real Ironic with Neutron and Glance
// behind one Keystone: the cloud Terraform's state is made against before
// ingot adopts its servers.
type novaWorld struct {
	ks     *keystonetest.Env
	nt     *neutrontest.Env
	ir     *ironictest.Env
	nv     *novatest.Env
	net    string // the shared tenant network
	nodes  []string
	flavor string
	image  string
	hc     *http.Client
}

func startNova(t *testing.T, nodes int) *novaWorld {
	t.Helper()
	if !ironictest.RealWanted() && !ironictest.RealInstalled() {
		t.Skip("the real Ironic is not installed (.ci/install-ironic.sh)")
	}
	// Skipped before minutes go to Keystone, Neutron, Glance and Ironic.
	servicetest.Require(t, ".ci/install-nova.sh", "/usr/bin/nova-api", "/usr/bin/nova-compute", "/usr/bin/placement-api")
	ks := keystonetest.Start(t)
	nt := neutrontest.Start(t, ks)
	tenant := nt.CreateNetwork(t, neutrontest.NetworkOptions{Name: "tenant", Shared: true})
	nt.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: tenant.ID, CIDR: "192.0.2.0/24", Gateway: "192.0.2.1"})
	gl := glancetest.Start(t, ks)
	ir := ironictest.StartReal(t, ironictest.RealOptions{
		Keystone: &ironictest.Keystone{AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"},
		Neutron:  &ironictest.Neutron{Username: nt.ServiceUser, Password: keystonetest.Password, Network: tenant.ID},
	})
	ir.AuthToken = ks.Token(t, "ingot")
	w := &novaWorld{ks: ks, nt: nt, ir: ir, net: tenant.ID, hc: &http.Client{Timeout: 60 * time.Second}}
	w.nodes = ir.EnrollNodes(t, nodes, ironictest.NodeSpec{Name: "tf", ResourceClass: "baremetal", Ports: 1,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "flat"})
	// Fake hardware stays off after a deploy: Nova's power sync must see
	// it soon (SHUTOFF), and the start through Nova after.
	w.nv = novatest.StartWith(t, ks, ir.URL, novatest.Options{IronicAuth: true, PowerSync: 5})
	w.flavor = w.nv.CreateFlavor(t, "bm.nova", "baremetal", 1024, 1, 10)
	w.image = gl.UploadImage(t, "admin", glancetest.ImageOptions{Name: "cirros", Visibility: "public"})
	w.nv.WaitCapacity(t, "baremetal", len(w.nodes), 3*time.Minute)
	return w
}

// cloudsYAML is member-a's clouds.yaml (cloud "member").
func (w *novaWorld) cloudsYAML() string {
	return fmt.Sprintf(`clouds:
  member:
    auth:
      auth_url: %s
      username: %s
      password: %s
      project_name: %s
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
`, w.ks.URL, member, keystonetest.Password, w.ks.Users[member].ProjectName)
}

// moveCompute points every endpoint of the catalog's compute service at
// url, as an operator does with `openstack endpoint set --url` once ingot
// has adopted Nova's servers.
func (w *novaWorld) moveCompute(t *testing.T, url string) {
	t.Helper()
	admin := w.ks.Token(t, "admin")
	var svcs struct {
		Services []struct{ ID string } `json:"services"`
	}
	if err := testproc.Call(w.hc, admin, http.MethodGet, w.ks.URL+"/services?type=compute", nil, &svcs); err != nil || len(svcs.Services) != 1 {
		t.Fatalf("compute services: %+v %v", svcs, err)
	}
	var eps struct {
		Endpoints []struct{ ID string } `json:"endpoints"`
	}
	if err := testproc.Call(w.hc, admin, http.MethodGet, w.ks.URL+"/endpoints?service_id="+svcs.Services[0].ID, nil, &eps); err != nil || len(eps.Endpoints) == 0 {
		t.Fatalf("compute endpoints: %+v %v", eps, err)
	}
	for _, ep := range eps.Endpoints {
		if err := testproc.Call(w.hc, admin, http.MethodPatch, w.ks.URL+"/endpoints/"+ep.ID,
			map[string]any{"endpoint": map[string]any{"url": url}}, nil); err != nil {
			t.Fatalf("endpoint %s to %s: %v", ep.ID, url, err)
		}
	}
}

// ingotConfig is ingot behind the Keystone, its images in Glance, its
// ports in Neutron, Nova found in the catalog (for the adoption), and the
// Ironic Nova used.
func (w *novaWorld) ingotConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "ingot.yaml")
	cfg := fmt.Sprintf(`database: %s
host: ingot-tf-adopt
auth:
  strategy: keystone
  keystone:
    auth_url: %s
    username: ingot
    password: %s
    project_name: service
ironic:
  url: %s
  auth: keystone
  timeout: 30s
image:
  backend: glance
network:
  backend: neutron
poll_interval: 200ms
build_timeout: 2m
delete_timeout: 3m
`, filepath.Join(dir, "ingot.db"), w.ks.URL, keystonetest.Password, w.ir.URL)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
