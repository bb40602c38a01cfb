package novatest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/servicetest"
)

// Cloud is the whole cloud ingot adopts from: Nova on the real Ironic with
// Neutron and Glance behind one Keystone, a shared tenant network, a
// baremetal flavor, a public image and nodes Nova can schedule to.
type Cloud struct {
	Keystone *keystonetest.Env
	Neutron  *neutrontest.Env
	Ironic   *ironictest.Env
	Nova     *Env
	Network  string   // the shared tenant network (192.0.2.0/24)
	Nodes    []string // Ironic nodes, flat network interface, one port each
	Flavor   string   // "bm.nova", resource class baremetal
	Image    string   // "cirros", public, in Glance
}

// StartCloud starts the cloud with nodes nodes; Nova gets o (its Ironic
// calls always authenticated). Skipped, before anything starts, when
// Ironic or Nova is not installed (a failure with INGOT_TEST_IRONIC=1).
func StartCloud(t testing.TB, nodes int, o Options) *Cloud {
	t.Helper()
	if !ironictest.RealWanted() && !ironictest.RealInstalled() {
		t.Skip("the real Ironic is not installed (.ci/install-ironic.sh)")
	}
	servicetest.Require(t, script, apiBin, computeBin, placementBin)
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
	c := &Cloud{Keystone: ks, Neutron: nt, Ironic: ir, Network: tenant.ID}
	c.Nodes = ir.EnrollNodes(t, nodes, ironictest.NodeSpec{Name: "nova", ResourceClass: "baremetal", Ports: 1,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "flat"})
	o.IronicAuth = true
	c.Nova = StartWith(t, ks, ir.URL, o)
	c.Flavor = c.Nova.CreateFlavor(t, "bm.nova", "baremetal", 1024, 1, 10)
	c.Image = gl.UploadImage(t, "admin", glancetest.ImageOptions{Name: "cirros", Visibility: "public"})
	c.Nova.WaitCapacity(t, "baremetal", len(c.Nodes), 3*time.Minute)
	return c
}

// IngotConfig is the configuration `ingot adopt --from-nova` and `ingot
// serve` read for this cloud (IngotYAML), database db.
func (c *Cloud) IngotConfig(db, host string) string {
	return IngotYAML(db, host, c.Keystone.URL, c.Ironic.URL)
}

// IngotYAML is ingot's configuration beside a test Nova: behind the
// Keystone at keystoneURL as user ingot, its images in Glance, its ports in
// Neutron, the Ironic Nova uses, database db.
func IngotYAML(db, host, keystoneURL, ironicURL string) string {
	return fmt.Sprintf(`database: %s
host: %s
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
`, db, host, keystoneURL, keystonetest.Password, ironicURL)
}
