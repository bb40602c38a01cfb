package realcinder

import (
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// hook is a step hook set after the app is built (the stack's URL is known
// only then).
type hook struct {
	mu sync.Mutex
	f  func(point string)
}

func (h *hook) step(p string) {
	h.mu.Lock()
	f := h.f
	h.mu.Unlock()
	if f != nil {
		f(p)
	}
}

func (h *hook) set(f func(string)) { h.mu.Lock(); h.f = f; h.mu.Unlock() }

// pauseAt holds the reconciler at point the first time it is reached:
// reached is closed then, and the step goes on once release is.
func (h *hook) pauseAt(point string) (reached, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.set(func(p string) {
		if p == point {
			once.Do(func() { close(reached); <-release })
		}
	})
	return reached, release
}

// createWithData creates a server from the image with one data volume.
func (s *stack) createWithData(name, vol string) string {
	s.t.Helper()
	return s.Create(map[string]any{"name": name, "flavorRef": "bm", "imageRef": s.app.Config.Images[0].ID,
		"networks":                []map[string]string{{"uuid": s.app.Config.Networks[0].ID}},
		"block_device_mapping_v2": []map[string]any{{"source_type": "volume", "destination_type": "volume", "uuid": vol}}})
}

// deleteNow sends the user's delete from a step hook (not the test's
// goroutine: no t.Fatal).
func (s *stack) deleteNow(id string) int {
	req, _ := http.NewRequest(http.MethodDelete, s.URL+"/v2.1/servers/"+id, nil)
	req.Header.Set("X-Auth-Token", s.tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// deleteAt creates a server with create and sends the user's delete the
// first time the build reaches point; it returns the server's id once the
// delete was answered 204.
func (s *stack) deleteAt(h *hook, point string, create func() string) string {
	s.t.Helper()
	var id string
	var mu sync.Mutex
	var once sync.Once
	deleted := make(chan int, 1)
	h.set(func(p string) {
		if p == point {
			once.Do(func() {
				mu.Lock()
				sid := id
				mu.Unlock()
				deleted <- s.deleteNow(sid)
			})
		}
	})
	mu.Lock()
	id = create()
	mu.Unlock()
	select {
	case code := <-deleted:
		if code != http.StatusNoContent {
			s.t.Fatalf("delete at %s: %d", point, code)
		}
	case <-time.After(90 * time.Second):
		s.t.Fatalf("the build never reached %s", point)
	}
	return id
}

// cinderFaults: the fault scenarios with Cinder volumes — a user's
// delete at each step of the build, the node deleted or torn down out of
// band during the deploy, and an ingot that stops between Cinder's
// attachment create and its record — leave as many attachments and
// targets as there were before (none), and the volume available.
func cinderFaults(t *testing.T, w *world) {
	equal := func(t *testing.T, s *stack, what string, before [2]int, nodes ...string) {
		t.Helper()
		s.waitClean(nodes...)
		a, tg := s.counts(nodes...)
		t.Logf("%s: attachments %d -> %d, targets %d -> %d", what, before[0], a, before[1], tg)
		if a != before[0] || tg != before[1] {
			t.Errorf("%s: attachments %d -> %d, targets %d -> %d", what, before[0], a, before[1], tg)
		}
	}

	for i, point := range []string{"before:attach_volumes", "after:cinder_attachment_create", "after:attach_volumes",
		"before:deploy", "after:deploy"} {
		t.Run("user delete at "+point, func(t *testing.T) {
			rc := "rc-d" + string(rune('a'+i))
			h := &hook{}
			s := w.ingotOn(t, rc, filepath.Join(t.TempDir(), "ingot.db"), app.Options{Step: h.step})
			node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: rc, ResourceClass: rc, Kind: ironictest.Fast})
			vol := s.volume("data", false)
			var before [2]int
			before[0], before[1] = s.counts(node)
			id := s.deleteAt(h, point, func() string { return s.createWithData(rc, vol) })
			s.WaitGone(id, 90*time.Second)
			equal(t, s, "user delete at "+point, before, node)
			if st := s.volumeStatus(vol); st != "available" {
				t.Errorf("volume %s", st)
			}
		})
	}

	t.Run("node deleted out of band during the deploy", func(t *testing.T) {
		s := w.ingot(t, "rc-o1")
		long := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "o1", ResourceClass: "rc-o1", Kind: ironictest.LongDeploy})
		vol := s.volume("data", false)
		var before [2]int
		before[0], before[1] = s.counts(long)
		id := s.createWithData("o1", vol)
		s.waitCallback(id, long)
		if a, tg := s.counts(long); a != 1 || tg != 1 {
			t.Fatalf("while deploying: %d attachments, %d targets, want 1 and 1", a, tg)
		}
		w.ir.OutOfBandDelete(t, long)
		s.WaitStatus(id, "ERROR", 60*time.Second)
		// The node took its targets; the attachment is ingot's to delete.
		s.WaitFor("no attachments", 30*time.Second, func() bool { a, _ := s.counts(); return a == 0 })
		if st := s.volumeStatus(vol); st != "available" {
			t.Errorf("volume %s", st)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
		a, _ := s.counts()
		t.Logf("node deleted out of band: attachments %d -> %d (the node's targets went with it)", before[0], a)
		if a != before[0] {
			t.Errorf("attachments %d -> %d", before[0], a)
		}
	})

	t.Run("node deleted out of band, rescheduled", func(t *testing.T) {
		s := w.ingot(t, "rc-o2")
		long := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "o2-long", ResourceClass: "rc-o2", Kind: ironictest.LongDeploy})
		vol := s.volume("data", false)
		id := s.createWithData("o2", vol)
		s.waitCallback(id, long)
		fast := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "o2-fast", ResourceClass: "rc-o2", Kind: ironictest.Fast})
		w.ir.OutOfBandDelete(t, long)
		s.WaitStatus(id, "ACTIVE", 90*time.Second)
		if a, tg := s.counts(fast); a != 1 || tg != 1 {
			t.Errorf("after the reschedule: %d attachments, %d targets on %s, want 1 and 1", a, tg, fast)
		}
		if st := s.volumeStatus(vol); st != "in-use" {
			t.Errorf("volume %s", st)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
		equal(t, s, "rescheduled", [2]int{0, 0}, fast)
	})

	t.Run("torn down out of band during the deploy", func(t *testing.T) {
		s := w.ingot(t, "rc-o3")
		long := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "o3", ResourceClass: "rc-o3", Kind: ironictest.LongDeploy})
		vol := s.volume("data", false)
		var before [2]int
		before[0], before[1] = s.counts(long)
		id := s.createWithData("o3", vol)
		s.waitCallback(id, long)
		w.ir.OutOfBandTeardown(t, long)
		s.WaitStatus(id, "ERROR", 60*time.Second)
		equal(t, s, "torn down out of band", before, long)
		if st := s.volumeStatus(vol); st != "available" {
			t.Errorf("volume %s", st)
		}
	})

	t.Run("stopped between Cinder's attachment create and its record", func(t *testing.T) {
		rc := "rc-k1"
		db := filepath.Join(t.TempDir(), "ingot.db")
		h := &hook{}
		s := w.ingotOn(t, rc, db, app.Options{Step: h.step})
		node := w.ir.EnrollNode(t, ironictest.NodeSpec{Name: "k1", ResourceClass: rc, Kind: ironictest.Fast})
		vol := s.volume("data", false)
		var before [2]int
		before[0], before[1] = s.counts(node)
		reached, release := h.pauseAt("after:cinder_attachment_create")
		id := s.createWithData("k1", vol)
		select {
		case <-reached:
		case <-time.After(90 * time.Second):
			t.Fatal("the build never made its attachment")
		}
		// The process dies here: nothing it writes from now on is kept.
		s.cancel()
		close(release)
		s.stop()
		if a, _ := s.counts(); a != before[0]+1 {
			t.Fatalf("%d attachments after the stop, want the unrecorded one (%d)", a, before[0]+1)
		}
		s2 := w.ingotOn(t, rc, db, app.Options{})
		s2.WaitStatus(id, "ACTIVE", 90*time.Second)
		if a, tg := s2.counts(node); a != before[0]+1 || tg != 1 {
			t.Errorf("after the restart: %d attachments, %d targets, want %d and 1 (the unrecorded one replaced, not kept beside)", a, tg, before[0]+1)
		}
		s2.Delete(id)
		s2.WaitGone(id, 60*time.Second)
		equal(t, s2, "stopped after the attachment create", before, node)
	})
}

// waitCallback waits until the server's node is node and in wait call-back.
func (s *stack) waitCallback(id, node string) {
	s.t.Helper()
	s.WaitFor("wait call-back", 60*time.Second, func() bool {
		r, err := s.app.Store.GetServer(s.t.Context(), id)
		if err != nil || r.NodeID != node || !r.DeployRequested {
			return false
		}
		return s.w.ir.GetNode(s.t, node)["provision_state"] == "wait call-back"
	})
}
