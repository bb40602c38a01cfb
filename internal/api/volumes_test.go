package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/store"
)

const volPath = "/volume/v3/ingot/volumes"

// newVolume creates a volume through the API and returns its id.
func (f *fixture) newVolume(name string) string {
	f.t.Helper()
	r := f.do("POST", volPath, "", map[string]any{"volume": map[string]any{"size": 10, "name": name}}).want(f.t, http.StatusAccepted)
	return obj(f.t, r.body, "volume")["id"].(string)
}

func (f *fixture) volume(id string) store.Volume {
	f.t.Helper()
	v, err := f.store.GetVolume(context.Background(), id)
	if err != nil {
		f.t.Fatalf("GetVolume(%s): %v", id, err)
	}
	return v
}

func (f *fixture) volumeCount() int {
	f.t.Helper()
	vs, err := f.store.ListVolumes(context.Background(), "", 0)
	if err != nil {
		f.t.Fatalf("ListVolumes: %v", err)
	}
	return len(vs)
}

func TestVolumeVersions(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/volume/", "/volume"} {
		r := f.do("GET", p, "", nil).want(t, http.StatusOK)
		vs := list(t, r.body, "versions")
		if len(vs) != 1 {
			t.Fatalf("%s: %d versions", p, len(vs))
		}
		v := vs[0].(map[string]any)
		if v["id"] != "v3.0" || v["status"] != "CURRENT" || v["min_version"] != "3.0" || v["version"] != "3.0" {
			t.Errorf("%s: version %v", p, v)
		}
		self := v["links"].([]any)[0].(map[string]any)
		if self["rel"] != "self" || self["href"] != f.url+"/volume/v3/" {
			t.Errorf("%s: self link %v, want %s/volume/v3/", p, self, f.url)
		}
	}
	r := f.do("GET", "/volume/v3/", "", nil).want(t, http.StatusOK)
	if obj(t, r.body, "version")["id"] != "v3.0" {
		t.Errorf("GET /volume/v3/: %s", r.raw)
	}
}

func TestVolumeLifecycle(t *testing.T) {
	f := newFixture(t)
	r := f.do("POST", volPath, "", map[string]any{"volume": map[string]any{"size": "20", "name": "data",
		"description": nil, "snapshot_id": nil, "imageRef": nil, "volume_type": nil, "metadata": map[string]any{},
		"availability_zone": nil, "source_volid": nil, "consistencygroup_id": nil, "backup_id": nil}}).want(t, http.StatusAccepted)
	v := obj(t, r.body, "volume")
	id, _ := v["id"].(string)
	if len(id) != 36 || v["name"] != "data" || v["size"] != 20.0 || v["status"] != "available" ||
		v["bootable"] != "false" || v["availability_zone"] != "nova" || v["volume_type"] != nil ||
		len(v["attachments"].([]any)) != 0 || len(v["metadata"].(map[string]any)) != 0 ||
		v["created_at"] != "2026-11-30T01:00:00.000000" || v["updated_at"] != "2026-11-30T01:00:00.000000" {
		t.Fatalf("created volume %s", r.raw)
	}
	if _, ok := v["ingot:status_reason"]; ok {
		t.Errorf("status_reason shown while empty: %s", r.raw)
	}
	sv := f.volume(id)
	if sv.TargetIQN != "iqn.2026-11.io.ingot:volume-"+id || sv.TargetLUN != 0 || sv.TargetPortal != store.DefaultTargetPortal {
		t.Errorf("stored target %q %d %q", sv.TargetIQN, sv.TargetLUN, sv.TargetPortal)
	}
	show := f.do("GET", volPath+"/"+id, "", nil).want(t, http.StatusOK)
	if got := obj(t, show.body, "volume"); got["id"] != id || got["size"] != 20.0 || got["status"] != "available" {
		t.Fatalf("show %s", show.raw)
	}

	// Paging by id, with a next link while a page is full.
	ids := []string{id, f.newVolume("b"), f.newVolume("c")}
	seen := map[string]bool{}
	next := volPath + "?limit=2"
	pages := 0
	for next != "" {
		page := f.do("GET", next, "", nil).want(t, http.StatusOK)
		pages++
		for _, item := range list(t, page.body, "volumes") {
			m := item.(map[string]any)
			if m["name"] == nil || m["links"] == nil {
				t.Errorf("summary %v lacks name or links", m)
			}
			seen[m["id"].(string)] = true
		}
		next = ""
		if links, ok := page.body["volumes_links"].([]any); ok {
			next = strings.TrimPrefix(links[0].(map[string]any)["href"].(string), f.url)
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if pages != 2 || len(seen) != 3 { // a full page of 2 with a next link, then the last one
		t.Fatalf("paging: %d pages, saw %v; want 2 pages and %v", pages, seen, ids)
	}
	for _, want := range ids {
		if !seen[want] {
			t.Fatalf("paging missed %s", want)
		}
	}
	detail := f.do("GET", volPath+"/detail", "", nil).want(t, http.StatusOK)
	if vs := list(t, detail.body, "volumes"); len(vs) != 3 || vs[0].(map[string]any)["status"] == nil {
		t.Fatalf("detail %s", detail.raw)
	}
	if _, ok := detail.body["volumes_links"]; ok {
		t.Errorf("a partial page has a next link: %s", detail.raw)
	}

	f.do("DELETE", volPath+"/"+id, "", nil).want(t, http.StatusAccepted)
	msg := f.do("GET", volPath+"/"+id, "", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	if !strings.Contains(msg, id) {
		t.Errorf("404 message %q does not name %s", msg, id)
	}
	f.do("DELETE", volPath+"/"+id, "", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", volPath+"/not-a-uuid", "", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", volPath+"?marker="+unknownID, "", nil).novaError(t, http.StatusBadRequest, "badRequest")
}

func TestVolumeCreateBadInput(t *testing.T) {
	f := newFixture(t)
	vol := func(fields map[string]any) map[string]any { return map[string]any{"volume": fields} }
	cases := []struct {
		name string
		body any
		msg  string
	}{
		{"no volume key", map[string]any{}, "volume"},
		{"volume not object", map[string]any{"volume": 3}, "volume"},
		{"no size", vol(map[string]any{"name": "x"}), "size"},
		{"size zero", vol(map[string]any{"size": 0}), "size"},
		{"size negative string", vol(map[string]any{"size": "-1"}), "size"},
		{"size words", vol(map[string]any{"size": "ten"}), "size"},
		{"size fraction", vol(map[string]any{"size": 1.5}), "size"},
		{"name number", vol(map[string]any{"size": 1, "name": 3}), "name"},
		{"snapshot", vol(map[string]any{"size": 1, "snapshot_id": unknownID}), "snapshot_id"},
		{"unknown image", vol(map[string]any{"size": 10, "imageRef": unknownID}), "Invalid image identifier or unable to access requested image."},
		{"image not a string", vol(map[string]any{"size": 10, "imageRef": 3}), "Invalid image identifier or unable to access requested image."},
		{"image larger than the volume", vol(map[string]any{"size": 9, "imageRef": imageID}),
			"Invalid input received: Volume size 9GB cannot be smaller than the image minDisk size 10GB."},
		{"volume type", vol(map[string]any{"size": 1, "volume_type": "ssd"}), "volume_type"},
		{"unknown member", vol(map[string]any{"size": 1, "frobnicate": 1}), "frobnicate"},
		{"description too long", vol(map[string]any{"size": 1, "description": strings.Repeat("d", 256)}), "description"},
		{"metadata", vol(map[string]any{"size": 1, "metadata": map[string]any{"k": "v"}}), "metadata"},
		{"other zone", vol(map[string]any{"size": 1, "availability_zone": "az2"}), "az2"},
		{"multiattach", vol(map[string]any{"size": 1, "multiattach": true}), "multiattach"},
		{"malformed", `{"volume": {`, "Malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := f.do("POST", volPath, "", c.body).novaError(t, http.StatusBadRequest, "badRequest")
			if !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not mention %q", msg, c.msg)
			}
		})
	}
	if n := f.volumeCount(); n != 0 {
		t.Fatalf("%d volumes stored after bad requests", n)
	}
}

// TestVolumeDescription: a volume keeps the description given at create
// (description, or the v1 name display_description) and shows it; none
// shows null.
func TestVolumeDescription(t *testing.T) {
	f := newFixture(t)
	for body, want := range map[string]any{"description": "logs", "display_description": "old name", "": nil} {
		in := map[string]any{"size": 1}
		if body != "" {
			in[body] = want
		}
		v := obj(t, f.do("POST", volPath, "", map[string]any{"volume": in}).want(t, http.StatusAccepted).body, "volume")
		if v["description"] != want {
			t.Errorf("create with %s: description %#v, want %#v", body, v["description"], want)
		}
		shown := obj(t, f.do("GET", volPath+"/"+v["id"].(string), "", nil).want(t, http.StatusOK).body, "volume")
		if shown["description"] != want {
			t.Errorf("show after create with %s: description %#v, want %#v", body, shown["description"], want)
		}
	}
}

// TestVolumeFromImage: a volume made from an image (Cinder's imageRef)
// records it, shows it in volume_image_metadata and is bootable; a blank
// volume shows neither.
func TestVolumeFromImage(t *testing.T) {
	f := newFixture(t)
	v := obj(t, f.do("POST", volPath, "", map[string]any{"volume": map[string]any{"size": 10, "imageRef": imageID}}).
		want(t, http.StatusAccepted).body, "volume")
	id := v["id"].(string)
	for _, got := range []map[string]any{v, obj(t, f.do("GET", volPath+"/"+id, "", nil).want(t, http.StatusOK).body, "volume")} {
		meta, _ := got["volume_image_metadata"].(map[string]any)
		if got["bootable"] != "true" || meta["image_id"] != imageID || got["status"] != "available" {
			t.Errorf("volume from image: %v", got)
		}
	}
	if sv := f.volume(id); sv.ImageID != imageID {
		t.Errorf("stored image %q, want %s", sv.ImageID, imageID)
	}
	blank := obj(t, f.do("GET", volPath+"/"+f.newVolume("blank"), "", nil).want(t, http.StatusOK).body, "volume")
	if _, ok := blank["volume_image_metadata"]; ok || blank["bootable"] != "false" {
		t.Errorf("blank volume: %v", blank)
	}
}
