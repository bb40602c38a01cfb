package cindersim_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/cindersim"
)

// The checks shared with the real Cinder are internal/cinder's adapter
// tests; these cover what only the simulator has.

// TestImageVolume: a volume from an image the Sim was given is bootable
// and names the image; Counts and Calls see it.
func TestImageVolume(t *testing.T) {
	sim := cindersim.New(cindersim.Options{})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	sim.AddToken("u", cindersim.Identity{ProjectID: "p", Roles: []string{"member"}})
	sim.AddImage("img-1")
	c, err := cinder.New(t.Context(), cinder.Config{Endpoint: srv.URL + "/v3", User: cinder.StaticToken("u")})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.CreateVolume(t.Context(), cinder.VolumeSpec{SizeGB: 2, ImageID: "img-1"})
	if err != nil || v.Status != "creating" {
		t.Fatalf("create: %v %+v", err, v)
	}
	if v, err = c.GetVolume(t.Context(), v.ID); err != nil || v.Status != "available" || !v.Bootable || v.ImageID != "img-1" {
		t.Fatalf("get: %v %+v", err, v)
	}
	if vols, atts := sim.Counts(); vols != 1 || atts != 0 {
		t.Fatalf("counts: %d %d", vols, atts)
	}
	if n := sim.Calls()["POST /v3/volumes"]; n != 1 {
		t.Fatalf("calls: %v", sim.Calls())
	}
}

// TestMicroversions: as the real Cinder, attachments need 3.27 and
// os-complete 3.44 (else 404).
func TestMicroversions(t *testing.T) {
	sim := cindersim.New(cindersim.Options{})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	sim.AddToken("u", cindersim.Identity{ProjectID: "p"})
	for _, tc := range []struct {
		method, path, version string
		want                  int
	}{
		{"GET", "/v3/attachments/detail", "3.26", 404},
		{"GET", "/v3/attachments/detail", "3.27", 200},
		{"POST", "/v3/attachments/x/action", "3.43", 404},
		{"POST", "/v3/attachments/x/action", "3.44", 404}, // the attachment's own 404
		{"GET", "/v3/volumes/detail", "", 200},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{"os-complete": null}`))
		req.Header.Set("X-Auth-Token", "u")
		if tc.version != "" {
			req.Header.Set("OpenStack-API-Version", "volume "+tc.version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, 512)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Fatalf("%s %s at %s: %d %s", tc.method, tc.path, tc.version, resp.StatusCode, body[:n])
		}
		if tc.version == "3.44" && !strings.Contains(string(body[:n]), "attachment_id = x") {
			t.Fatalf("os-complete at 3.44 not routed: %s", body[:n])
		}
	}
}
