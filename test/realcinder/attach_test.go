package realcinder

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// attach POSTs os-volume_attachments and returns the status code.
func (s *stack) attach(id, vol string) int {
	s.t.Helper()
	return s.Call("POST", "/v2.1/servers/"+id+"/os-volume_attachments",
		map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}, nil)
}

// waitOpDone waits until the server's pending operation is carried out.
func (s *stack) waitOpDone(id string) {
	s.t.Helper()
	s.WaitFor("operation done", 90*time.Second, func() bool {
		r, err := s.app.Store.GetServer(s.t.Context(), id)
		return err == nil && !r.OpPending()
	})
}

// stopServer stops the server (os-stop) and waits for SHUTOFF.
func (s *stack) stopServer(id string) {
	s.t.Helper()
	if code := s.Call("POST", "/v2.1/servers/"+id+"/action", map[string]any{"os-stop": nil}, nil); code != http.StatusAccepted {
		s.t.Fatalf("os-stop: %d", code)
	}
	s.waitOpDone(id)
	if srv, _ := s.Get(id); srv.Status != "SHUTOFF" {
		s.t.Fatalf("after os-stop: %s, want SHUTOFF", srv.Status)
	}
}

// bootedWithLateVolume is an ACTIVE server from the image on a new node
// of class rc, and an available volume to attach to it.
func (s *stack) bootedWithLateVolume(rc string) (id, node, vol string) {
	s.t.Helper()
	node = s.w.ir.EnrollNode(s.t, ironictest.NodeSpec{Name: rc, ResourceClass: rc, Kind: ironictest.Fast})
	id = s.Create(map[string]any{"name": rc, "flavorRef": "bm", "imageRef": s.app.Config.Images[0].ID,
		"networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}}})
	s.WaitStatus(id, "ACTIVE", 90*time.Second)
	return id, node, s.volume("late", false)
}

// cinderAttach: a volume attached to an ACTIVE server after its build is
// in-use at once, its Ironic target carrying Cinder's connection info;
// detached from the ACTIVE server (powered off for it and on again) and,
// attached again, from the stopped one, it is available again with no
// attachment and no target left; a server deleted with a volume attached
// after its build gives everything back; and an ingot stopped between
// Cinder's attachment create and its record leaves no second attachment.
func cinderAttach(t *testing.T, w *world) {
	t.Run("attach after boot, detach", func(t *testing.T) {
		s := w.ingot(t, "rc-a1")
		id, node, vol := s.bootedWithLateVolume("rc-a1")
		a0, t0 := s.counts(node)
		w.cinderCall.take()
		w.ironicCall.take()
		if code := s.attach(id, vol); code != http.StatusOK {
			t.Fatalf("attach: %d", code)
		}
		s.waitOpDone(id)
		calls, n := w.cinderCall.take()
		t.Logf("Cinder calls for an attach after boot (%d, the API's volume read included): %s", n, calls)
		icalls, in := w.ironicCall.take()
		t.Logf("Ironic calls meanwhile (%d, the reconciler's polls included): %s", in, icalls)
		if st := s.volumeStatus(vol); st != "in-use" {
			t.Errorf("volume after the attach: %s, want in-use", st)
		}
		if a, tg := s.counts(node); a != a0+1 || tg != t0+1 {
			t.Errorf("after the attach: %d attachments, %d targets, want %d and %d", a, tg, a0+1, t0+1)
		}
		s.wantCinderTarget(node, vol)
		var list struct {
			VolumeAttachments []struct{ VolumeID string } `json:"volumeAttachments"`
		}
		s.Call("GET", "/v2.1/servers/"+id+"/os-volume_attachments", nil, &list)
		if len(list.VolumeAttachments) != 1 || list.VolumeAttachments[0].VolumeID != vol {
			t.Errorf("os-volume_attachments: %+v", list)
		}
		if code := s.attach(id, vol); code != http.StatusBadRequest {
			t.Errorf("attach of a volume attached already: %d, want 400", code)
		}
		s.detachFromActive(id, node, vol, a0, t0)
		if code := s.attach(id, vol); code != http.StatusOK {
			t.Fatalf("attach again: %d", code)
		}
		s.waitOpDone(id)
		s.stopServer(id)
		w.cinderCall.take()
		w.ironicCall.take()
		if code := s.Call("DELETE", "/v2.1/servers/"+id+"/os-volume_attachments/"+vol, nil, nil); code != http.StatusAccepted {
			t.Fatalf("detach: %d", code)
		}
		s.waitOpDone(id)
		calls, n = w.cinderCall.take()
		t.Logf("Cinder calls for a detach (%d, the API's volume read included): %s", n, calls)
		icalls, in = w.ironicCall.take()
		t.Logf("Ironic calls meanwhile (%d, the reconciler's polls included): %s", in, icalls)
		if st := s.volumeStatus(vol); st != "available" {
			t.Errorf("volume after the detach: %s, want available", st)
		}
		if a, tg := s.counts(node); a != a0 || tg != t0 {
			t.Errorf("after the detach: %d attachments, %d targets, want %d and %d", a, tg, a0, t0)
		}
		s.Call("GET", "/v2.1/servers/"+id+"/os-volume_attachments", nil, &list)
		if len(list.VolumeAttachments) != 0 {
			t.Errorf("os-volume_attachments after the detach: %+v", list)
		}
		if srv, _ := s.Get(id); srv.Status != "SHUTOFF" {
			t.Errorf("server after the detach: %s, want SHUTOFF", srv.Status)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
	})

	t.Run("delete a server with a volume attached after boot", func(t *testing.T) {
		s := w.ingot(t, "rc-a2")
		id, node, vol := s.bootedWithLateVolume("rc-a2")
		a0, t0 := s.counts(node)
		if code := s.attach(id, vol); code != http.StatusOK {
			t.Fatalf("attach: %d", code)
		}
		s.waitOpDone(id)
		if a, tg := s.counts(node); a != a0+1 || tg != t0+1 {
			t.Fatalf("after the attach: %d attachments, %d targets", a, tg)
		}
		s.Delete(id)
		s.WaitGone(id, 60*time.Second)
		s.waitClean(node)
		a, tg := s.counts(node)
		t.Logf("delete with a volume attached after boot: attachments %d -> %d, targets %d -> %d", a0, a, t0, tg)
		if st := s.volumeStatus(vol); st != "available" {
			t.Errorf("volume after the delete: %s", st)
		}
	})

	t.Run("stopped between Cinder's attachment create and its record (attach after boot)", func(t *testing.T) {
		rc := "rc-a3"
		db := filepath.Join(t.TempDir(), "ingot.db")
		h := &hook{}
		s := w.ingotOn(t, rc, db, app.Options{Step: h.step})
		id, node, vol := s.bootedWithLateVolume(rc)
		a0, t0 := s.counts(node)
		reached, release := h.pauseAt("after:cinder_attach_volume_create")
		if code := s.attach(id, vol); code != http.StatusOK {
			t.Fatalf("attach: %d", code)
		}
		select {
		case <-reached:
		case <-time.After(90 * time.Second):
			t.Fatal("the attach never made its Cinder attachment")
		}
		s.cancel()
		close(release)
		s.stop()
		if a, _ := s.counts(); a != a0+1 {
			t.Fatalf("%d attachments after the stop, want the unrecorded one (%d)", a, a0+1)
		}
		s2 := w.ingotOn(t, rc, db, app.Options{})
		s2.waitOpDone(id)
		if a, tg := s2.counts(node); a != a0+1 || tg != t0+1 {
			t.Errorf("after the restart: %d attachments, %d targets, want %d and %d", a, tg, a0+1, t0+1)
		}
		if st := s2.volumeStatus(vol); st != "in-use" {
			t.Errorf("volume after the restart: %s, want in-use", st)
		}
		s2.Delete(id)
		s2.WaitGone(id, 60*time.Second)
		s2.waitClean(node)
		if st := s2.volumeStatus(vol); st != "available" {
			t.Errorf("volume after the delete: %s", st)
		}
	})
}

// detachFromActive detaches vol from the ACTIVE server id: Ironic removes
// a target only from a powered-off node, so the node is powered off for it
// and on again; the volume ends available with no attachment and no
// target, the node powered on and the server ACTIVE.
func (s *stack) detachFromActive(id, node, vol string, a0, t0 int) {
	s.t.Helper()
	s.w.cinderCall.take()
	s.w.ironicCall.take()
	start := time.Now()
	if code := s.Call("DELETE", "/v2.1/servers/"+id+"/os-volume_attachments/"+vol, nil, nil); code != http.StatusAccepted {
		s.t.Fatalf("detach from an ACTIVE server: %d, want 202", code)
	}
	if srv, _ := s.Get(id); srv.Status != "ACTIVE" {
		s.t.Errorf("server during the detach: %s, want ACTIVE", srv.Status)
	}
	s.waitOpDone(id)
	took := time.Since(start)
	calls, n := s.w.cinderCall.take()
	s.t.Logf("detach from ACTIVE took %s; Cinder calls (%d, the API's volume read included): %s", took.Round(time.Millisecond), n, calls)
	icalls, in := s.w.ironicCall.take()
	s.t.Logf("Ironic calls meanwhile (%d, the reconciler's polls included): %s", in, icalls)
	if st := s.volumeStatus(vol); st != "available" {
		s.t.Errorf("volume after the detach from ACTIVE: %s, want available", st)
	}
	if a, tg := s.counts(node); a != a0 || tg != t0 {
		s.t.Errorf("after the detach from ACTIVE: %d attachments, %d targets, want %d and %d", a, tg, a0, t0)
	}
	if p := s.w.ir.GetNode(s.t, node)["power_state"]; p != "power on" {
		s.t.Errorf("node after the detach from ACTIVE: %v, want power on", p)
	}
	if srv, _ := s.Get(id); srv.Status != "ACTIVE" {
		s.t.Errorf("server after the detach from ACTIVE: %s, want ACTIVE", srv.Status)
	}
}
