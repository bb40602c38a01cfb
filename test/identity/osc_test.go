package identity

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

const osc = "/usr/bin/openstack"

// registerIngot puts ingot in Keystone's catalog as docs/clients.md says.
func registerIngot(t *testing.T, ks *keystonetest.Env, root string) {
	ks.RegisterService(t, "compute", "nova", root+"/v2.1")
	ks.RegisterService(t, "image", "glance", root+"/image")
	ks.RegisterService(t, "network", "neutron", root+"/network")
	ks.RegisterService(t, "volumev3", "cinderv3", root+"/volume/v3/%(project_id)s")
}

// TestOpenStackCLIWithKeystone: Debian's openstack CLI with password auth
// (OS_AUTH_URL, OS_USERNAME, …) finds ingot in Keystone's catalog and runs
// the tenant's everyday commands; another project's member sees none of it.
func TestOpenStackCLIWithKeystone(t *testing.T) {
	if _, err := os.Stat(osc); err != nil {
		if keystonetest.Wanted() {
			t.Fatalf("%s is missing and %s=1: run .ci/install-osc.sh", osc, keystonetest.EnvVar)
		}
		t.Skipf("%s is missing (.ci/install-osc.sh)", osc)
	}
	ks := keystonetest.Start(t)
	s := startStack(t, ks, nil)
	registerIngot(t, ks, s.url)
	home := t.TempDir()
	pub := filepath.Join(home, "id.pub")
	if err := os.WriteFile(pub, []byte(ed25519Key(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(user, project string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, osc, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1",
			"OS_AUTH_URL=" + ks.URL, "OS_IDENTITY_API_VERSION=3", "OS_USERNAME=" + user, "OS_PASSWORD=" + keystonetest.Password,
			"OS_PROJECT_NAME=" + project, "OS_USER_DOMAIN_NAME=Default", "OS_PROJECT_DOMAIN_NAME=Default",
			"OS_COMPUTE_API_VERSION=2.90"}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("openstack %s as %s: %v\n%s%s", strings.Join(args, " "), user, err, out, stderr.String())
		}
		return string(out)
	}
	asJSON := func(out string, v any) {
		t.Helper()
		if i := strings.IndexAny(out, "{["); i > 0 { // --wait prints "Progress: N" first
			out = out[i:]
		}
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("bad JSON %q: %v", out, err)
		}
	}
	start := time.Now()
	var kp map[string]any
	asJSON(run("member-a", "a", "keypair", "create", "--public-key", pub, "laptop", "-f", "json"), &kp)
	if kp["name"] != "laptop" || kp["fingerprint"] == "" {
		t.Errorf("keypair create: %v", kp)
	}
	var sv map[string]any
	asJSON(run("member-a", "a", "server", "create", "--flavor", "bm.small", "--image", "debian-12", "--network", "provisioning",
		"--key-name", "laptop", "--wait", "web1", "-f", "json"), &sv)
	if sv["status"] != "ACTIVE" || sv["key_name"] != "laptop" || sv["project_id"] != s.project("a") {
		t.Errorf("server create --wait: %v", sv)
	}
	var list []map[string]any
	asJSON(run("member-a", "a", "server", "list", "-f", "json"), &list)
	if len(list) != 1 || list[0]["Name"] != "web1" || list[0]["Status"] != "ACTIVE" {
		t.Errorf("server list: %v", list)
	}
	asJSON(run("member-a", "a", "server", "show", "web1", "-f", "json"), &sv)
	if sv["user_id"] != s.userID("member-a") || sv["addresses"] == nil {
		t.Errorf("server show: %v", sv)
	}
	var events []map[string]any
	asJSON(run("member-a", "a", "server", "event", "list", "web1", "-f", "json"), &events)
	if len(events) != 1 || events[0]["Action"] != "create" {
		t.Errorf("server event list: %v", events)
	}
	var quota map[string]any
	asJSON(run("member-a", "a", "quota", "show", "-f", "json"), &quota)
	if quota["instances"] != -1.0 || quota["key-pairs"] != 100.0 {
		t.Errorf("quota show: %v", quota)
	}
	var limits []map[string]any
	asJSON(run("member-a", "a", "limits", "show", "--absolute", "-f", "json"), &limits)
	used := map[string]any{}
	for _, l := range limits {
		used[l["Name"].(string)] = l["Value"]
	}
	if used["totalInstancesUsed"] != 1.0 || used["totalCoresUsed"] != 4.0 {
		t.Errorf("limits show --absolute: %v", used)
	}
	// Project B sees nothing of A's.
	asJSON(run("member-b", "b", "server", "list", "-f", "json"), &list)
	if len(list) != 0 {
		t.Errorf("project B's server list: %v", list)
	}
	run("member-a", "a", "server", "delete", "--wait", "web1")
	asJSON(run("member-a", "a", "server", "list", "-f", "json"), &list)
	if len(list) != 0 {
		t.Errorf("after delete: %v", list)
	}
	t.Logf("openstack CLI session with password auth through Keystone: %s", time.Since(start).Round(time.Second))
}

// TestGophercloudWithKeystone: gophercloud authenticated by Keystone finds
// the compute endpoint in the catalog and drives ingot.
func TestGophercloudWithKeystone(t *testing.T) {
	ks := keystonetest.Start(t)
	s := startStack(t, ks, nil)
	registerIngot(t, ks, s.url)
	ctx := context.Background()
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: ks.URL, Username: "member-b", Password: keystonetest.Password, DomainName: "Default",
		Scope: &gophercloud.AuthScope{ProjectName: "b", DomainName: "Default"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Endpoint, s.url+"/v2.1") {
		t.Fatalf("compute endpoint from the catalog: %s", c.Endpoint)
	}
	c.Microversion = "2.90"
	if _, err := keypairs.Create(ctx, c, keypairs.CreateOpts{Name: "k", PublicKey: ed25519Key(t)}).Extract(); err != nil {
		t.Fatalf("keypair: %v", err)
	}
	srv, err := servers.Create(ctx, c, keypairs.CreateOptsExt{KeyName: "k", CreateOptsBuilder: servers.CreateOpts{
		Name: "g1", FlavorRef: "1", ImageRef: imageID, Networks: "auto"}}, nil).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := servers.WaitForStatus(ctx, c, srv.ID, "ACTIVE"); err != nil {
		t.Fatal(err)
	}
	got, err := servers.Get(ctx, c, srv.ID).Extract()
	if err != nil || got.TenantID != s.project("b") || got.UserID != s.userID("member-b") || got.KeyName != "k" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if err := servers.Delete(ctx, c, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
}
