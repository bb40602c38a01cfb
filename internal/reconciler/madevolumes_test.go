package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// buildMade records a server booting from a volume made from an image
// (delete_on_termination dot0) with a blank data volume made beside it
// (dot1), as the API records image→volume and blank→volume block devices.
func (c *cinderRig) buildMade(dot0, dot1 bool) string {
	c.t.Helper()
	c.cs.AddImage("11111111-2222-4333-8444-555555555555")
	now := c.clk.Now()
	id := fmt.Sprintf("00000000-0000-4000-8d1d-%012d", c.n)
	c.n++
	s := &lifecycle.Server{
		ID: id, Name: "m", ProjectID: "p", UserID: "u",
		Spec: lifecycle.Spec{FlavorID: "f", ResourceClass: "bm", Networks: []string{c.nets[0].ID},
			Volumes: []lifecycle.VolumeRef{
				{BootIndex: 0, Source: lifecycle.SourceImage, ImageID: "11111111-2222-4333-8444-555555555555", SizeGB: 2, DeleteOnTermination: dot0},
				{BootIndex: -1, Source: lifecycle.SourceBlank, SizeGB: 1, DeleteOnTermination: dot1, Tag: "data"}}},
		Desired: lifecycle.DesiredActive, Phase: lifecycle.PhasePending, VolumeToken: "member",
		CreatedAt: now, UpdatedAt: now, PhaseSince: now, Deadline: now.Add(time.Hour), CreateRequestID: "req-" + id,
	}
	if err := c.st.CreateServer(context.Background(), s); err != nil {
		c.t.Fatal(err)
	}
	return id
}

// named lists the member's volumes named for server id's block devices.
func (c *cinderRig) named(id string) map[int][]cinder.Volume {
	c.t.Helper()
	vs, err := c.member.ListVolumes(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[int][]cinder.Volume{}
	for _, v := range vs {
		for i := range 2 {
			if v.Name == lifecycle.VolumeName(id, i) {
				out[i] = append(out[i], v)
			}
		}
	}
	return out
}

// TestCinderMadeVolumes: a build makes its image→volume boot disk and its
// blank data disk in Cinder (in the user's project, under their names),
// waits for them, attaches them; the delete deletes the one with
// delete_on_termination and leaves the other available and detached.
func TestCinderMadeVolumes(t *testing.T) {
	c := newCinderRig(t, 1)
	c.cs.SetCreating(3, "available")
	id := c.buildMade(true, false)
	s := c.settle(id)
	if s.Phase != lifecycle.PhaseActive {
		t.Fatalf("phase %s, fault %+v", s.Phase, s.Fault)
	}
	made := c.named(id)
	if len(made[0]) != 1 || len(made[1]) != 1 || made[0][0].Status != "in-use" || made[1][0].Status != "in-use" || !made[0][0].Bootable {
		t.Fatalf("made volumes: %+v", made)
	}
	if got := s.Volumes()[0]; got.ID != made[0][0].ID || !got.Ready || s.VolumeToken != "" {
		t.Errorf("recorded %+v, token kept %v", s.Volumes(), s.VolumeToken != "")
	}
	if a, tg := c.counts(); a != 2 || tg != 2 {
		t.Fatalf("active: %d attachments, %d targets", a, tg)
	}
	t.Logf("simulated Cinder calls of a build making 2 volumes: %v", c.cs.Calls())
	if err := c.st.RequestDelete(context.Background(), id, "req-del", c.clk.Now()); err != nil {
		t.Fatal(err)
	}
	c.settle(id)
	made = c.named(id)
	if a, tg := c.counts(); a != 0 || tg != 0 || len(made[0]) != 0 || len(made[1]) != 1 || made[1][0].Status != "available" {
		t.Fatalf("deleted: %d attachments, %d targets, made volumes %+v", a, tg, made)
	}
}

// TestCinderMadeFoundByName: a volume the first create made whose answer
// never came back (its name is the entry's) is found and used, not made
// again.
func TestCinderMadeFoundByName(t *testing.T) {
	c := newCinderRig(t, 1)
	id := fmt.Sprintf("00000000-0000-4000-8d1d-%012d", c.n)
	c.cs.AddImage("11111111-2222-4333-8444-555555555555")
	lost, err := c.member.CreateVolume(context.Background(), cinder.VolumeSpec{SizeGB: 2, Name: lifecycle.VolumeName(id, 0),
		ImageID: "11111111-2222-4333-8444-555555555555"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.buildMade(true, true); got != id {
		t.Fatalf("server id %s, want %s", got, id)
	}
	if s := c.settle(id); s.Phase != lifecycle.PhaseActive || s.Volumes()[0].ID != lost.ID {
		t.Fatalf("phase %s, boot volume %s, want the one made before (%s)", s.Phase, s.Volumes()[0].ID, lost.ID)
	}
	if made := c.named(id); len(made[0]) != 1 || len(made[1]) != 1 {
		t.Fatalf("made volumes: %+v", made)
	}
}

// TestCinderMadeVolumeError: a made volume that ends in error ends the
// build in ERROR with Nova's words; the failed build deletes the made
// volumes with delete_on_termination (the boot volume, made and held
// already) and leaves the others (the one in error).
func TestCinderMadeVolumeError(t *testing.T) {
	c := newCinderRig(t, 1)
	c.cs.SetCreating(2, "available")
	made := 0
	c.onStep = func(p string) {
		if p == "after:"+reconciler.PointVolumeMade {
			if made++; made == 1 {
				c.cs.SetCreating(2, "error") // the second, blank, fails
			}
		}
	}
	id := c.buildMade(true, false)
	s := c.settle(id)
	if s.Phase != lifecycle.PhaseError || s.Fault == nil || s.Fault.Reason != lifecycle.ReasonVolumeCreateFailed ||
		!strings.Contains(s.Fault.Message, "did not finish being created") || !strings.HasSuffix(s.Fault.Message, "And its status is error.") {
		t.Fatalf("phase %s, fault %+v", s.Phase, s.Fault)
	}
	vols := c.named(id)
	if len(vols[0]) != 0 || len(vols[1]) != 1 || vols[1][0].Status != "error" {
		t.Fatalf("after the failed build: %+v", vols)
	}
	if a, tg := c.counts(); a != 0 || tg != 0 {
		t.Fatalf("%d attachments, %d targets", a, tg)
	}
}

// TestCinderMadeFaultAtEveryStep: at every step boundary of a build that
// makes its volumes, a user delete, the node deleted or torn down out of
// band; once deleted, no attachment or target is left, the volume with
// delete_on_termination is gone, the other (if it was made) available,
// and never two volumes for one block device.
func TestCinderMadeFaultAtEveryStep(t *testing.T) {
	learn := newCinderRig(t, 1)
	learn.cs.SetCreating(2, "available")
	learn.settle(learn.buildMade(true, false))
	points := learn.points
	faults := buildFaults()
	for name, fault := range faults {
		for i, p := range points {
			c := newCinderRig(t, 2)
			c.cs.SetCreating(2, "available")
			id := c.buildMade(true, false)
			n := 0
			c.onStep = func(point string) {
				if n++; n == i+1 {
					fault(c, id)
				}
			}
			c.settle(id)
			c.onStep = nil
			if err := c.st.RequestDelete(context.Background(), id, "req-del", c.clk.Now()); err != nil && c.server(id).Phase != lifecycle.PhaseDeleted {
				t.Fatal(err)
			}
			c.settle(id)
			made := c.named(id)
			a, tg := c.counts()
			// The simulated Cinder finishes a create only when it is read:
			// one nobody reads again may show creating (the real one
			// finishes on its own).
			if a != 0 || tg != 0 || len(made[0]) != 0 || len(made[1]) > 1 || (len(made[1]) == 1 && made[1][0].Status != "available" && made[1][0].Status != "creating") {
				t.Errorf("%s at %s (step %d): %d attachments, %d targets, made volumes %+v", name, p, i, a, tg, made)
			}
		}
	}
	t.Logf("%d step boundaries × %d faults", len(points), len(faults))
}
