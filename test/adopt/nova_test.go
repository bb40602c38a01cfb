package adopt

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/novatest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestAdoptFromNova: servers a real Nova built on the real Ironic become
// ingot's with Nova's record of them — same ids, names, projects, flavor
// (made in ingot with Nova's id and extra specs), key pair, metadata,
// tags and server group — refused while nova-compute still runs, adopted
// once it is disabled and stopped, then deleted by ingot.
func TestAdoptFromNova(t *testing.T) {
	ir := ironictest.StartReal(t, ironictest.RealOptions{})
	ks := keystonetest.Start(t)
	neutrontest.Start(t, ks)
	gl := glancetest.Start(t, ks)
	nodes := ir.EnrollNodes(t, 2, ironictest.NodeSpec{Name: "nova", ResourceClass: "baremetal"})
	nv := novatest.Start(t, ks, ir.URL)
	flavor := nv.CreateFlavor(t, "bm.nova", "baremetal", 1024, 1, 10)
	image := gl.UploadImage(t, "admin", glancetest.ImageOptions{Name: "cirros", Visibility: "public"})
	nv.WaitCapacity(t, "baremetal", len(nodes), 3*time.Minute)

	member := ks.Token(t, "member-a")
	const pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHbSBvCj0wK3pVz6r1B9v7m0oV5kWQ4c2w1lJmQpYb1E nova@test"
	nv.Do(t, member, "POST", "/os-keypairs", map[string]any{"keypair": map[string]any{"name": "k1", "public_key": pub}}, nil)
	var grp struct {
		Group struct{ ID string } `json:"server_group"`
	}
	nv.Do(t, member, "POST", "/os-server-groups", map[string]any{"server_group": map[string]any{"name": "g1", "policy": "anti-affinity"}}, &grp)
	web := nv.Boot(t, member, map[string]any{"name": "web", "flavorRef": flavor, "imageRef": image, "key_name": "k1",
		"metadata": map[string]string{"role": "web"}, "tags": []string{"prod", "blue"}}, 3*time.Minute)
	// The scheduler hint is a sibling of "server" in Nova's body: boot by hand.
	var created struct {
		Server struct{ ID string } `json:"server"`
	}
	nv.Do(t, member, "POST", "/servers", map[string]any{
		"server":             map[string]any{"name": "db", "flavorRef": flavor, "imageRef": image, "networks": "none"},
		"os:scheduler_hints": map[string]any{"group": grp.Group.ID}}, &created)
	db := nv.WaitStatus(t, member, created.Server.ID, "ACTIVE", 3*time.Minute)

	bin := buildBinary(t)
	config := novaConfig(t, ks, ir.URL)

	// Nova's compute service still runs: everything refused, with the way out.
	out, ee := runAdoptFrom(t, "--from-nova", bin, config, nil, "--dry-run")
	if ee != nil {
		t.Fatalf("dry run: %v\n%s", ee, out)
	}
	t.Logf("dry run with nova-compute up:\n%s", out)
	if a, _, r := summary(t, out); a != 0 || r != 2 || !strings.Contains(out, "compute service set --disable "+novatest.Host+" nova-compute") {
		t.Fatalf("with nova-compute up: %d would adopt, %d refused, want 0 and 2 with the command to disable it", a, r)
	}

	nv.RetireCompute(t, 2*time.Minute)
	// Fake hardware stays off after Nova's deploy (Nova still shows it
	// ACTIVE); a real machine boots: web's is powered on, db's left off.
	powerOn(t, ir, nv.Show(t, ks.Token(t, "admin"), web.ID).Node) // the node is shown to admins only
	out, ee = runAdoptFrom(t, "--from-nova", bin, config, nil, "--dry-run")
	if ee != nil {
		t.Fatalf("dry run: %v\n%s", ee, out)
	}
	for _, s := range []novatest.Server{web, db} {
		if !strings.Contains(out, fmt.Sprintf("would adopt %s %q", s.ID, s.Name)) {
			t.Errorf("the dry run does not name %s %s:\n%s", s.ID, s.Name, out)
		}
	}
	begin := time.Now()
	out, ee = runAdoptFrom(t, "--from-nova", bin, config, nil)
	if a, al, r := summary(t, out); ee != nil || a != 2 || al != 0 || r != 0 {
		t.Fatalf("adopt: %v, %d/%d/%d, want 2 adopted\n%s", ee, a, al, r, out)
	}
	t.Logf("adopted 2 of Nova's servers in %s:\n%s", time.Since(begin).Round(time.Millisecond), out)
	if out, _ = runAdoptFrom(t, "--from-nova", bin, config, nil); !strings.Contains(out, "0 adopted, 2 already ingot's") {
		t.Errorf("a second run:\n%s", out)
	}

	p := ingottest.Serve(t, bin, config, ingottest.Options{})
	c := apitest.New(t, p.API)
	c.Token = member
	var body struct {
		Server struct {
			Name     string            `json:"name"`
			Status   string            `json:"status"`
			TenantID string            `json:"tenant_id"`
			KeyName  *string           `json:"key_name"`
			Metadata map[string]string `json:"metadata"`
			Tags     []string          `json:"tags"`
			Flavor   struct {
				Name  string            `json:"original_name"`
				Specs map[string]string `json:"extra_specs"`
			} `json:"flavor"`
			Image map[string]any `json:"image"`
		} `json:"server"`
	}
	if code := c.Call("GET", "/v2.1/servers/"+web.ID, nil, &body); code != http.StatusOK {
		t.Fatalf("GET %s: %d", web.ID, code)
	}
	sv := body.Server
	if sv.Name != "web" || sv.Status != "ACTIVE" || sv.KeyName == nil || *sv.KeyName != "k1" || sv.Metadata["role"] != "web" ||
		!slices.Equal(sv.Tags, []string{"blue", "prod"}) || sv.Flavor.Name != "bm.nova" ||
		sv.Flavor.Specs["resources:CUSTOM_BAREMETAL"] != "1" || sv.Image["id"] != image {
		t.Errorf("the adopted server as ingot shows it: %+v", sv)
	}
	// A node that is off is a stopped server, whatever Nova said.
	if code := c.Call("GET", "/v2.1/servers/"+db.ID, nil, &body); code != http.StatusOK || body.Server.Status != "SHUTOFF" {
		t.Errorf("db, whose node is off: %d %s, want SHUTOFF", code, body.Server.Status)
	}
	var kp struct {
		Keypair struct {
			PublicKey string `json:"public_key"`
		} `json:"keypair"`
	}
	if code := c.Call("GET", "/v2.1/os-keypairs/k1", nil, &kp); code != http.StatusOK || kp.Keypair.PublicKey != pub {
		t.Errorf("key pair k1 in ingot: %d %q", code, kp.Keypair.PublicKey)
	}
	var g struct {
		Group struct {
			Policy  string   `json:"policy"`
			Members []string `json:"members"`
		} `json:"server_group"`
	}
	if code := c.Call("GET", "/v2.1/os-server-groups/"+grp.Group.ID, nil, &g); code != http.StatusOK ||
		g.Group.Policy != "anti-affinity" || !slices.Equal(g.Group.Members, []string{db.ID}) {
		t.Errorf("server group in ingot: %d %+v", code, g.Group)
	}

	// Ordinary ingot servers: the delete gives the nodes back.
	for _, s := range []novatest.Server{web, db} {
		if code := c.Call("DELETE", "/v2.1/servers/"+s.ID, nil, nil); code != http.StatusNoContent {
			t.Fatalf("DELETE %s: %d", s.ID, code)
		}
	}
	for _, n := range nodes {
		poll.Until(t, 2*time.Minute, "node "+n+" available", func() (bool, string) {
			got := ir.GetNode(t, n)
			st, _ := got["provision_state"].(string)
			return st == "available" && got["instance_uuid"] == nil, st
		})
	}
}

// powerOn powers node on through Ironic and waits until it shows so.
func powerOn(t *testing.T, ir *ironictest.Env, node string) {
	t.Helper()
	poll.Until(t, time.Minute, "node "+node+" powered on", func() (bool, string) {
		if ir.GetNode(t, node)["power_state"] == "power on" {
			return true, ""
		}
		r := ir.Request(t, "PUT", "/v1/nodes/"+node+"/states/power", map[string]any{"target": "power on"})
		return false, fmt.Sprint(r.Status)
	})
}

// novaConfig is ingot behind the Keystone, its images in Glance, Nova
// found in the catalog, and the Ironic Nova uses (without authentication,
// as Nova is given it).
func novaConfig(t *testing.T, ks *keystonetest.Env, ironicURL string) string {
	dir := t.TempDir()
	path := filepath.Join(dir, "ingot.yaml")
	cfg := fmt.Sprintf(`database: %s
host: ingot-adopt-nova
auth:
  strategy: keystone
  keystone:
    auth_url: %s
    username: ingot
    password: %s
    project_name: service
ironic:
  url: %s
  timeout: 30s
image:
  backend: glance
poll_interval: 200ms
build_timeout: 2m
delete_timeout: 2m
`, database(t, dir), ks.URL, keystonetest.Password, ironicURL)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
