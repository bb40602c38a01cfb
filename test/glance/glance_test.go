// Package glance builds servers from a real Glance: ingot (internal/app,
// image.backend: glance) behind the real Keystone, with a real glance-api
// (file store) found in Keystone's catalog, and the built-in simulated
// Ironic, driven over HTTP as project A's and project B's members.
package glance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// ingotConfig is the service under test; world puts its images in Glance
// (config.Parse validates, and Glance needs Keystone). The images list is
// there to show it is not used.
const ingotConfig = `
poll_interval: 100ms
max_attempts: 2
ironic:
  url: sim
  sim: {nodes: 2, resource_class: baremetal, deploy_time: 200ms, undeploy_time: 100ms}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: configured, url: "http://images.example/configured.qcow2"}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
`

type world struct {
	ks     *keystonetest.Env
	glance *glancetest.Env
	app    *app.App
	url    string
	hc     *http.Client
	toks   map[string]string
}

func startWorld(t *testing.T) *world {
	t.Helper()
	ks := keystonetest.Start(t)
	g := glancetest.Start(t, ks) // registers the "image" endpoint before ingot logs in
	cfg, err := config.Parse([]byte(ingotConfig))
	if err != nil {
		t.Fatal(err)
	}
	glanceSettings(t, &cfg, ks)
	a, url := apptest.Serve(t, cfg, app.Options{})
	return &world{ks: ks, glance: g, app: a, url: url,
		hc:   &http.Client{Timeout: 60 * time.Second},
		toks: map[string]string{"member-a": ks.Token(t, "member-a"), "member-b": ks.Token(t, "member-b")}}
}

// glanceSettings points cfg at ks and Glance (image.backend glance), with a
// database of the test's own.
func glanceSettings(t *testing.T, cfg *config.Config, ks *keystonetest.Env) {
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	cfg.Host = "ingot-glance"
	cfg.Auth.Strategy = "keystone"
	cfg.Auth.Keystone.AuthURL = ks.URL
	cfg.Auth.Keystone.Username = "ingot"
	cfg.Auth.Keystone.Password = keystonetest.Password
	cfg.Auth.Keystone.ProjectName = "service"
	cfg.Image.Backend = config.ImageGlance
}

// call is one API call as user at microversion mv ("" names none, as the
// OpenStack CLI's image look-ups do).
func (w *world) call(user, mv, method, path string, body, out any) error {
	h := map[string]string{}
	if mv != "" {
		h["X-OpenStack-Nova-API-Version"] = mv
	}
	return testproc.CallWith(w.hc, w.toks[user], method, w.url+path, body, out, h)
}

func (w *world) must(t *testing.T, user, mv, method, path string, body, out any) {
	t.Helper()
	if err := w.call(user, mv, method, path, body, out); err != nil {
		t.Fatal(err)
	}
}

func serverBody(name, image string) map[string]any {
	return map[string]any{"server": map[string]any{"name": name, "flavorRef": "1", "imageRef": image, "networks": "none"}}
}

// create asks for a server as member-a and returns its id.
func (w *world) create(t *testing.T, name, image string) string {
	t.Helper()
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	w.must(t, "member-a", "2.90", "POST", "/v2.1/servers", serverBody(name, image), &out)
	return out.Server.ID
}

// refused asks for a server with image as user and wants a 400 with msg.
func (w *world) refused(t *testing.T, user, image, msg string) {
	t.Helper()
	err := w.call(user, "2.90", "POST", "/v2.1/servers", serverBody("refused", image), nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), msg) {
		t.Errorf("create with image %s as %s: %v; want 400 %q", image, user, err, msg)
	}
}

type serverView struct {
	Status string         `json:"status"`
	Fault  map[string]any `json:"fault"`
	Image  struct {
		ID string `json:"id"`
	} `json:"image"`
}

func (w *world) waitStatus(t *testing.T, id, status string) serverView {
	t.Helper()
	var got serverView
	poll.Until(t, 30*time.Second, id+" "+status, func() (bool, string) {
		var out struct {
			Server serverView `json:"server"`
		}
		w.must(t, "member-a", "2.90", "GET", "/v2.1/servers/"+id, nil, &out)
		got = out.Server
		if got.Status == "ERROR" && status != "ERROR" {
			t.Fatalf("%s: ERROR %v", id, got.Fault)
		}
		return got.Status == status, got.Status
	})
	return got
}

// node is the simulated node the server is on.
func (w *world) node(t *testing.T, id string) ironicsim.NodeSnapshot {
	t.Helper()
	rec, err := w.app.Store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := w.app.Sim.Node(rec.NodeID)
	if !ok {
		t.Fatalf("server %s: no node %q", id, rec.NodeID)
	}
	return n
}

// glanceIDs are the ids Glance itself lists for user.
func (w *world) glanceIDs(t *testing.T, user string) []string {
	t.Helper()
	var out struct {
		Images []struct{ ID string } `json:"images"`
	}
	if err := testproc.Call(w.hc, w.toks[user], "GET", w.glance.URL+"/v2/images?limit=100", nil, &out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range out.Images {
		ids = append(ids, i.ID)
	}
	slices.Sort(ids)
	return ids
}

// ingotIDs are the ids of an image list answered by ingot.
func ingotIDs(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var out struct {
		Images []struct{ ID string } `json:"images"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range out.Images {
		ids = append(ids, i.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestGlanceImages: images uploaded to Glance boot (image_source is the
// Glance id), what Glance refuses the project or the flavor does not fit
// is refused with Nova's answers, the image lists are what Glance shows
// each project, and an image's trait:*=required steers scheduling. One
// Glance and one ingot for every case (a Glance costs ~8 s to start).
func TestGlanceImages(t *testing.T) {
	w := startWorld(t)
	g := w.glance
	mine := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "debian-a", MinDisk: 5, MinRAM: 1024})
	other := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "ubuntu-a"})
	theirs := g.UploadImage(t, "member-b", glancetest.ImageOptions{Name: "private-b"})
	big := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "needs-20g", MinDisk: 20})
	hungry := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "needs-8g-ram", MinRAM: 8192})
	queued := g.CreateQueued(t, "member-a", "queued-a")
	gone := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "deactivated-a"})
	g.Deactivate(t, gone)
	gold := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "gold-a",
		Properties: map[string]string{"trait:CUSTOM_GOLD": "required"}})
	nowhere := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "nowhere-a",
		Properties: map[string]string{"trait:CUSTOM_NOWHERE": "required"}})

	t.Run("refused-as-nova-refuses", func(t *testing.T) {
		w.refused(t, "member-a", theirs, "Can not find requested image")
		w.refused(t, "member-a", "8d3f7e5c-1b2a-4c9d-8e7f-6a5b4c3d2e1f", "Can not find requested image")
		w.refused(t, "member-a", big, "Flavor's disk is smaller than the minimum size specified in image metadata. "+
			"Flavor disk is 10737418240 bytes, minimum size is 21474836480 bytes.")
		w.refused(t, "member-a", hungry, "Flavor's memory is too small for requested image.")
		w.refused(t, "member-a", queued, "Image "+queued+" is not active.")
		w.refused(t, "member-a", gone, "Image "+gone+" is not active.")
		// The owner's own image is another project's to member-b.
		w.refused(t, "member-b", mine, "Can not find requested image")
	})

	t.Run("lists-are-glances", func(t *testing.T) {
		for _, user := range []string{"member-a", "member-b"} {
			var raw json.RawMessage
			w.must(t, user, "", "GET", "/v2.1/images", nil, &raw) // the CLI's look-up: Glance's shape
			want := w.glanceIDs(t, user)
			if got := ingotIDs(t, raw); !slices.Equal(got, want) {
				t.Errorf("%s: ingot lists %v, Glance %v", user, got, want)
			}
			w.must(t, user, "2.35", "GET", "/v2.1/images/detail", nil, &raw) // Nova's proxy
			if got := ingotIDs(t, raw); !slices.Equal(got, want) {
				t.Errorf("%s: Nova's proxy lists %v, Glance %v", user, got, want)
			}
		}
		if ids := w.glanceIDs(t, "member-a"); !slices.Contains(ids, mine) || slices.Contains(ids, theirs) {
			t.Fatalf("Glance's list for member-a: %v (has %s? lacks %s?)", ids, mine, theirs)
		}
		var show struct {
			Image struct {
				Status  string `json:"status"`
				MinDisk int    `json:"minDisk"`
				MinRAM  int    `json:"minRam"`
			} `json:"image"`
		}
		w.must(t, "member-a", "2.35", "GET", "/v2.1/images/"+mine, nil, &show)
		if show.Image.Status != "ACTIVE" || show.Image.MinDisk != 5 || show.Image.MinRAM != 1024 {
			t.Errorf("Nova's view of %s: %+v", mine, show.Image)
		}
		w.must(t, "member-a", "2.35", "GET", "/v2.1/images/"+queued, nil, &show)
		if show.Image.Status != "SAVING" {
			t.Errorf("Nova's view of the queued image: %s, want SAVING", show.Image.Status)
		}
		var glanceShape map[string]any
		w.must(t, "member-a", "", "GET", "/image/v2/images/"+gold, nil, &glanceShape)
		if glanceShape["trait:CUSTOM_GOLD"] != "required" || glanceShape["visibility"] != "private" || glanceShape["min_disk"] != float64(0) {
			t.Errorf("Glance's shape of %s: %v", gold, glanceShape)
		}
		for _, path := range []string{"/v2.1/images/" + theirs, "/image/v2/images/" + theirs} {
			if err := w.call("member-a", "", "GET", path, nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
				t.Errorf("GET %s as member-a: %v, want 404", path, err)
			}
		}
		if err := w.call("member-a", "2.36", "GET", "/v2.1/images/detail", nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("the image proxy at 2.36: %v, want 404", err)
		}
	})

	t.Run("trait-steers-scheduling", func(t *testing.T) {
		goldNode := w.app.Sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: "baremetal", NamePrefix: "gold",
			Traits: []string{"CUSTOM_GOLD"}, Ports: 1})[0]
		id := w.create(t, "gold", gold)
		w.waitStatus(t, id, "ACTIVE")
		n := w.node(t, id)
		if n.UUID != goldNode {
			t.Errorf("server on %s, want the only node with CUSTOM_GOLD (%s)", n.UUID, goldNode)
		}
		if tr, _ := n.InstanceInfo["traits"].([]any); len(tr) != 1 || tr[0] != "CUSTOM_GOLD" {
			t.Errorf("instance_info.traits = %v, want the image's CUSTOM_GOLD", n.InstanceInfo["traits"])
		}
		id = w.create(t, "nowhere", nowhere)
		got := w.waitStatus(t, id, "ERROR")
		if msg := fmt.Sprint(got.Fault["message"]); !strings.Contains(msg, "CUSTOM_NOWHERE") {
			t.Errorf("fault of a server whose image needs a trait no node has: %q, want no valid host naming CUSTOM_NOWHERE", msg)
		}
	})

	t.Run("uploaded-image-boots-and-rebuilds", func(t *testing.T) {
		id := w.create(t, "from-glance", mine)
		got := w.waitStatus(t, id, "ACTIVE")
		if got.Image.ID != mine {
			t.Errorf("server's image %q, want %s", got.Image.ID, mine)
		}
		info := w.node(t, id).InstanceInfo
		if info["image_source"] != mine {
			t.Errorf("instance_info.image_source = %v, want the Glance id %s", info["image_source"], mine)
		}
		if _, ok := info["image_checksum"]; ok {
			t.Errorf("instance_info.image_checksum = %v: Ironic reads a Glance image's own", info["image_checksum"])
		}
		rebuild := func(image string) error {
			return w.call("member-a", "2.90", "POST", "/v2.1/servers/"+id+"/action",
				map[string]any{"rebuild": map[string]any{"imageRef": image}}, nil)
		}
		for image, msg := range map[string]string{
			theirs: "Cannot find image for rebuild", queued: "is not active.",
			gold: "Image traits cannot be satisfied by the current resource providers", // this node lacks CUSTOM_GOLD
		} {
			if err := rebuild(image); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), msg) {
				t.Errorf("rebuild with %s: %v, want 400 %q", image, err, msg)
			}
		}
		if err := rebuild(other); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 30*time.Second, "rebuilt with "+other, func() (bool, string) {
			v := w.waitStatus(t, id, "ACTIVE")
			src := w.node(t, id).InstanceInfo["image_source"]
			return v.Image.ID == other && src == other, fmt.Sprintf("image %s, image_source %v", v.Image.ID, src)
		})
	})

	// Last: Glance stopped. What needs it is 503 (try again), nothing recorded.
	t.Run("volume-from-image", func(t *testing.T) {
		vols := "/volume/v3/" + w.ks.Users["member-a"].ProjectID + "/volumes"
		var made struct {
			Volume struct {
				ID            string            `json:"id"`
				Bootable      string            `json:"bootable"`
				ImageMetadata map[string]string `json:"volume_image_metadata"`
			} `json:"volume"`
		}
		w.must(t, "member-a", "", "POST", vols, map[string]any{"volume": map[string]any{"size": 5, "imageRef": mine}}, &made)
		if made.Volume.Bootable != "true" || made.Volume.ImageMetadata["image_id"] != mine {
			t.Errorf("volume from Glance's image: %+v", made.Volume)
		}
		for _, c := range []struct {
			user, image string
			size        int
			msg         string
		}{
			{"member-a", theirs, 5, "Invalid image identifier or unable to access requested image."},
			{"member-a", queued, 5, "Invalid input received: Image " + queued + " is not active."},
			{"member-a", mine, 4, "Invalid input received: Volume size 4GB cannot be smaller than the image minDisk size 5GB."},
		} {
			err := w.call(c.user, "", "POST", vols, map[string]any{"volume": map[string]any{"size": c.size, "imageRef": c.image}}, nil)
			if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("volume from %s of %d GB: %v; want 400 %q", c.image, c.size, err, c.msg)
			}
		}
	})

	t.Run("glance-away", func(t *testing.T) {
		count := func() int {
			var out struct {
				Servers []struct{ ID string } `json:"servers"`
			}
			w.must(t, "member-a", "2.90", "GET", "/v2.1/servers", nil, &out)
			return len(out.Servers)
		}
		before := count()
		g.Proc.Stop()
		for _, c := range []struct{ method, path string }{{"POST", "/v2.1/servers"}, {"GET", "/v2.1/images"}, {"GET", "/v2.1/images/" + mine}} {
			var body any
			if c.method == "POST" {
				body = serverBody("while-away", mine)
			}
			err := w.call("member-a", "", c.method, c.path, body, nil)
			if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "The image service is unavailable") {
				t.Errorf("%s %s with Glance stopped: %v, want 503 The image service is unavailable", c.method, c.path, err)
			}
		}
		if after := count(); after != before {
			t.Errorf("servers: %d before, %d after a create refused for want of Glance", before, after)
		}
	})
}
