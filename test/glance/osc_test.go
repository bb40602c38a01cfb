package glance

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
)

const osc = "/usr/bin/openstack"

// TestOpenStackCLIWithGlance: Debian's openstack CLI with password auth
// finds ingot as the catalog's compute service and the real Glance as its
// image service; it resolves --image NAME at Glance, and ingot boots and
// rebuilds the project's Glance images as Nova would — nothing changes for
// the user.
func TestOpenStackCLIWithGlance(t *testing.T) {
	if _, err := os.Stat(osc); err != nil {
		if keystonetest.Wanted() {
			t.Fatalf("%s is missing and %s=1: run .ci/install-osc.sh", osc, keystonetest.EnvVar)
		}
		t.Skipf("%s is missing (.ci/install-osc.sh)", osc)
	}
	w := startWorld(t)
	w.ks.RegisterService(t, "compute", "nova", w.url+"/v2.1")
	debian := w.glance.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "debian-a"})
	ubuntu := w.glance.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "ubuntu-a"})
	home := t.TempDir()
	run := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, osc, append(args, "-f", "json")...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1",
			"OS_AUTH_URL=" + w.ks.URL, "OS_IDENTITY_API_VERSION=3", "OS_USERNAME=member-a", "OS_PASSWORD=" + keystonetest.Password,
			"OS_PROJECT_NAME=" + w.ks.Users["member-a"].ProjectName, "OS_USER_DOMAIN_NAME=Default",
			"OS_PROJECT_DOMAIN_NAME=Default", "OS_COMPUTE_API_VERSION=2.90"}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("openstack %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		s := string(out)
		if i := strings.Index(s, "{"); i > 0 { // --wait prints "Progress: N" first
			s = s[i:]
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("bad JSON %q: %v", s, err)
		}
		return v
	}
	start := time.Now()
	srv := run("server", "create", "--flavor", "bm.small", "--image", "debian-a", "--nic", "none", "--wait", "web1")
	id, _ := srv["id"].(string)
	if srv["status"] != "ACTIVE" {
		t.Fatalf("server create: %v", srv)
	}
	if src := w.node(t, id).InstanceInfo["image_source"]; src != debian {
		t.Errorf("image_source %v, want debian-a's Glance id %s", src, debian)
	}
	run("server", "rebuild", "--image", "ubuntu-a", "--wait", id)
	if src := w.node(t, id).InstanceInfo["image_source"]; src != ubuntu {
		t.Errorf("image_source after the rebuild %v, want ubuntu-a's Glance id %s", src, ubuntu)
	}
	show := run("server", "show", id)
	if img, _ := show["image"].(string); !strings.Contains(img, ubuntu) {
		t.Errorf("server show's image %q, want ubuntu-a (%s)", img, ubuntu)
	}
	t.Logf("openstack CLI: create --wait, rebuild --wait, show in %s (load-dependent)", time.Since(start).Round(time.Second))
}
