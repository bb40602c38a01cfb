package reconciler_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/store"
)

// recordOp records a day-2 operation as the API does; an attach also
// lists the volume (and the store holds it in the same write).
func recordOp(t *testing.T, st store.Store, id string, k lifecycle.OpKind, vol string, now time.Time) {
	t.Helper()
	_, err := st.UpdateServer(context.Background(), id, &store.ActionRecord{RequestID: "req-" + string(k), Action: string(k), StartTime: now},
		func(s *lifecycle.Server) error {
			if c := lifecycle.Allowed(s, k, false); c != nil {
				return c
			}
			if k == lifecycle.OpAttachVolume {
				s.Spec.Volumes = append(s.Spec.Volumes, lifecycle.VolumeRef{ID: vol, BootIndex: -1})
			}
			s.Op = lifecycle.Op{Kind: k, RequestID: "req-" + string(k), At: now, VolumeID: vol}
			s.OpGen++
			s.UpdatedAt = now
			return nil
		})
	if err != nil {
		t.Fatalf("%s of %s: %v", k, vol, err)
	}
}

// cinderVolume makes a volume in the simulated Cinder and its registry row.
func (c *cinderRig) cinderVolume() string {
	c.t.Helper()
	ctx := context.Background()
	v, err := c.member.CreateVolume(ctx, cinder.VolumeSpec{SizeGB: 1, Name: "late"})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.st.CreateVolume(ctx, store.Volume{ID: v.ID, Name: v.Name, SizeGB: 1, ProjectID: "p"}); err != nil {
		c.t.Fatal(err)
	}
	return v.ID
}

// TestCinderAttachAfterBuild: a volume attached to an ACTIVE server is
// in-use with a target of its own boot index; detached from the stopped
// server, it is available with its attachment and target gone.
func TestCinderAttachAfterBuild(t *testing.T) {
	c := newCinderRig(t, 1)
	id, _ := c.build(false)
	c.settle(id)
	late := c.cinderVolume()
	c.cs.Calls() // reset
	recordOp(t, c.st, id, lifecycle.OpAttachVolume, late, c.clk.Now())
	if s := c.settle(id); s.Phase != lifecycle.PhaseActive || s.OpPending() {
		t.Fatalf("after the attach: phase %s, op pending %v", s.Phase, s.OpPending())
	}
	t.Logf("simulated Cinder calls of an attach: %v", c.cs.Calls())
	if a, tg := c.counts(); a != 2 || tg != 2 || c.volumeStatus(late) != "in-use" {
		t.Fatalf("attached: %d attachments, %d targets, volume %s", a, tg, c.volumeStatus(late))
	}
	tgs, _ := c.ic.ListVolumeTargets(context.Background(), c.server(id).NodeID)
	if len(tgs) != 2 || tgs[0].BootIndex == tgs[1].BootIndex {
		t.Errorf("targets %+v: want two of distinct boot indexes", tgs)
	}
	recordOp(t, c.st, id, lifecycle.OpStop, "", c.clk.Now())
	c.settle(id)
	recordOp(t, c.st, id, lifecycle.OpDetachVolume, late, c.clk.Now())
	if s := c.settle(id); s.Phase != lifecycle.PhaseStopped || s.OpPending() {
		t.Fatalf("after the detach: phase %s", s.Phase)
	}
	t.Logf("simulated Cinder calls of a stop and a detach: %v", c.cs.Calls())
	if a, tg := c.counts(); a != 1 || tg != 1 || c.volumeStatus(late) != "available" {
		t.Fatalf("detached: %d attachments, %d targets, volume %s", a, tg, c.volumeStatus(late))
	}
	if vols, _ := c.st.ServerVolumes(context.Background(), id); len(vols) != 1 {
		t.Errorf("the server still holds %d volumes, want 1", len(vols))
	}
}

// TestCinderAttachRefusedIsUndone: an attach Cinder refuses (the volume
// attached elsewhere meanwhile) ends in error with nothing of it left.
func TestCinderAttachRefusedIsUndone(t *testing.T) {
	c := newCinderRig(t, 1)
	id, _ := c.build(false)
	c.settle(id)
	late := c.cinderVolume()
	if _, err := c.member.CreateAttachment(context.Background(), late, "another-server", nil); err != nil {
		t.Fatal(err)
	}
	a0, t0 := c.counts()
	recordOp(t, c.st, id, lifecycle.OpAttachVolume, late, c.clk.Now())
	if s := c.settle(id); s.Phase != lifecycle.PhaseActive || s.OpPending() {
		t.Fatalf("after the refused attach: phase %s", s.Phase)
	}
	if a, tg := c.counts(); a != a0 || tg != t0 {
		t.Errorf("refused attach: attachments %d -> %d, targets %d -> %d", a0, a, t0, tg)
	}
	if vols, _ := c.st.ServerVolumes(context.Background(), id); len(vols) != 1 {
		t.Errorf("the server holds %d volumes after the refused attach, want 1", len(vols))
	}
}

// TestCinderAttachFaultAtEveryStep: the user's delete at every step of an
// attach after the build; the attachments and targets after are those
// before the build (none), the volume available.
func TestCinderAttachFaultAtEveryStep(t *testing.T) {
	probe := newCinderRig(t, 1)
	pid, _ := probe.build(false)
	probe.settle(pid)
	late := probe.cinderVolume()
	probe.points = nil
	recordOp(t, probe.st, pid, lifecycle.OpAttachVolume, late, probe.clk.Now())
	probe.settle(pid)
	points := slices.Compact(slices.Clone(probe.points))
	if !slices.Contains(points, "after:cinder_attach_volume_create") {
		t.Fatalf("no crash point after the attach's Cinder create in %v", points)
	}
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			c := newCinderRig(t, 1)
			id, vol := c.build(false)
			c.settle(id)
			late := c.cinderVolume()
			c.onStep = func(p string) {
				if p == point {
					c.onStep = nil
					if err := c.st.RequestDelete(context.Background(), id, "req-del", c.clk.Now()); err != nil {
						t.Error(err)
					}
				}
			}
			recordOp(t, c.st, id, lifecycle.OpAttachVolume, late, c.clk.Now())
			c.settle(id)
			if s := c.server(id); s.Phase != lifecycle.PhaseDeleted {
				if err := c.st.RequestDelete(context.Background(), id, "req-del", c.clk.Now()); err != nil {
					t.Fatal(err)
				}
				c.settle(id)
			}
			if a, tg := c.counts(); a != 0 || tg != 0 || c.volumeStatus(late) != "available" || c.volumeStatus(vol) != "available" {
				t.Errorf("delete at %s: %d attachments, %d targets, volumes %s and %s", point, a, tg, c.volumeStatus(vol), c.volumeStatus(late))
			}
		})
	}
}

// TestEmbeddedAttachAfterBuild: with the embedded registry the attach's
// target carries the registry's description and the volume shows in-use;
// the detach from ACTIVE powers the node off, removes the target, frees the
// volume and powers the node on again (ACTIVE); attached again, the detach
// from SHUTOFF removes the target and frees the volume, the node left off.
func TestEmbeddedAttachAfterBuild(t *testing.T) {
	r := newRig(t, 1, 10*time.Millisecond, reconciler.Config{})
	id := r.create(1)[0]
	r.settle(id)
	ctx := context.Background()
	v := store.NewVolume("6a3e7c1e-1d2b-4c5e-8f90-0a1b2c3d4e5f", "late", 10, "", r.clk.Now())
	if err := r.st.CreateVolume(ctx, v); err != nil {
		t.Fatal(err)
	}
	recordOp(t, r.st, id, lifecycle.OpAttachVolume, v.ID, r.clk.Now())
	if got, _ := r.st.GetVolume(ctx, v.ID); got.Status != store.VolumeReserved || got.ServerID != id {
		t.Errorf("recorded attach: volume %s held by %q, want reserved", got.Status, got.ServerID)
	}
	if s := r.settle(id); s.Phase != lifecycle.PhaseActive || s.OpPending() {
		t.Fatalf("after the attach: %s", s.Phase)
	}
	node := r.server(id).NodeID
	ic, err := ironic.New(ironic.Config{URL: "http://ironic.test", HTTPClient: &http.Client{Transport: transport{r}}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	targets := func() []ironic.VolumeTarget {
		tgs, err := ic.ListVolumeTargets(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		return tgs
	}
	tgs := targets()
	if got, _ := r.st.GetVolume(ctx, v.ID); got.Status != store.VolumeInUse || got.NodeID != node || len(tgs) != 1 ||
		tgs[0].Properties["target_iqn"] != v.TargetIQN {
		t.Fatalf("attached: volume %s on %q, %d targets", got.Status, got.NodeID, len(tgs))
	}
	recordOp(t, r.st, id, lifecycle.OpDetachVolume, v.ID, r.clk.Now())
	if s := r.settle(id); s.Phase != lifecycle.PhaseActive || s.OpPending() || s.PowerSeen != lifecycle.PowerOn {
		t.Fatalf("after the detach from ACTIVE: %s, power %q", s.Phase, s.PowerSeen)
	}
	if n, err := ic.GetNode(ctx, node); err != nil || n.PowerState != "power on" {
		t.Fatalf("node after the detach from ACTIVE: %q %v", n.PowerState, err)
	}
	if got, _ := r.st.GetVolume(ctx, v.ID); got.Status != store.VolumeAvailable || got.ServerID != "" || len(targets()) != 0 {
		t.Fatalf("detached from ACTIVE: volume %s held by %q, %d targets", got.Status, got.ServerID, len(targets()))
	}
	recordOp(t, r.st, id, lifecycle.OpAttachVolume, v.ID, r.clk.Now())
	r.settle(id)
	recordOp(t, r.st, id, lifecycle.OpStop, "", r.clk.Now())
	r.settle(id)
	recordOp(t, r.st, id, lifecycle.OpDetachVolume, v.ID, r.clk.Now())
	if s := r.settle(id); s.Phase != lifecycle.PhaseStopped || s.OpPending() {
		t.Fatalf("after the detach: %s", s.Phase)
	}
	if got, _ := r.st.GetVolume(ctx, v.ID); got.Status != store.VolumeAvailable || got.ServerID != "" || len(targets()) != 0 {
		t.Fatalf("detached: volume %s held by %q, %d targets", got.Status, got.ServerID, len(targets()))
	}
}
