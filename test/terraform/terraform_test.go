package terraform

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
)

// EnvVar turns the suite on: it takes minutes (the provider's first build,
// Cinder's start), so the ordinary `go test ./...` skips it.
const EnvVar = "INGOT_TERRAFORM"

// gate skips the test unless EnvVar asks for the suite and terraform is on
// PATH.
func gate(t *testing.T) {
	t.Helper()
	if v := os.Getenv(EnvVar); v != "1" && v != "true" && v != "yes" {
		t.Skipf("set %s=1 to run Terraform's OpenStack provider against ingot (minutes)", EnvVar)
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH: install Terraform (1.11 is what this suite was written against)")
	}
}

// TestTerraform applies, re-plans and destroys one configuration on each
// volume backend: an image boot with a data volume, a boot from a volume
// made outside Terraform, and a volume attached to the running server.
func TestTerraform(t *testing.T) {
	gate(t)
	provider := providerDir(t)
	w := startWorld(t)
	t.Logf("Keystone and Cinder up in %s", w.cin.SetupTime.Round(time.Second))
	// The catalog names the ingot on Cinder; the provider is sent to the
	// other with endpoint_overrides (which need a catalog entry to
	// override).
	stacks := map[string]*stack{config.VolumeEmbedded: w.ingot(t, config.VolumeEmbedded), config.VolumeCinder: w.ingot(t, config.VolumeCinder)}
	// The provider makes an image client (and a network one) even for a
	// server named by image and network ids: ingot's Glance- and
	// Neutron-shaped roots, as docs/clients.md registers them.
	root := stacks[config.VolumeCinder].url
	w.ks.RegisterService(t, "compute", "nova", root+"/v2.1")
	w.ks.RegisterService(t, "image", "glance", root+"/image")
	w.ks.RegisterService(t, "network", "neutron", root+"/network")
	for _, backend := range []string{config.VolumeEmbedded, config.VolumeCinder} {
		t.Run(backend, func(t *testing.T) { lifecycle(t, w, stacks[backend], provider) })
	}
}

// lifecycle is apply, a second plan that must be empty, and a destroy
// that must return only after the teardown.
func lifecycle(t *testing.T, w *world, s *stack, provider string) {
	backend := s.backend
	boot := s.volume(t, "tf-boot", true)
	f := newTF(t, provider, workDir(t, backend), w.cloudsYAML())
	f.write(s.hcl(boot))

	f.must("apply", "-auto-approve", "-input=false")
	if n := s.inUse(t); n != 2 {
		t.Errorf("after apply: %d instances on the nodes, want 2", n)
	}
	if a, tg := s.attachments(t), s.targets(t); tg != 3 || (backend == config.VolumeCinder && a != 3) {
		t.Errorf("after apply: %d Cinder attachments, %d Ironic volume targets; want 3 targets (and 3 attachments on Cinder)", a, tg)
	}
	if st := s.volumeStatus(t, boot); st != "in-use" {
		t.Errorf("boot volume after apply: %s, want in-use", st)
	}
	f.noChanges()

	f.must("destroy", "-auto-approve", "-input=false")
	// Right after destroy returned: nothing may be left to tear down.
	for _, n := range s.nodes(t) {
		if n.ProvisionState != "available" || n.InstanceUUID != "" {
			t.Errorf("node %s after destroy: %s, instance %q; want available with none", n.UUID, n.ProvisionState, n.InstanceUUID)
		}
	}
	if a, tg := s.attachments(t), s.targets(t); a != 0 || tg != 0 {
		t.Errorf("after destroy: %d Cinder attachments, %d Ironic volume targets; want 0 and 0", a, tg)
	}
	if st := s.volumeStatus(t, boot); st != "available" {
		t.Errorf("boot volume (not Terraform's) after destroy: %s, want available", st)
	}
}

// inUse counts the nodes holding an instance.
func (s *stack) inUse(t *testing.T) int {
	t.Helper()
	n := 0
	for _, nd := range s.nodes(t) {
		if nd.InstanceUUID != "" {
			n++
		}
	}
	return n
}

// hcl is the configuration: two volumes of Terraform's, a server booted
// from the image (block_device image→local) with one of them as a data
// volume and the other attached once it runs, and a server booted from
// the volume boot (made outside Terraform, so destroy must leave it
// available).
func (s *stack) hcl(boot string) string {
	image, network := s.app.Config.Images[0].ID, s.app.Config.Networks[0].ID
	return fmt.Sprintf(`terraform {
  required_providers {
    openstack = { source = %[1]q }
  }
}

provider "openstack" {
  endpoint_overrides = {
%[2]s  }
}

resource "openstack_blockstorage_volume_v3" "data" {
  name = "tf-data"
  size = 1
}

resource "openstack_blockstorage_volume_v3" "late" {
  name = "tf-late"
  size = 1
}

resource "openstack_compute_instance_v2" "image" {
  name        = "tf-image"
  flavor_name = "bm.small"
  image_id    = %[3]q
  network {
    uuid = %[4]q
  }
  block_device {
    uuid                  = %[3]q
    source_type           = "image"
    destination_type      = "local"
    boot_index            = 0
    delete_on_termination = true
  }
  block_device {
    uuid             = openstack_blockstorage_volume_v3.data.id
    source_type      = "volume"
    destination_type = "volume"
    boot_index       = 1
  }
}

resource "openstack_compute_instance_v2" "volume" {
  name        = "tf-volume"
  flavor_name = "bm.small"
  network {
    uuid = %[4]q
  }
  block_device {
    uuid             = %[5]q
    source_type      = "volume"
    destination_type = "volume"
    boot_index       = 0
  }
}

resource "openstack_compute_volume_attach_v2" "late" {
  instance_id = openstack_compute_instance_v2.image.id
  volume_id   = openstack_blockstorage_volume_v3.late.id
}
`, providerSource, s.endpoints(), image, network, boot)
}

// workDir is where one backend's configuration, state and logs live: under
// INGOT_TERRAFORM_DIR when set (kept), else the test's temporary directory.
func workDir(t *testing.T, name string) string {
	t.Helper()
	root := os.Getenv("INGOT_TERRAFORM_DIR")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
