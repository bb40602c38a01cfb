package glancetest

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"
)

// ImageOptions describes an image to upload.
type ImageOptions struct {
	Name string
	// Visibility: private (default), shared, community or public (admin only).
	Visibility string
	// MinDisk (GiB) and MinRAM (MiB) are the image's minimums.
	MinDisk, MinRAM int
	// Properties become top-level string keys (e.g. "trait:CUSTOM_X": "required").
	Properties map[string]string
	// SizeKiB is the raw image's size (default 64).
	SizeKiB int
}

// UploadImage creates a raw/bare image as user (a keystonetest user name),
// uploads zeroes (a valid raw disk) and returns its id; the image is active.
func (e *Env) UploadImage(t testing.TB, user string, o ImageOptions) string {
	t.Helper()
	token := e.Keystone.Token(t, user)
	body := map[string]any{"name": o.Name, "disk_format": "raw", "container_format": "bare",
		"min_disk": o.MinDisk, "min_ram": o.MinRAM}
	body["visibility"] = "private" // Glance's own default is "shared"
	if o.Visibility != "" {
		body["visibility"] = o.Visibility
	}
	for k, v := range o.Properties {
		body[k] = v
	}
	var img struct{ ID string }
	if err := testproc.Call(e.hc, token, http.MethodPost, e.URL+"/v2/images", body, &img); err != nil {
		t.Fatalf("glancetest: create image: %v", err)
	}
	size := o.SizeKiB
	if size <= 0 {
		size = 64
	}
	req, err := http.NewRequest(http.MethodPut, e.URL+"/v2/images/"+img.ID+"/file", bytes.NewReader(make([]byte, size<<10)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("glancetest: upload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("glancetest: upload: %s", resp.Status)
	}
	e.waitActive(t, token, img.ID)
	return img.ID
}

// waitActive polls until the image is active (the file store makes it so
// within the upload's answer; a slow machine may lag).
func (e *Env) waitActive(t testing.TB, token, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var img struct{ Status string }
		if err := testproc.Call(e.hc, token, http.MethodGet, e.URL+"/v2/images/"+id, nil, &img); err != nil {
			t.Fatalf("glancetest: get image: %v", err)
		}
		if img.Status == "active" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("glancetest: image %s is %s after 30 s", id, img.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CreateQueued creates an image with no data (status queued), for "image
// not active" checks.
func (e *Env) CreateQueued(t testing.TB, user, name string) string {
	t.Helper()
	var img struct{ ID string }
	if err := testproc.Call(e.hc, e.Keystone.Token(t, user), http.MethodPost, e.URL+"/v2/images",
		map[string]any{"name": name, "disk_format": "raw", "container_format": "bare"}, &img); err != nil {
		t.Fatalf("glancetest: create image: %v", err)
	}
	if img.ID == "" {
		t.Fatal(fmt.Errorf("glancetest: no id in the answer"))
	}
	return img.ID
}

// Deactivate makes an active image deactivated (as Glance's admin: the
// owner may not), for "image not active" checks.
func (e *Env) Deactivate(t testing.TB, id string) {
	t.Helper()
	if err := testproc.Call(e.hc, e.Keystone.Token(t, "admin"), http.MethodPost,
		e.URL+"/v2/images/"+id+"/actions/deactivate", nil, nil); err != nil {
		t.Fatalf("glancetest: deactivate %s: %v", id, err)
	}
}
