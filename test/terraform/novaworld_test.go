package terraform

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/novatest"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// novaWorld is a real Nova on the real Ironic with Neutron and Glance
// behind one Keystone: the cloud Terraform's state is made against before
// ingot adopts its servers.
type novaWorld struct {
	*novatest.Cloud
	hc *http.Client
}

// startNova starts the cloud with nodes nodes. Nova's power sync keeps its
// default (10 min): Nova never sees a node off after its deploy (see
// bootOnDeploy).
func startNova(t *testing.T, nodes int) *novaWorld {
	t.Helper()
	return &novaWorld{Cloud: novatest.StartCloud(t, nodes, novatest.Options{}), hc: &http.Client{Timeout: 60 * time.Second}}
}

// moveCompute points every endpoint of the catalog's compute service at
// url, as an operator does with `openstack endpoint set --url` once ingot
// has adopted Nova's servers.
func (w *novaWorld) moveCompute(t *testing.T, url string) {
	t.Helper()
	ks := w.Keystone
	admin := ks.Token(t, "admin")
	var svcs struct {
		Services []struct{ ID string } `json:"services"`
	}
	if err := testproc.Call(w.hc, admin, http.MethodGet, ks.URL+"/services?type=compute", nil, &svcs); err != nil || len(svcs.Services) != 1 {
		t.Fatalf("compute services: %+v %v", svcs, err)
	}
	var eps struct {
		Endpoints []struct{ ID string } `json:"endpoints"`
	}
	if err := testproc.Call(w.hc, admin, http.MethodGet, ks.URL+"/endpoints?service_id="+svcs.Services[0].ID, nil, &eps); err != nil || len(eps.Endpoints) == 0 {
		t.Fatalf("compute endpoints: %+v %v", eps, err)
	}
	for _, ep := range eps.Endpoints {
		if err := testproc.Call(w.hc, admin, http.MethodPatch, ks.URL+"/endpoints/"+ep.ID,
			map[string]any{"endpoint": map[string]any{"url": url}}, nil); err != nil {
			t.Fatalf("endpoint %s to %s: %v", ep.ID, url, err)
		}
	}
}

// ingotConfig writes the cloud's ingot configuration (SQLite) and returns
// its path.
func (w *novaWorld) ingotConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "ingot.yaml")
	if err := os.WriteFile(path, []byte(w.IngotConfig(filepath.Join(dir, "ingot.db"), "ingot-tf-adopt")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cloudsYAML is member's clouds.yaml (cloud "member") on ks.
func cloudsYAML(ks *keystonetest.Env) string {
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
`, ks.URL, member, keystonetest.Password, ks.Users[member].ProjectName)
}
