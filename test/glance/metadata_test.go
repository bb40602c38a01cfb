package glance

import (
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// TestImageMetadataProxy: Nova's image metadata proxy (≤ 2.38) writes the
// image's properties in Glance with the caller's token: the owner merges,
// sets, replaces and deletes them, Glance shows the result, another
// project's member is refused by Glance's policy (403), and from 2.39 the
// proxy is gone (404). The image proxy's DELETE deletes in Glance.
func TestImageMetadataProxy(t *testing.T) {
	w := startWorld(t)
	id := w.glance.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "mine", Visibility: "shared",
		Properties: map[string]string{"os_distro": "debian"}})
	path := "/v2.1/images/" + id + "/metadata"
	type md struct {
		Metadata map[string]string `json:"metadata"`
		Meta     map[string]string `json:"meta"`
	}
	var got md
	w.must(t, "member-a", "2.35", "POST", path, map[string]any{"metadata": map[string]string{"k1": "v1", "k0": ""}}, &got)
	if len(got.Metadata) != 3 || got.Metadata["os_distro"] != "debian" || got.Metadata["k1"] != "v1" {
		t.Fatalf("merge answered %v", got.Metadata)
	}
	w.must(t, "member-a", "2.35", "PUT", path+"/k1", map[string]any{"meta": map[string]string{"k1": "v1.1"}}, &got)
	if got.Meta["k1"] != "v1.1" {
		t.Errorf("set item answered %v", got.Meta)
	}
	w.must(t, "member-a", "2.35", "DELETE", path+"/k0", nil, nil)
	got = md{}
	w.must(t, "member-a", "2.35", "GET", path, nil, &got)
	if len(got.Metadata) != 2 || got.Metadata["k1"] != "v1.1" || got.Metadata["os_distro"] != "debian" {
		t.Errorf("after set and delete: %v", got.Metadata)
	}
	// Glance itself shows it.
	var img map[string]any
	if err := testproc.Call(w.hc, w.toks["member-a"], "GET", w.glance.URL+"/v2/images/"+id, nil, &img); err != nil {
		t.Fatal(err)
	}
	if img["k1"] != "v1.1" || img["k0"] != nil {
		t.Errorf("Glance shows k1=%v k0=%v", img["k1"], img["k0"])
	}
	w.must(t, "member-a", "2.35", "PUT", path, map[string]any{"metadata": map[string]string{"only": "this"}}, &got)
	got = md{}
	w.must(t, "member-a", "2.35", "GET", path, nil, &got)
	if len(got.Metadata) != 1 || got.Metadata["only"] != "this" {
		t.Errorf("after replace: %v", got.Metadata)
	}
	if err := w.call("member-a", "2.35", "PUT", path+"/a", map[string]any{"meta": map[string]string{"b": "c"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "Request body and URI mismatch") {
		t.Errorf("mismatched key: %v", err)
	}
	if err := w.call("member-a", "2.35", "DELETE", path+"/missing", nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("delete of a missing key: %v", err)
	}
	if err := w.call("member-a", "2.39", "GET", path, nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("at 2.39: %v", err)
	}
	// A public image of the admin's: B may read it, not change it.
	pub := w.glance.UploadImage(t, "admin", glancetest.ImageOptions{Name: "public", Visibility: "public"})
	w.must(t, "member-b", "2.35", "GET", "/v2.1/images/"+pub+"/metadata", nil, &got)
	if err := w.call("member-b", "2.35", "POST", "/v2.1/images/"+pub+"/metadata",
		map[string]any{"metadata": map[string]string{"x": "y"}}, nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("member-b writing the admin's public image: %v; want 403", err)
	}
	// A's private image is not B's to see at all.
	if err := w.call("member-b", "2.35", "GET", path, nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("member-b reading A's image: %v; want 404", err)
	}
	// The proxy's DELETE: B may not delete the admin's image; A deletes its own.
	if err := w.call("member-b", "2.35", "DELETE", "/v2.1/images/"+pub, nil, nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("member-b deleting the admin's public image: %v; want 403", err)
	}
	w.must(t, "member-a", "2.35", "DELETE", "/v2.1/images/"+id, nil, nil)
	if err := testproc.Call(w.hc, w.toks["member-a"], "GET", w.glance.URL+"/v2/images/"+id, nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Glance still has the deleted image: %v", err)
	}
}
