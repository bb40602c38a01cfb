package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func bdm(id string, boot, dot any) map[string]any {
	m := map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": id, "delete_on_termination": dot}
	if boot != nil {
		m["boot_index"] = boot
	}
	return m
}

func createBody(image bool, entries ...any) map[string]any {
	b := validCreate()
	s := b["server"].(map[string]any)
	if !image {
		delete(s, "imageRef")
	}
	s["block_device_mapping_v2"] = entries
	return b
}

func TestCreateServerWithVolumes(t *testing.T) {
	f := newFixture(t)
	boot, data := f.newVolume("boot"), f.newVolume("data")
	// Boot from volume: no imageRef, boot_index as a string, the data
	// volume without a boot_index.
	r := f.do("POST", "/v2.1/servers", "2.90", createBody(false, bdm(boot, "0", true), bdm(data, nil, false))).
		want(t, http.StatusAccepted)
	id := obj(t, r.body, "server")["id"].(string)

	rec, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := []lifecycle.VolumeRef{{ID: boot, BootIndex: 0, DeleteOnTermination: true}, {ID: data, BootIndex: -1}}
	if len(rec.Spec.Volumes) != 2 || rec.Spec.Volumes[0] != want[0] || rec.Spec.Volumes[1] != want[1] {
		t.Fatalf("Spec.Volumes = %+v, want %+v", rec.Spec.Volumes, want)
	}
	if rec.Spec.ImageID != "" || rec.Spec.ImageSource != "" || rec.Spec.ImageChecksum != "" {
		t.Errorf("boot from volume kept image fields: %+v", rec.Spec)
	}
	for _, vid := range []string{boot, data} {
		v := f.volume(vid)
		if v.Status != store.VolumeReserved || v.ServerID != id {
			t.Errorf("volume %s: %s held by %q, want reserved by %s", vid, v.Status, v.ServerID, id)
		}
		shown := obj(t, f.do("GET", volPath+"/"+vid, "", nil).want(t, http.StatusOK).body, "volume")
		atts := shown["attachments"].([]any)
		if shown["status"] != "reserved" || len(atts) != 1 || atts[0].(map[string]any)["server_id"] != id {
			t.Errorf("volume %s shows %v", vid, shown)
		}
	}

	attached := func(mv, path string) []any {
		t.Helper()
		r := f.do("GET", path, mv, nil).want(t, http.StatusOK)
		var s map[string]any
		if strings.HasSuffix(path, "/detail") {
			s = list(t, r.body, "servers")[0].(map[string]any)
		} else {
			s = obj(t, r.body, "server")
		}
		if s["image"] != "" {
			t.Errorf("image of a server booted from a volume: %v, want \"\"", s["image"])
		}
		return s["os-extended-volumes:volumes_attached"].([]any)
	}
	for _, path := range []string{"/v2.1/servers/" + id, "/v2.1/servers/detail"} {
		va := attached("2.90", path)
		if len(va) != 2 ||
			va[0].(map[string]any)["id"] != boot || va[0].(map[string]any)["delete_on_termination"] != true ||
			va[1].(map[string]any)["id"] != data || va[1].(map[string]any)["delete_on_termination"] != false {
			t.Errorf("%s at 2.90: volumes_attached %v", path, va)
		}
		va = attached("2.1", path)
		if len(va) != 2 || len(va[0].(map[string]any)) != 1 {
			t.Errorf("%s at 2.1: volumes_attached %v, want ids only", path, va)
		}
	}

	// os-volume_attachments (openstack server volume list), per microversion.
	atts := list(t, f.do("GET", "/v2.1/servers/"+id+"/os-volume_attachments", "2.90", nil).want(t, http.StatusOK).body, "volumeAttachments")
	if len(atts) != 2 {
		t.Fatalf("volumeAttachments %v", atts)
	}
	a0, a1 := atts[0].(map[string]any), atts[1].(map[string]any)
	if a0["volumeId"] != boot || a0["serverId"] != id || a0["device"] != "/dev/sda" || a0["delete_on_termination"] != true ||
		a0["attachment_id"] == nil || a0["id"] != nil || a1["volumeId"] != data || a1["device"] != nil {
		t.Errorf("volumeAttachments at 2.90: %v", atts)
	}
	// One attachment, as Cinder asks it before deleting an attachment: the
	// same body as the list's entry; 404 for a volume the server does not hold.
	one := obj(t, f.do("GET", "/v2.1/servers/"+id+"/os-volume_attachments/"+boot, "2.90", nil).want(t, http.StatusOK).body, "volumeAttachment")
	if one["volumeId"] != boot || one["serverId"] != id || one["attachment_id"] != a0["attachment_id"] || len(one) != len(a0) {
		t.Errorf("volumeAttachment at 2.90: %v, the list's: %v", one, a0)
	}
	f.do("GET", "/v2.1/servers/"+id+"/os-volume_attachments/"+uuid.NewString(), "2.90", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	old := list(t, f.do("GET", "/v2.1/servers/"+id+"/os-volume_attachments", "2.1", nil).want(t, http.StatusOK).body, "volumeAttachments")
	if o := old[0].(map[string]any); o["id"] != boot || o["volumeId"] != boot || len(o) != 4 {
		t.Errorf("volumeAttachments at 2.1: %v", old)
	}

	// A held volume cannot be deleted: Cinder's 400, with its status.
	msg := f.do("DELETE", volPath+"/"+boot, "", nil).novaError(t, http.StatusBadRequest, "badRequest")
	if !strings.Contains(msg, "Invalid volume: Volume status must be available") || !strings.HasSuffix(msg, "current status is: reserved.") {
		t.Errorf("delete of a reserved volume: %q", msg)
	}
	v := f.volume(boot)
	v.Status, v.NodeID, v.StatusReason = store.VolumeInUse, "node-1", "target on node-1"
	if err := f.store.UpdateVolume(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	msg = f.do("DELETE", volPath+"/"+boot, "", nil).novaError(t, http.StatusBadRequest, "badRequest")
	if !strings.HasSuffix(msg, "current status is: in-use.") {
		t.Errorf("delete of an in-use volume: %q", msg)
	}
	if plain := obj(t, f.do("GET", volPath+"/"+boot, "", nil).want(t, http.StatusOK).body, "volume"); plain["ingot:status_reason"] != nil {
		t.Errorf("ingot:status_reason without X-Ingot-Extensions: %v", plain)
	}
	shown := obj(t, f.doWith(http.Header{"X-Ingot-Extensions": {"true"}}, "GET", volPath+"/"+boot, "", nil).want(t, http.StatusOK).body, "volume")
	att := shown["attachments"].([]any)[0].(map[string]any)
	if shown["status"] != "in-use" || shown["bootable"] != "true" || shown["ingot:status_reason"] != "target on node-1" ||
		att["host_name"] != "node-1" || att["device"] != "/dev/sda" || att["volume_id"] != boot || att["attachment_id"] == "" {
		t.Errorf("in-use volume shows %v", shown)
	}

	// A server with an image and no volumes shows none, and its image.
	plain := f.create("plain")
	s := obj(t, f.do("GET", "/v2.1/servers/"+plain, "2.90", nil).want(t, http.StatusOK).body, "server")
	if va := s["os-extended-volumes:volumes_attached"].([]any); len(va) != 0 {
		t.Errorf("server without volumes shows %v", va)
	}
	if img, ok := s["image"].(map[string]any); !ok || img["id"] != imageID {
		t.Errorf("image of an image-booted server: %v", s["image"])
	}
}

func TestCreateServerVolumesBadInput(t *testing.T) {
	f := newFixture(t)
	free, other, held := f.newVolume("free"), f.newVolume("other"), f.newVolume("held")
	holder := obj(t, f.do("POST", "/v2.1/servers", "2.90", createBody(true, bdm(held, -1, false))).
		want(t, http.StatusAccepted).body, "server")["id"].(string)
	notList := validCreate()
	notList["server"].(map[string]any)["block_device_mapping_v2"] = map[string]any{"uuid": free}
	cases := []struct {
		name string
		body any
		msg  []string // substrings of the message
	}{
		{"image to local not the boot disk", createBody(true, map[string]any{"source_type": "image", "destination_type": "local", "uuid": imageID, "boot_index": 1}),
			[]string{"Mapping image to local is not supported"}},
		{"image to local and a boot volume", createBody(false, map[string]any{"source_type": "image", "destination_type": "local", "uuid": imageID, "boot_index": 0},
			bdm(free, 0, false)), []string{"boot_index 0"}},
		{"image to volume of an unknown image", createBody(false, map[string]any{"source_type": "image", "destination_type": "volume", "uuid": unknownID, "volume_size": 1, "boot_index": 0}),
			[]string{"Image " + unknownID + " could not be found."}},
		{"image to volume smaller than the image's min_disk", createBody(false, map[string]any{"source_type": "image", "destination_type": "volume", "uuid": imageID, "volume_size": 2, "boot_index": 0}),
			[]string{"Volume is smaller than the minimum size specified in image metadata. Volume size is 2147483648 bytes, minimum size is 10737418240 bytes."}},
		{"two made boot volumes", createBody(false, map[string]any{"source_type": "image", "destination_type": "volume", "uuid": imageID, "volume_size": 1, "boot_index": 0},
			map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0}), []string{"boot_index 0"}},
		{"blank to local", createBody(true, map[string]any{"source_type": "blank", "destination_type": "local", "volume_size": 1}),
			[]string{`source_type "blank" and destination_type "local"`}},
		// Nova's checks of the entries that make a volume come first.
		{"image to volume without a size", createBody(true, map[string]any{"source_type": "image", "destination_type": "volume", "uuid": imageID}),
			[]string{"Images with destination_type 'volume' need to have a non-zero size specified"}},
		{"image to volume without a uuid", createBody(true, map[string]any{"source_type": "image", "destination_type": "volume", "volume_size": 1}),
			[]string{"Block Device Mapping is Invalid: Missing device UUID."}},
		{"blank volume without a size", createBody(true, map[string]any{"source_type": "blank", "destination_type": "volume"}),
			[]string{"Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size"}},
		{"blank volume with a uuid", createBody(true, map[string]any{"source_type": "blank", "destination_type": "volume", "uuid": free, "volume_size": 1}),
			[]string{"Block Device Mapping is Invalid: Invalid device UUID."}},
		{"volume size words", createBody(true, map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": "big"}),
			[]string{"volume_size", "big"}},
		{"local destination", createBody(true, map[string]any{"source_type": "volume", "destination_type": "local", "uuid": free}),
			[]string{`destination_type "local"`}},
		{"malformed uuid", createBody(true, bdm("vol-1", 0, false)), []string{"uuid", "vol-1"}},
		{"no uuid", createBody(true, map[string]any{"source_type": "volume", "destination_type": "volume"}), []string{"uuid"}},
		{"duplicate volume", createBody(true, bdm(free, 0, false), bdm(free, -1, false)), []string{free, "twice"}},
		{"two boot volumes", createBody(false, bdm(free, 0, false), bdm(other, "0", false)), []string{"boot_index 0"}},
		{"boot index gap", createBody(true, bdm(free, 1, false)), []string{"Boot sequence"}},
		{"boot index words", createBody(true, bdm(free, "first", false)), []string{"boot_index"}},
		{"delete flag words", createBody(true, bdm(free, 0, "maybe")), []string{"delete_on_termination"}},
		{"unknown volume", createBody(true, bdm(free, 0, false), bdm(unknownID, -1, false)), []string{unknownID, "could not be found"}},
		{"volume in use", createBody(false, bdm(free, 0, false), bdm(held, -1, false)), []string{held, holder}},
		{"data volume only, no image", createBody(false, bdm(free, -1, false)), []string{"imageRef"}},
		{"legacy mapping", func() any {
			b := validCreate()
			b["server"].(map[string]any)["block_device_mapping"] = []any{map[string]any{"volume_id": free}}
			return b
		}(), []string{"block_device_mapping_v2"}},
		{"mapping not a list", notList, []string{"block_device_mapping_v2"}},
		{"entry not an object", createBody(true, "x"), []string{"block_device_mapping_v2"}},
		{"unsupported member", createBody(true, map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": free, "no_device": true}),
			[]string{"no_device"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := f.do("POST", "/v2.1/servers", "2.90", c.body).novaError(t, http.StatusBadRequest, "badRequest")
			for _, want := range c.msg {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not mention %q", msg, want)
				}
			}
		})
	}
	if n := f.serverCount(); n != 1 {
		t.Fatalf("%d servers stored, want only the holder", n)
	}
	for _, vid := range []string{free, other} {
		if v := f.volume(vid); v.Status != store.VolumeAvailable || v.ServerID != "" {
			t.Errorf("volume %s after refused creates: %s held by %q", vid, v.Status, v.ServerID)
		}
	}
	if v := f.volume(held); v.ServerID != holder {
		t.Errorf("held volume now held by %q, want %s", v.ServerID, holder)
	}
}

// TestCreateServerImageLocalBDM: {source_type image, destination_type
// local, boot_index 0} is the image boot Nova makes of it (Terraform's
// "boot from image, attach a data disk"): without imageRef its uuid is
// the image, and a data volume beside it is held.
func TestCreateServerImageLocalBDM(t *testing.T) {
	f := newFixture(t)
	data := f.newVolume("data")
	r := f.do("POST", "/v2.1/servers", "2.90", createBody(false,
		map[string]any{"source_type": "image", "destination_type": "local", "uuid": imageID, "boot_index": 0, "delete_on_termination": true},
		bdm(data, nil, false))).want(t, http.StatusAccepted)
	id := obj(t, r.body, "server")["id"].(string)
	rec, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Spec.ImageID != imageID || len(rec.Spec.Volumes) != 1 || rec.Spec.Volumes[0].ID != data {
		t.Fatalf("image %q, volumes %+v", rec.Spec.ImageID, rec.Spec.Volumes)
	}
	if v := f.volume(data); v.ServerID != id {
		t.Errorf("data volume held by %q", v.ServerID)
	}
}

// TestCreateServerMakesVolumes: image→volume at boot_index 0 (no
// imageRef: the server boots from the volume made of the image) and a
// blank data volume are accepted and recorded as the volumes the build
// makes, with their sizes, flags and tags; no volume exists yet (the
// reconciler makes them).
func TestCreateServerMakesVolumes(t *testing.T) {
	f := newFixture(t)
	count := func() int {
		vs, err := f.store.ListVolumes(context.Background(), "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		return len(vs)
	}
	before := count()
	body := createBody(false,
		map[string]any{"source_type": "image", "destination_type": "volume", "uuid": imageID, "volume_size": "10", "boot_index": 0,
			"delete_on_termination": true, "tag": "root"},
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1})
	id := obj(t, f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	rec, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := []lifecycle.VolumeRef{
		{BootIndex: 0, DeleteOnTermination: true, Source: lifecycle.SourceImage, ImageID: imageID, SizeGB: 10, Tag: "root"},
		{BootIndex: -1, Source: lifecycle.SourceBlank, SizeGB: 1}}
	if len(rec.Spec.Volumes) != 2 || rec.Spec.Volumes[0] != want[0] || rec.Spec.Volumes[1] != want[1] {
		t.Fatalf("Spec.Volumes = %+v, want %+v", rec.Spec.Volumes, want)
	}
	if rec.Spec.ImageID != "" || lifecycle.ToMake(rec) != 0 || rec.VolumeToken != "" {
		t.Errorf("image %q, first to make %d, token kept without Cinder %v", rec.Spec.ImageID, lifecycle.ToMake(rec), rec.VolumeToken != "")
	}
	if n := count(); n != before {
		t.Errorf("the create made %d volumes itself", n-before)
	}
}

// TestVolumeAttachmentTag: a block device's tag is shown by
// os-volume_attachments from 2.70 (null when none), and not below.
func TestVolumeAttachmentTag(t *testing.T) {
	f := newFixture(t)
	tagged, plain := f.newVolume("tagged"), f.newVolume("plain")
	withTag := bdm(tagged, -1, false)
	withTag["tag"] = "db"
	id := obj(t, f.do("POST", "/v2.1/servers", "2.90", createBody(true, withTag, bdm(plain, -1, false))).
		want(t, http.StatusAccepted).body, "server")["id"].(string)
	path := "/v2.1/servers/" + id + "/os-volume_attachments"
	tags := func(mv string) map[string]any {
		out := map[string]any{}
		for _, a := range f.do("GET", path, mv, nil).want(t, http.StatusOK).body["volumeAttachments"].([]any) {
			a := a.(map[string]any)
			tag, ok := a["tag"]
			if !ok {
				tag = "absent"
			}
			out[a["volumeId"].(string)] = tag
		}
		return out
	}
	if got := tags("2.70"); got[tagged] != "db" || got[plain] != nil {
		t.Errorf("2.70: tags %v, want db and null", got)
	}
	if got := tags("2.69"); got[tagged] != "absent" || got[plain] != "absent" {
		t.Errorf("2.69: tags %v, want none shown", got)
	}
	one := f.do("GET", path+"/"+tagged, "2.89", nil).want(t, http.StatusOK).body["volumeAttachment"].(map[string]any)
	if one["tag"] != "db" {
		t.Errorf("GET one at 2.89: tag %v", one["tag"])
	}
	// A PUT may repeat the tag (2.85, as Nova: not mutable).
	put := func(tag string) response {
		return f.do("PUT", path+"/"+tagged, "2.85", map[string]any{"volumeAttachment": map[string]any{"volumeId": tagged, "tag": tag,
			"delete_on_termination": true}})
	}
	put("db").want(t, http.StatusAccepted)
	wantMsg(t, put("other"), http.StatusBadRequest, "badRequest", "The tag property is not mutable")
}

// TestBlockDeviceTagMicroversions: a block device's tag is Nova's from 2.32,
// not at 2.33–2.41 (removed there by mistake), again from 2.42.
func TestBlockDeviceTagMicroversions(t *testing.T) {
	f := newFixture(t)
	body := func() map[string]any {
		return createBody(true, map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "tag": "data"})
	}
	for _, mv := range []string{"2.1", "2.31", "2.33", "2.41"} {
		if e := f.do("POST", "/v2.1/servers", mv, body()).novaError(t, http.StatusBadRequest, "badRequest"); !strings.Contains(e, "'tag' was unexpected") {
			t.Errorf("%s: %s", mv, e)
		}
	}
	for _, mv := range []string{"2.32", "2.42", "2.90"} {
		f.do("POST", "/v2.1/servers", mv, body()).want(t, http.StatusAccepted)
	}
}
