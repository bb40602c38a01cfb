package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// member is the user Terraform runs as (the template's member of project a).
const member = "member-a"

// ingotConfig: the simulated Ironic with quick deploys, one flavor, one
// image, one network, Keystone auth.
const ingotConfig = `
poll_interval: 100ms
ironic:
  url: sim
  sim: {nodes: 4, resource_class: baremetal, deploy_time: 500ms, undeploy_time: 300ms}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2", os_distro: debian}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
`

// world is Keystone and Cinder, shared by the subtests.
type world struct {
	cin     *cindertest.Env
	ks      *keystonetest.Env
	project string // member's project id
	hc      *http.Client
}

func startWorld(t *testing.T) *world {
	t.Helper()
	cin := cindertest.Start(t)
	w := &world{cin: cin, ks: cin.Keystone, project: cin.Keystone.Users[member].ProjectID,
		hc: &http.Client{Timeout: 30 * time.Second}}
	return w
}

// stack is one ingot on the world's Keystone, volume backend embedded or
// cinder.
type stack struct {
	w       *world
	app     *app.App
	url     string
	backend string
	token   string // member's
}

func (w *world) ingot(t *testing.T, backend string) *stack {
	t.Helper()
	cfg, err := config.Parse([]byte(ingotConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	cfg.Auth.Strategy = "keystone"
	cfg.Auth.Keystone.AuthURL = w.ks.URL
	cfg.Auth.Keystone.Username = "ingot"
	cfg.Auth.Keystone.Password = keystonetest.Password
	cfg.Auth.Keystone.ProjectName = "service"
	cfg.Volume.Backend = backend
	if backend == config.VolumeCinder {
		cfg.Volume.Cinder.URL = w.cin.URL
	}
	a, url := apptest.Serve(t, cfg, app.Options{})
	return &stack{w: w, app: a, url: url, backend: backend, token: w.ks.Token(t, member)}
}

// cloudsYAML is the member's clouds.yaml (cloud "member").
func (w *world) cloudsYAML() string { return cloudsYAML(w.ks) }

// endpoints are the provider's endpoint_overrides: none on Cinder (the
// catalog names that ingot and Cinder); on the embedded backend this
// ingot's compute API and its volume registry. An override is used as the
// client's whole base: the image and network ones carry the version path
// (v2/, v2.0/) that the provider adds only to a catalog URL.
func (s *stack) endpoints() string {
	if s.backend == config.VolumeCinder {
		return ""
	}
	return fmt.Sprintf("    compute = %q\n    image = %q\n    network = %q\n    volumev3 = %q\n",
		s.url+"/v2.1/", s.url+"/image/v2/", s.url+"/network/v2.0/", s.url+"/volume/v3/"+s.w.project+"/")
}

// getJSON GETs url with the token (if any) into out and returns the status.
func (w *world) getJSON(t *testing.T, url, token string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	resp, err := w.hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

// node is a simulated Ironic node as the teardown check reads it.
type node struct {
	UUID           string `json:"uuid"`
	ProvisionState string `json:"provision_state"`
	InstanceUUID   string `json:"instance_uuid"`
}

func (s *stack) nodes(t *testing.T) []node {
	t.Helper()
	var out struct {
		Nodes []node `json:"nodes"`
	}
	if st := s.w.getJSON(t, s.app.IronicURL+"/v1/nodes?fields=uuid,provision_state,instance_uuid", "", &out); st != http.StatusOK {
		t.Fatalf("nodes: %d", st)
	}
	return out.Nodes
}

func (s *stack) targets(t *testing.T) int {
	t.Helper()
	var out struct {
		Targets []any `json:"targets"`
	}
	if st := s.w.getJSON(t, s.app.IronicURL+"/v1/volume/targets", "", &out); st != http.StatusOK {
		t.Fatalf("volume targets: %d", st)
	}
	return len(out.Targets)
}

// attachments are Cinder's (every project's); 0 on the embedded backend.
func (s *stack) attachments(t *testing.T) int {
	t.Helper()
	if s.backend != config.VolumeCinder {
		return 0
	}
	_, a := s.w.cin.Counts(t)
	return a
}

// volumeStatus is the volume's status in the backend, "gone" once deleted.
func (s *stack) volumeStatus(t *testing.T, id string) string {
	t.Helper()
	var v struct {
		Volume struct{ Status string } `json:"volume"`
	}
	var st int
	if s.backend == config.VolumeCinder {
		st = s.w.cin.Do(t, s.token, http.MethodGet, "/volumes/"+id, nil, &v)
	} else {
		st = s.w.getJSON(t, s.url+"/volume/v3/"+s.w.project+"/volumes/"+id, s.token, &v)
	}
	if st == http.StatusNotFound {
		return "gone"
	}
	return v.Volume.Status
}

// volume creates a volume outside Terraform (one a configuration names by
// id and must leave available) and waits until it is available.
func (s *stack) volume(t *testing.T, name string, bootable bool) string {
	t.Helper()
	var v struct {
		Volume struct{ ID string } `json:"volume"`
	}
	body := map[string]any{"volume": map[string]any{"size": 1, "name": name}}
	if s.backend != config.VolumeCinder {
		if st := s.post(t, "/volume/v3/"+s.w.project+"/volumes", body, &v); st != http.StatusAccepted {
			t.Fatalf("create volume: %d", st)
		}
		return v.Volume.ID
	}
	if st := s.w.cin.Do(t, s.token, http.MethodPost, "/volumes", body, &v); st != http.StatusAccepted {
		t.Fatalf("create volume: %d", st)
	}
	id := v.Volume.ID
	s.waitVolume(t, id, "available")
	if bootable {
		act := map[string]any{"os-set_bootable": map[string]any{"bootable": true}}
		if st := s.w.cin.Do(t, s.token, http.MethodPost, "/volumes/"+id+"/action", act, nil); st != http.StatusOK {
			t.Fatalf("set bootable: %d", st)
		}
	}
	return id
}

func (s *stack) waitVolume(t *testing.T, id, want string) {
	t.Helper()
	poll.Until(t, time.Minute, "volume "+id+" "+want, func() (bool, string) {
		st := s.volumeStatus(t, id)
		if st == "error" {
			t.Fatalf("volume %s went to error", id)
		}
		return st == want, st
	})
}

// post POSTs body as JSON to ingot with the member's token.
func (s *stack) post(t *testing.T, path string, body, out any) int {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.w.hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
	return resp.StatusCode
}
