package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// TestTerraformAdopt: a Terraform state made against a real Nova (two
// servers on the real Ironic, one with a key pair Terraform made, metadata
// and tags) plans no changes against ingot once ingot has adopted the
// servers (`ingot adopt --from-nova`, nova-compute disabled and stopped)
// and the catalog's compute endpoints name ingot; `terraform destroy`
// through ingot then leaves the nodes available and no port on the
// servers.
func TestTerraformAdopt(t *testing.T) {
	gate(t)
	begin := time.Now()
	provider := providerDir(t)
	w := startNova(t, 3)
	t.Logf("stack up in %s (Nova %s of it)", time.Since(begin).Round(time.Second), w.Nova.SetupTime.Round(time.Second))
	bin := ingottest.Binary(t)

	f := newTF(t, provider, workDir(t, "adopt"), cloudsYAML(w.Keystone))
	f.write(adoptHCL(w))
	stop := w.bootOnDeploy()
	t.Cleanup(stop) // after a failed apply too
	// One build at a time: concurrent builds made Nova's Ironic client fail
	// a node validate on this Nova.
	f.must("apply", "-auto-approve", "-input=false", "-parallelism=1")
	ids := f.serverIDs()
	w.waitRunning(t, ids)
	stop()
	// The control: Nova itself must plan no changes, or a diff after the
	// switch would say nothing about ingot.
	if code, out, _ := f.run("plan", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Fatalf("plan against Nova: exit %d, want 0\n%s", code, out)
	}
	// The state as Nova shows it now (a refresh records what the apply
	// left out, e.g. tags [] for none), to compare ingot's with.
	f.must("apply", "-refresh-only", "-auto-approve", "-input=false")
	nova := f.stateAttrs()

	w.Nova.RetireCompute(t, 2*time.Minute)
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
	// The plan read the servers through ingot, not Nova (whose API still
	// answers).
	if b, err := os.ReadFile(f.lastLog); err != nil || !strings.Contains(string(b), p.API+"/v2.1/servers/"+ids[0]) {
		t.Errorf("the plan's debug log %s does not show a GET of %s from ingot (%s): %v", f.lastLog, ids[0], p.API, err)
	}
	// Attributes Terraform only reads (a plan refreshes them silently)
	// must read as from Nova too, but for refreshDiffAllowed.
	f.must("apply", "-refresh-only", "-auto-approve", "-input=false")
	for _, d := range diffStates(nova, f.stateAttrs()) {
		t.Errorf("refreshed from ingot: %s", d)
	}

	f.must("destroy", "-auto-approve", "-input=false")
	// Right after destroy returned: nothing may be left to tear down.
	for _, n := range w.Nodes {
		got := w.Ironic.GetNode(t, n)
		if got["provision_state"] != "available" || got["instance_uuid"] != nil {
			t.Errorf("node %s after destroy: %v, instance %v; want available with none", n, got["provision_state"], got["instance_uuid"])
		}
	}
	for _, id := range ids {
		if n := w.Neutron.PortCount(t, "device_id="+id); n != 0 {
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
`, providerSource, w.Flavor, w.Image, w.Network)
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

// bootOnDeploy powers on each node as soon as Ironic shows it active and
// off, as a machine boots after its deploy (fake hardware stays off), until
// the returned stop is called. Nova's power sync runs every 10 minutes
// here, so Nova never sees the node off and stops the server while
// Terraform waits for ACTIVE.
func (w *novaWorld) bootOnDeploy() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	hdr := map[string]string{"X-OpenStack-Ironic-API-Version": "1.78"}
	go func() {
		defer close(done)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			var nodes struct {
				Nodes []struct {
					UUID        string  `json:"uuid"`
					Provision   string  `json:"provision_state"`
					Power       string  `json:"power_state"`
					Reservation *string `json:"reservation"`
				} `json:"nodes"`
			}
			// Errors (a lock, a slow answer) are tried again at the next tick.
			if testproc.CallWith(w.hc, w.Ironic.AuthToken, http.MethodGet, w.Ironic.URL+"/v1/nodes?fields=uuid,provision_state,power_state,reservation", nil, &nodes, hdr) == nil {
				for _, n := range nodes.Nodes {
					if n.Provision == "active" && n.Power == "power off" && n.Reservation == nil {
						_ = testproc.CallWith(w.hc, w.Ironic.AuthToken, http.MethodPut, w.Ironic.URL+"/v1/nodes/"+n.UUID+"/states/power",
							map[string]any{"target": "power on"}, nil, hdr)
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// waitRunning waits until Nova shows each server ACTIVE and its node is
// powered on.
func (w *novaWorld) waitRunning(t *testing.T, ids []string) {
	t.Helper()
	token := w.Keystone.Token(t, member)
	admin := w.Keystone.Token(t, "admin")
	for _, id := range ids {
		w.Nova.WaitStatus(t, token, id, "ACTIVE", 3*time.Minute)
		node := w.Nova.Show(t, admin, id).Node
		poll.Until(t, time.Minute, id+"'s node "+node+" powered on", func() (bool, string) {
			st := w.Ironic.GetNode(t, node)["power_state"]
			return st == "power on", fmt.Sprint(st)
		})
	}
}

// refreshDiffAllowed are the attributes (of any resource) a refresh from
// ingot may record differently from Nova's, with the reason.
var refreshDiffAllowed = map[string]string{
	"updated": "the adoption writes the record: its time is ingot's",
}

// networkDiffAllowed are the members of an instance's network blocks that
// may differ, with the reason.
var networkDiffAllowed = map[string]string{
	"mac": "Nova shows the MAC its network cache took when it made the port, before Ironic set the port's MAC " +
		"to the node's NIC (a cache heal of nova-compute's would show the new one); ingot shows the port's current MAC",
}

// stateAttrs are the state's resources' attributes by address.
func (f *tf) stateAttrs() map[string]map[string]any {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "terraform.tfstate"))
	if err != nil {
		f.t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []struct {
				Attributes map[string]any `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		f.t.Fatalf("state: %v", err)
	}
	out := map[string]map[string]any{}
	for _, r := range st.Resources {
		if len(r.Instances) == 1 {
			out[r.Type+"."+r.Name] = r.Instances[0].Attributes
		}
	}
	return out
}

// diffStates lists the attributes that differ between two states, outside
// refreshDiffAllowed and networkDiffAllowed.
func diffStates(nova, ingot map[string]map[string]any) []string {
	var out []string
	for _, addr := range slices.Sorted(maps.Keys(nova)) {
		n, i := nova[addr], ingot[addr]
		if i == nil {
			out = append(out, addr+": not in the state any more")
			continue
		}
		keys := maps.Keys(n)
		for _, k := range slices.Sorted(keys) {
			if _, ok := refreshDiffAllowed[k]; ok {
				continue
			}
			nv, iv := n[k], i[k]
			if k == "network" {
				nv, iv = withoutNetworkAllowed(nv), withoutNetworkAllowed(iv)
			}
			if !reflect.DeepEqual(nv, iv) {
				out = append(out, fmt.Sprintf("%s.%s: Nova %v, ingot %v", addr, k, nv, iv))
			}
		}
	}
	return out
}

// withoutNetworkAllowed is a network list without networkDiffAllowed's
// members.
func withoutNetworkAllowed(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for j, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			out[j] = x
			continue
		}
		c := maps.Clone(m)
		for k := range networkDiffAllowed {
			delete(c, k)
		}
		out[j] = c
	}
	return out
}
