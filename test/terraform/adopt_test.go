package terraform

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestTerraformAdopt: a Terraform state made against a real Nova (two
// servers on the real Ironic, one with a key pair Terraform made, metadata
// and tags) plans no changes against ingot once ingot has adopted the
// servers (`ingot adopt --from-nova`, nova-compute disabled and stopped)
// and the catalog's compute endpoints name ingot; `terraform destroy`
// through ingot then leaves the nodes available and no port on the
// servers.
func TestTerraformAdopt(t *testing.T) {
	if v := os.Getenv(EnvVar); v != "1" && v != "true" && v != "yes" {
		t.Skipf("set %s=1 to run Terraform's OpenStack provider against ingot (minutes)", EnvVar)
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH: install Terraform (1.11 is what this suite was written against)")
	}
	begin := time.Now()
	provider := providerDir(t)
	w := startNova(t, 3)
	t.Logf("stack up in %s (Nova %s of it)", time.Since(begin).Round(time.Second), w.nv.SetupTime.Round(time.Second))
	bin := ingottest.Binary(t)

	f := newTF(t, provider, workDir(t, "adopt"), w.cloudsYAML())
	f.write(adoptHCL(w))
	// One build at a time: concurrent builds made Nova's Ironic client fail
	// a node validate on this Nova.
	f.must("apply", "-auto-approve", "-input=false", "-parallelism=1")
	ids := f.serverIDs()
	w.runInNova(t, ids)
	// The control: Nova itself must plan no changes, or a diff after the
	// switch would say nothing about ingot.
	if code, out, _ := f.run("plan", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Fatalf("plan against Nova: exit %d, want 0\n%s", code, out)
	}

	w.nv.RetireCompute(t, 2*time.Minute)
	config := w.ingotConfig(t)
	start := time.Now()
	out, err := exec.Command(bin, "adopt", "--from-nova", "--config", config).CombinedOutput()
	if err != nil || !regexp.MustCompile(`\b2 adopted, 0 already ingot's, 0 refused`).Match(out) {
		t.Fatalf("ingot adopt --from-nova: %v\n%s", err, out)
	}
	t.Logf("ingot adopt --from-nova: %s", time.Since(start).Round(10*time.Millisecond))
	p := ingottest.Serve(t, bin, config, ingottest.Options{})
	w.moveCompute(t, p.API+"/v2.1")

	f.noChanges()

	f.must("destroy", "-auto-approve", "-input=false")
	// Right after destroy returned: nothing may be left to tear down.
	for _, n := range w.nodes {
		got := w.ir.GetNode(t, n)
		if got["provision_state"] != "available" || got["instance_uuid"] != nil {
			t.Errorf("node %s after destroy: %v, instance %v; want available with none", n, got["provision_state"], got["instance_uuid"])
		}
	}
	for _, id := range ids {
		if n := w.nt.PortCount(t, "device_id="+id); n != 0 {
			t.Errorf("server %s after destroy: %d Neutron ports still name it", id, n)
		}
	}
	t.Logf("TestTerraformAdopt took %s", time.Since(begin).Round(time.Second))
}

// adoptHCL: a key pair, a server with it, metadata and tags by flavor id,
// and a plain one by flavor name, both on the tenant network.
func adoptHCL(w *novaWorld) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    openstack = { source = %[1]q }
  }
}

provider "openstack" {}

resource "openstack_compute_keypair_v2" "k1" {
  name       = "tf-k1"
  public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHbSBvCj0wK3pVz6r1B9v7m0oV5kWQ4c2w1lJmQpYb1E tf@test"
}

resource "openstack_compute_instance_v2" "web" {
  name      = "tf-web"
  flavor_id = %[2]q
  image_id  = %[3]q
  key_pair  = openstack_compute_keypair_v2.k1.name
  metadata  = { role = "web" }
  tags      = ["prod", "blue"]
  network {
    uuid = %[4]q
  }
}

resource "openstack_compute_instance_v2" "plain" {
  name        = "tf-plain"
  flavor_name = "bm.nova"
  image_id    = %[3]q
  network {
    uuid = %[4]q
  }
}

output "ids" {
  value = [openstack_compute_instance_v2.web.id, openstack_compute_instance_v2.plain.id]
}
`, providerSource, w.flavor, w.image, w.net)
}

// serverIDs are the servers' ids, from the state's output "ids".
func (f *tf) serverIDs() []string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "terraform.tfstate"))
	if err != nil {
		f.t.Fatal(err)
	}
	var st struct {
		Outputs struct {
			IDs struct {
				Value []string `json:"value"`
			} `json:"ids"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.Outputs.IDs.Value) != 2 {
		f.t.Fatalf("the state's output ids: %v %+v", err, st.Outputs)
	}
	return st.Outputs.IDs.Value
}

// runInNova brings the servers to running as Nova shows them: fake
// hardware stays off after a deploy, so Nova's power sync stops each
// (SHUTOFF); Nova's own start then powers the node on, as a machine that
// boots, and its power sync shows it running.
func (w *novaWorld) runInNova(t *testing.T, ids []string) {
	t.Helper()
	token := w.ks.Token(t, member)
	for _, id := range ids {
		w.nv.WaitStatus(t, token, id, "SHUTOFF", 3*time.Minute)
		w.nv.Do(t, token, "POST", "/servers/"+id+"/action", map[string]any{"os-start": nil}, nil)
	}
	for _, id := range ids {
		w.nv.WaitStatus(t, token, id, "ACTIVE", 3*time.Minute)
		poll.Until(t, time.Minute, id+" running in Nova", func() (bool, string) {
			var got struct {
				Server map[string]any `json:"server"`
			}
			w.nv.Do(t, token, "GET", "/servers/"+id, nil, &got)
			st := got.Server["OS-EXT-STS:power_state"]
			return st == float64(1) && got.Server["OS-EXT-STS:task_state"] == nil, fmt.Sprint(st)
		})
	}
}
