package realcinder

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// TestCinderVolumes: with volume.backend: cinder a build attaches each
// volume as Nova does for bare metal (a Cinder attachment with the node's
// connector, an Ironic target from its connection info, os-complete) and
// a delete undoes all of it.
func TestCinderVolumes(t *testing.T) {
	w := startWorld(t)

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
		tg := w.ir.ListVolumeTargets(t, node)
		if len(tg) != 1 || tg[0]["volume_id"] != vol || tg[0]["volume_type"] != "iscsi" {
			t.Fatalf("targets on %s: %v", node, tg)
		}
		props, _ := tg[0]["properties"].(map[string]any)
		if props["target_iqn"] != "iqn.2010-10.org.openstack:volume-"+vol || props["target_portal"] != "127.0.0.1:3260" ||
			props["auth_method"] != "CHAP" {
			t.Errorf("target properties are not Cinder's connection info: %v", props)
		}
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
