package identity

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// sdkScript drives ingot with openstacksdk authenticated by Keystone: the
// compute, image and network proxies come from the catalog.
const sdkScript = `
import json, sys, openstack
conn = openstack.connect(auth_url=sys.argv[1], username="member-a", password=sys.argv[2],
    project_name="a", user_domain_name="Default", project_domain_name="Default", identity_api_version="3")
img = conn.image.find_image("debian-12")
net = conn.network.find_network("provisioning")
flv = conn.compute.find_flavor("bm.small")
srv = conn.compute.create_server(name="sdk1", image_id=img.id, flavor_id=flv.id, networks=[{"uuid": net.id}])
srv = conn.compute.wait_for_server(srv, status="ACTIVE", interval=1, wait=60)
status, project = srv.status, srv.project_id
names = [s.name for s in conn.compute.servers()]
conn.compute.delete_server(srv)
conn.compute.wait_for_delete(srv, interval=1, wait=60)
print(json.dumps({"status": status, "project": project, "names": names}))
`

// TestOpenStackSDKWithKeystone: openstacksdk (Debian's, the CLI's) with
// password auth finds ingot's services in the catalog, creates a server to
// ACTIVE, lists and deletes it.
func TestOpenStackSDKWithKeystone(t *testing.T) {
	if _, err := os.Stat("/usr/lib/python3/dist-packages/openstack"); err != nil {
		if keystonetest.Wanted() {
			t.Fatalf("openstacksdk is missing and %s=1: run .ci/install-osc.sh", keystonetest.EnvVar)
		}
		t.Skip("openstacksdk is missing (.ci/install-osc.sh)")
	}
	ks := keystonetest.Start(t)
	s := startStack(t, ks, nil)
	registerIngot(t, ks, s.url)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "-c", sdkScript, ks.URL, keystonetest.Password)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("openstacksdk: %v\n%s", err, out)
	}
	var got struct {
		Status, Project string
		Names           []string
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := jsonDecode(strings.NewReader(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Status != "ACTIVE" || got.Project != s.project("a") || len(got.Names) != 1 || got.Names[0] != "sdk1" {
		t.Fatalf("openstacksdk saw %+v", got)
	}
}
