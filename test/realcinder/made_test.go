package realcinder

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// madeVolumes are member-a's Cinder volumes named for server id's block
// devices (name -> status).
func (s *stack) madeVolumes(id string) map[string]string {
	s.t.Helper()
	var out struct {
		Volumes []struct{ ID, Name, Status string } `json:"volumes"`
	}
	if st := s.w.cin.Do(s.t, s.tok, http.MethodGet, "/volumes/detail", nil, &out); st != http.StatusOK {
		s.t.Fatalf("list volumes: %d", st)
	}
	m := map[string]string{}
	for _, v := range out.Volumes {
		if strings.HasPrefix(v.Name, "ingot-"+id+"-bdm-") {
			if _, dup := m[v.Name]; dup {
				s.t.Errorf("two volumes named %s", v.Name)
			}
			m[v.Name] = v.Status
		}
	}
	return m
}

// TestCinderMadeVolumes: with Glance, Cinder, the real Ironic and
// Keystone, a build makes the volumes of image→volume and blank→volume
// block devices in Cinder (in the user's project, Cinder reading the
// user's private image), attaches them as any other, and its delete
// deletes those with delete_on_termination and leaves the others
// available and detached, with no attachment and no Ironic target left;
// a user delete while the volume is being made leaves nothing behind.
func TestCinderMadeVolumes(t *testing.T) {
	ks := keystonetest.Start(t)
	g := glancetest.Start(t, ks) // in the catalog before Cinder first logs in
	w := startWorldWith(t, cindertest.StartWith(t, ks))
	image := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "disk"})
	withGlance := func(c *config.Config) { c.Image.Backend = config.ImageGlance }

	t.Run("boot from a volume made of an image", func(t *testing.T) {
		s := w.ingotOn(t, "rc-m1", filepath.Join(t.TempDir(), "ingot.db"), app.Options{}, withGlance)
		node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "m1", ResourceClass: "rc-m1", Kind: ironictest.Fast})
		w.cinderCall.take()
		w.ironicCall.take()
		start := time.Now()
		id := s.Create(map[string]any{"name": "m1", "flavorRef": "bm",
			"networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}},
			"block_device_mapping_v2": []map[string]any{{"source_type": "image", "destination_type": "volume", "uuid": image,
				"volume_size": 1, "boot_index": 0}}})
		s.WaitStatus(id, "ACTIVE", 120*time.Second)
		t.Logf("create -> ACTIVE with one image→volume boot disk: %s", time.Since(start).Round(time.Millisecond))
		calls, n := w.cinderCall.take()
		t.Logf("Cinder calls for that build (%d): %s", n, calls)
		icalls, in := w.ironicCall.take()
		t.Logf("Ironic calls for that build (%d): %s", in, icalls)
		made := s.madeVolumes(id)
		if len(made) != 1 || made["ingot-"+id+"-bdm-0"] != "in-use" {
			t.Fatalf("made volumes: %v", made)
		}
		if a, tg := s.counts(node); a != 1 || tg != 1 {
			t.Errorf("%d attachments, %d targets, want 1 and 1", a, tg)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
		s.waitClean(node)
		if made := s.madeVolumes(id); made["ingot-"+id+"-bdm-0"] != "available" {
			t.Errorf("after the delete (delete_on_termination false): %v, want available", made)
		}
	})

	t.Run("image plus blank data volumes, delete_on_termination true and false", func(t *testing.T) {
		s := w.ingotOn(t, "rc-m2", filepath.Join(t.TempDir(), "ingot.db"), app.Options{}, withGlance)
		node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "m2", ResourceClass: "rc-m2", Kind: ironictest.Fast})
		id := s.Create(map[string]any{"name": "m2", "flavorRef": "bm", "imageRef": image,
			"networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}},
			"block_device_mapping_v2": []map[string]any{
				{"source_type": "image", "destination_type": "volume", "uuid": image, "volume_size": 1, "boot_index": -1,
					"delete_on_termination": true},
				{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "delete_on_termination": true},
				{"source_type": "blank", "destination_type": "volume", "volume_size": 1}}})
		s.WaitStatus(id, "ACTIVE", 120*time.Second)
		made := s.madeVolumes(id)
		if len(made) != 3 {
			t.Fatalf("made volumes: %v", made)
		}
		for name, st := range made {
			if st != "in-use" {
				t.Errorf("%s is %s, want in-use", name, st)
			}
		}
		if a, tg := s.counts(node); a != 3 || tg != 3 {
			t.Errorf("%d attachments, %d targets, want 3 and 3", a, tg)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
		s.waitClean(node)
		s.WaitFor("the volumes with delete_on_termination deleted", 60*time.Second, func() bool {
			m := s.madeVolumes(id)
			return len(m) == 1 && m["ingot-"+id+"-bdm-2"] == "available"
		})
	})

	for _, point := range []string{"after:volume-made", "after:create_volume"} {
		t.Run("user delete at "+point, func(t *testing.T) {
			h := &hook{}
			rc := "rc-m" + strings.ReplaceAll(point, ":", "-")
			s := w.ingotOn(t, rc, filepath.Join(t.TempDir(), "ingot.db"), app.Options{Step: h.step}, withGlance)
			node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: rc, ResourceClass: rc, Kind: ironictest.Fast})
			id := s.deleteAt(h, point, func() string {
				return s.Create(map[string]any{"name": rc, "flavorRef": "bm",
					"networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}},
					"block_device_mapping_v2": []map[string]any{{"source_type": "image", "destination_type": "volume", "uuid": image,
						"volume_size": 1, "boot_index": 0, "delete_on_termination": true}}})
			})
			s.WaitGone(id, 90*time.Second)
			s.waitClean(node)
			s.WaitFor("the volume being made deleted", 60*time.Second, func() bool { return len(s.madeVolumes(id)) == 0 })
		})
	}
}
