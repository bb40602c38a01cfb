package glance

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// realIronicConfig: ingot in front of a real Ironic found in Keystone's
// catalog, images from Glance.
const realIronicConfig = `
poll_interval: 200ms
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: configured, url: "http://images.example/configured.qcow2"}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
`

// TestGlanceWithRealIronic: a member's private Glance image boots on the
// real Ironic, which is given the Glance id as image_source and reads the
// image from Glance itself (its [glance] section, through the catalog);
// the delete gives the node back.
func TestGlanceWithRealIronic(t *testing.T) {
	if !ironictest.RealWanted() && !ironictest.RealInstalled() {
		t.Skip("the real Ironic is not installed (.ci/install-ironic.sh)")
	}
	ks := keystonetest.Start(t)
	g := glancetest.Start(t, ks) // in the catalog before Ironic first logs in
	ir := ironictest.StartReal(t, ironictest.RealOptions{Glance: true,
		Keystone: &ironictest.Keystone{AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"}})
	ir.AuthToken = ks.Token(t, "ingot")
	ks.RegisterService(t, "baremetal", "ironic", ir.URL)
	nodes := ir.EnrollNodes(t, 1, ironictest.NodeSpec{Name: "glance", ResourceClass: "baremetal"})

	cfg, err := config.Parse([]byte(realIronicConfig))
	if err != nil {
		t.Fatal(err)
	}
	glanceSettings(t, &cfg, ks)
	cfg.Ironic.URL, cfg.Ironic.Auth = "catalog", "keystone"
	_, url := apptest.Serve(t, cfg, app.Options{})
	w := &world{ks: ks, glance: g, url: url, hc: &http.Client{Timeout: 60 * time.Second},
		toks: map[string]string{"member-a": ks.Token(t, "member-a")}}

	image := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "debian-a"})
	gets := func() int {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(g.Proc.Log), "glance-api.log"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(raw), "GET /v2/images/"+image)
	}
	id := w.create(t, "on-real-ironic", image)
	before := gets()
	sv := w.waitStatus(t, id, "ACTIVE")
	if sv.Image.ID != image {
		t.Errorf("the server shows image %q, want %s", sv.Image.ID, image)
	}
	node := ir.GetNode(t, nodes[0])
	info, _ := node["instance_info"].(map[string]any)
	if node["instance_uuid"] != id || info["image_source"] != image {
		t.Errorf("Ironic's node: instance_uuid %v, image_source %v; want %s, %s", node["instance_uuid"], info["image_source"], id, image)
	}
	after := gets()
	if after <= before {
		t.Errorf("Ironic did not read the image from Glance during the deploy (%d GETs of it before, %d after)", before, after)
	}
	t.Logf("Glance GETs of the image: %d by create time, %d once ACTIVE (Ironic's)", before, after)
	w.must(t, "member-a", "2.90", "DELETE", "/v2.1/servers/"+id, nil, nil)
	poll.Until(t, 2*time.Minute, "node "+nodes[0]+" available", func() (bool, string) {
		n := ir.GetNode(t, nodes[0])
		st, _ := n["provision_state"].(string)
		return st == "available" && n["instance_uuid"] == nil, st
	})
}
