package realcinder

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// cinderVolumes: with volume.backend: cinder a build attaches each
// volume as Nova does for bare metal (a Cinder attachment with the node's
// connector, an Ironic target from its connection info, os-complete) and
// a delete undoes all of it.
func cinderVolumes(t *testing.T, w *world) {
	t.Run("boot from a Cinder volume, then delete", func(t *testing.T) {
		s := w.ingot(t, "rc-c1")
		node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "c1", ResourceClass: "rc-c1", Kind: ironictest.Fast})
		vol := s.volume("boot", true)
		w.cinderCall.take()
		w.ironicCall.take()
		id := s.Create(map[string]any{"name": "c1", "flavorRef": "bm",
			"networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}},
			"block_device_mapping_v2": []map[string]any{
				{"source_type": "volume", "destination_type": "volume", "uuid": vol, "boot_index": 0}}})
		s.WaitStatus(id, "ACTIVE", 90*time.Second)
		calls, n := w.cinderCall.take()
		t.Logf("Cinder calls for a build with one volume (%d): %s", n, calls)
		icalls, in := w.ironicCall.take()
		t.Logf("Ironic calls for that build (%d): %s", in, icalls)
		if st := s.volumeStatus(vol); st != "in-use" {
			t.Errorf("volume %s, want in-use", st)
		}
		s.wantCinderTarget(node, vol)
		if a, _ := s.counts(node); a != 1 {
			t.Errorf("%d attachments, want 1", a)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
		s.waitClean(node)
		if st := s.volumeStatus(vol); st != "available" {
			t.Errorf("volume after delete: %s, want available", st)
		}
		calls, n = w.cinderCall.take()
		t.Logf("Cinder calls for the delete (%d): %s", n, calls)
	})

	t.Run("image plus data volumes, delete_on_termination", func(t *testing.T) {
		s := w.ingot(t, "rc-c2")
		node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "c2", ResourceClass: "rc-c2", Kind: ironictest.Fast})
		keep, doomed := s.volume("keep", false), s.volume("doomed", false)
		id := s.Create(map[string]any{"name": "c2", "flavorRef": "bm", "imageRef": s.app.Config.Images[0].ID,
			"networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}},
			"block_device_mapping_v2": []map[string]any{
				{"source_type": "volume", "destination_type": "volume", "uuid": keep},
				{"source_type": "volume", "destination_type": "volume", "uuid": doomed, "delete_on_termination": true}}})
		s.WaitStatus(id, "ACTIVE", 90*time.Second)
		for _, v := range []string{keep, doomed} {
			if st := s.volumeStatus(v); st != "in-use" {
				t.Errorf("volume %s %s, want in-use", v, st)
			}
		}
		if a, tg := s.counts(node); a != 2 || tg != 2 {
			t.Fatalf("%d attachments, %d targets, want 2 and 2", a, tg)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
		s.waitClean(node)
		if st := s.volumeStatus(keep); st != "available" {
			t.Errorf("kept volume: %s", st)
		}
		s.WaitFor("doomed volume deleted", 30*time.Second, func() bool { return s.volumeStatus(doomed) == "gone" })
	})

	t.Run("refusals: another project's volume, a volume in use, a volume not bootable", func(t *testing.T) {
		s := w.ingot(t, "rc-c3")
		vol := s.volume("plain", false)
		create := func(tok string, bdm map[string]any) (int, string) {
			s.Token = tok
			defer func() { s.Token = s.tok }()
			var out struct {
				BadRequest struct{ Message string } `json:"badRequest"`
			}
			code := s.Call("POST", "/v2.1/servers", map[string]any{"server": map[string]any{"name": "x", "flavorRef": "bm",
				"networks": "none", "block_device_mapping_v2": []map[string]any{bdm}}}, &out)
			return code, out.BadRequest.Message
		}
		code, msg := create(w.cin.Keystone.Token(t, "member-b"), map[string]any{"source_type": "volume",
			"destination_type": "volume", "uuid": vol, "boot_index": 0})
		if code != http.StatusBadRequest || !strings.Contains(msg, "failed to get volume") {
			t.Errorf("another project's volume: %d %q", code, msg)
		}
		code, msg = create(s.tok, map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": vol, "boot_index": 0})
		if code != http.StatusBadRequest || !strings.Contains(msg, "is not bootable") {
			t.Errorf("a volume not bootable: %d %q", code, msg)
		}
	})
}

// wantCinderTarget checks that node's one volume target is vol's, made
// from Cinder's connection info (the fake driver's iSCSI target).
func (s *stack) wantCinderTarget(node, vol string) {
	s.t.Helper()
	tg := s.w.ir.ListVolumeTargets(s.t, node)
	if len(tg) != 1 || tg[0]["volume_id"] != vol || tg[0]["volume_type"] != "iscsi" {
		s.t.Fatalf("targets on %s: %v", node, tg)
	}
	props, _ := tg[0]["properties"].(map[string]any)
	if props["target_iqn"] != "iqn.2010-10.org.openstack:volume-"+vol || props["target_portal"] != "127.0.0.1:3260" ||
		props["auth_method"] != "CHAP" {
		s.t.Errorf("target properties are not Cinder's connection info: %v", props)
	}
}

// cinderProxyAndCallback: Nova's os-volumes proxy (≤2.35) over Cinder,
// and Cinder's call-back: a member deleting, with their token only, the
// attachment ingot made makes Cinder ask the catalog's compute endpoint
// (ingot) GET os-volume_attachments/{volume}; ingot answers with that
// attachment, and Cinder refuses the delete (409), as with Nova.
func cinderProxyAndCallback(t *testing.T, w *world) {
	s := w.ingot(t, "rc-p1")
	s.serveCallback()
	node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "p1", ResourceClass: "rc-p1", Kind: ironictest.Fast})
	s.Microversion = "2.35"
	var made struct {
		Volume struct {
			ID        string  `json:"id"`
			Status    string  `json:"status"`
			Size      int     `json:"size"`
			CreatedAt *string `json:"createdAt"`
		} `json:"volume"`
	}
	if code := s.Call("POST", "/v2.1/os-volumes", map[string]any{"volume": map[string]any{"size": 1, "display_name": "proxied"}}, &made); code != http.StatusOK {
		t.Fatalf("POST os-volumes: %d", code)
	}
	vol := made.Volume.ID
	// Tempest's schema wants createdAt a string, as Nova copies Cinder's.
	if made.Volume.Size != 1 || made.Volume.CreatedAt == nil || !strings.HasPrefix(*made.Volume.CreatedAt, "20") || s.volumeStatus(vol) == "gone" {
		t.Fatalf("os-volumes create: %+v, Cinder shows %s", made.Volume, s.volumeStatus(vol))
	}
	s.WaitFor("proxied volume available", time.Minute, func() bool {
		var got struct {
			Volume struct {
				Status      string           `json:"status"`
				Attachments []map[string]any `json:"attachments"`
			} `json:"volume"`
		}
		s.Call("GET", "/v2.1/os-volumes/"+vol, nil, &got)
		return got.Volume.Status == "available" && len(got.Volume.Attachments) == 1 && len(got.Volume.Attachments[0]) == 0
	})
	var list struct {
		Volumes []struct{ ID string } `json:"volumes"`
	}
	s.Call("GET", "/v2.1/os-volumes/detail", nil, &list)
	if !slices.ContainsFunc(list.Volumes, func(v struct{ ID string }) bool { return v.ID == vol }) {
		t.Errorf("os-volumes/detail lacks %s: %+v", vol, list.Volumes)
	}
	s.Microversion = "2.36"
	if code := s.Call("GET", "/v2.1/os-volumes", nil, nil); code != http.StatusNotFound {
		t.Errorf("os-volumes at 2.36: %d, want 404", code)
	}
	s.Microversion = "2.90"

	id := s.createWithData("p1", vol)
	s.WaitStatus(id, "ACTIVE", 90*time.Second)
	var shown struct {
		VolumeAttachment struct {
			AttachmentID string `json:"attachment_id"`
			VolumeID     string `json:"volumeId"`
		} `json:"volumeAttachment"`
	}
	if code := s.Call("GET", "/v2.1/servers/"+id+"/os-volume_attachments/"+vol, nil, &shown); code != http.StatusOK {
		t.Fatalf("GET os-volume_attachments/%s: %d", vol, code)
	}
	var atts struct {
		Attachments []struct{ ID string } `json:"attachments"`
	}
	w.cin.Do(t, w.cin.Keystone.Token(t, "admin"), http.MethodGet, "/attachments?all_tenants=1", nil, &atts)
	if len(atts.Attachments) != 1 || atts.Attachments[0].ID != shown.VolumeAttachment.AttachmentID {
		t.Fatalf("Cinder's attachments %+v, ingot shows %+v", atts.Attachments, shown.VolumeAttachment)
	}
	if code := w.cin.Do(t, s.tok, http.MethodDelete, "/attachments/"+shown.VolumeAttachment.AttachmentID, nil, nil); code != http.StatusConflict {
		t.Errorf("a member's delete of ingot's attachment: %d, want 409 (Cinder asked ingot, which uses it)", code)
	}
	if a, _ := s.counts(); a != 1 {
		t.Errorf("%d attachments after the refused delete, want 1", a)
	}
	s.Microversion = "2.35"
	if code := s.Call("DELETE", "/v2.1/os-volumes/"+vol, nil, nil); code != http.StatusBadRequest {
		t.Errorf("os-volumes delete of an in-use volume: %d, want 400", code)
	}
	s.Microversion = "2.90"
	s.Delete(id)
	s.WaitGone(id, 60*time.Second)
	s.waitClean(node)
	s.Microversion = "2.35"
	if code := s.Call("DELETE", "/v2.1/os-volumes/"+vol, nil, nil); code != http.StatusAccepted {
		t.Errorf("os-volumes delete: %d, want 202", code)
	}
	s.WaitFor("volume deleted", 30*time.Second, func() bool { return s.volumeStatus(vol) == "gone" })
}

// TestCinder runs the package's cases on one set of services (Cinder's
// start is most of the cost).
func TestCinder(t *testing.T) {
	w := startWorld(t)
	t.Run("volumes", func(t *testing.T) { cinderVolumes(t, w) })
	t.Run("faults", func(t *testing.T) { cinderFaults(t, w) })
	t.Run("attach after boot", func(t *testing.T) { cinderAttach(t, w) })
	t.Run("proxy and call-back", func(t *testing.T) { cinderProxyAndCallback(t, w) })
	t.Run("nova proxies", func(t *testing.T) { cinderNovaProxies(t, w) })
	t.Run("cinder away", func(t *testing.T) { cinderAway(t, w) })
	t.Run("link faults", func(t *testing.T) { cinderLinkFaults(t, w) })
}
