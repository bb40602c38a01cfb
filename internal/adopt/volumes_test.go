package adopt_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/cindersim"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/store"
)

// cinderSim is a simulated Cinder and project p's client of it.
func cinderSim(t *testing.T) *cinder.Client {
	t.Helper()
	sim := cindersim.New(cindersim.Options{})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	sim.AddToken("member-p", cindersim.Identity{ProjectID: "p", Roles: []string{"member", "reader"}})
	c, err := cinder.New(context.Background(), cinder.Config{Endpoint: srv.URL + "/v3", User: cinder.StaticToken("member-p")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// attach attaches volume v to server as Nova does (attachment, connector,
// os-complete).
func attach(t *testing.T, c *cinder.Client, v, server string) string {
	t.Helper()
	ctx := context.Background()
	a, err := c.CreateAttachment(ctx, v, server, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateAttachment(ctx, a.ID, cinder.Connector{Initiator: "iqn.2026-12.test:" + server, Host: "nova"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CompleteAttachment(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// TestAdoptVolumes: with Cinder, a node's volume targets whose volumes
// Cinder shows attached to the instance become the server's volumes —
// in-use on its node, with the attachment the delete removes, listed by
// the dry run — and a target whose volume has no attachment of the
// instance refuses the instance, nothing written.
func TestAdoptVolumes(t *testing.T) {
	c := cinderSim(t)
	ctx := context.Background()
	vols := make([]string, 3)
	for i := range vols {
		v, err := c.CreateVolume(ctx, cinder.VolumeSpec{SizeGB: 1, Name: fmt.Sprint("vol-", i)})
		if err != nil {
			t.Fatal(err)
		}
		vols[i] = v.ID
	}
	i := 0
	// Node 0 carries vols 0 (boot) and 1 (data), node 1 vol 2.
	a, st, ids, _ := worldDeps(t, 2, func(ic *ironic.Client, node string) {
		mine := [][]string{{vols[0], vols[1]}, {vols[2]}}[i]
		for b, v := range mine {
			if _, err := ic.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: node, VolumeType: "iscsi", VolumeID: v, BootIndex: b}); err != nil {
				t.Fatal(err)
			}
		}
		i++
	}, func(d *adopt.Deps) { d.Cinder = c })
	att0, att1 := attach(t, c, vols[0], ids[0]), attach(t, c, vols[1], ids[0])
	// vol 2 is not attached to instance 1: Cinder shows it available.

	rep, err := a.FromIronic(ctx, adopt.Options{DryRun: true})
	if err != nil || len(rep.Adopted) != 1 || len(rep.Refused) != 1 {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	if got := strings.Join(rep.Adopted[0].Volumes, "\n"); !strings.Contains(got, vols[0]+" boot_index 0 attachment "+att0) ||
		!strings.Contains(got, vols[1]+" boot_index 1 attachment "+att1) {
		t.Errorf("the dry run's volumes:\n%s", got)
	}
	if want := "volume " + vols[2] + ": Cinder shows it available, not in-use"; rep.Refused[0].Reason != want {
		t.Errorf("refused: %q, want %q", rep.Refused[0].Reason, want)
	}
	if _, err := st.GetVolume(ctx, vols[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the dry run wrote volume %s: %v", vols[0], err)
	}

	if rep, err = a.FromIronic(ctx, adopt.Options{}); err != nil || len(rep.Adopted) != 1 {
		t.Fatalf("adopt: %+v %v", rep, err)
	}
	s, err := st.GetServer(ctx, ids[0])
	if err != nil || !s.VolumesOnNode || len(s.Spec.Volumes) != 2 {
		t.Fatalf("adopted %s: %+v %v", ids[0], s, err)
	}
	held, err := st.ServerVolumes(ctx, ids[0])
	if err != nil || len(held) != 2 {
		t.Fatalf("volumes of %s: %+v %v", ids[0], held, err)
	}
	for j, want := range []struct {
		id, att string
		boot    int
	}{{vols[0], att0, 0}, {vols[1], att1, -1}} {
		v := held[j]
		if v.ID != want.id || v.Status != store.VolumeInUse || v.NodeID != s.NodeID || v.AttachmentID != want.att ||
			v.AttachmentNode != s.NodeID || v.BootIndex != want.boot || v.DeleteOnTermination || v.ProjectID != "p" {
			t.Errorf("volume %d: %+v", j, v)
		}
	}
	if _, err := st.GetServer(ctx, ids[1]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused instance was written: %v", err)
	}
	if rep, err = a.FromIronic(ctx, adopt.Options{}); err != nil || len(rep.Adopted) != 0 || len(rep.Already) != 1 {
		t.Fatalf("second run: %+v %v", rep, err)
	}
}
