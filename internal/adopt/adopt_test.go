package adopt_test

import (
	"context"
	"errors"
	"fmt"

	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

const src = "http://images.example/debian-12.qcow2"

// world is the simulator with n nodes deployed as another service would
// (its own instance ids, instance_info), and a fresh SQLite store.
func world(t *testing.T, n int, flavors ...store.Flavor) (*adopt.Adopter, store.Store, []string) {
	t.Helper()
	a, st, ids, _ := worldWith(t, n, nil, flavors...)
	return a, st, ids
}

// worldWith is world with before run on each node before its deploy.
func worldWith(t *testing.T, n int, before func(ic *ironic.Client, node string), flavors ...store.Flavor) (*adopt.Adopter, store.Store, []string, []string) {
	t.Helper()
	return worldDeps(t, n, before, nil, flavors...)
}

// worldDeps is worldWith with the adopter's dependencies changed by edit.
func worldDeps(t *testing.T, n int, before func(ic *ironic.Client, node string), edit func(*adopt.Deps), flavors ...store.Flavor) (*adopt.Adopter, store.Store, []string, []string) {
	t.Helper()
	env := ironictest.StartSim(t, ironictest.SimOptions{})
	nodes := env.Sim.AddNodes(n, ironicsim.NodeSpec{ResourceClass: "rc"})
	ic, err := ironic.New(ironic.Config{URL: env.URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ids := make([]string, n)
	for i, node := range nodes {
		ids[i] = fmt.Sprintf("f0000000-0000-4000-8000-%012d", i)
		if before != nil {
			before(ic, node)
		}
		if _, err := ic.Reserve(ctx, node, ids[i], nil); err != nil {
			t.Fatal(err)
		}
		if err := ic.Deploy(ctx, node, ironic.DeployRequest{InstanceInfo: map[string]any{
			"image_source": src, "root_gb": "10", "display_name": "vm-" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if len(flavors) == 0 {
		flavors = []store.Flavor{{ID: "bm", Name: "bm", ResourceClass: "rc", DiskGB: 10, IsPublic: true}}
	}
	for _, f := range flavors {
		if err := st.CreateFlavor(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	d := adopt.Deps{Store: st, Ironic: ic, DefaultProject: "p",
		Image: func(_ context.Context, s string) (string, error) {
			if s == src {
				return "img", nil
			}
			return "", adopt.ErrImageNotFound
		}}
	if edit != nil {
		edit(&d)
	}
	return adopt.New(d), st, ids, nodes
}

// TestAdoptThousand: 1,000 simulated instances adopted (the time is
// printed), a second run adopts none.
func TestAdoptThousand(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 50
	}
	a, st, ids := world(t, n)
	ctx := context.Background()
	start := time.Now()
	rep, err := a.FromIronic(ctx, adopt.Options{DryRun: true})
	if err != nil || len(rep.Adopted) != n {
		t.Fatalf("dry run: %d would adopt, %v", len(rep.Adopted), err)
	}
	dry := time.Since(start)
	start = time.Now()
	rep, err = a.FromIronic(ctx, adopt.Options{})
	if err != nil || len(rep.Adopted) != n || len(rep.Refused) != 0 {
		t.Fatalf("adopt: %d adopted, %d refused, %v", len(rep.Adopted), len(rep.Refused), err)
	}
	t.Logf("%d instances: dry run %s, adoption %s (%s per instance)", n, dry.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), (time.Since(start) / time.Duration(n)).Round(time.Microsecond))
	s, err := st.GetServer(ctx, ids[n-1])
	if err != nil || !s.Phase.Up() || s.Desired != lifecycle.DesiredActive || s.Spec.FlavorID != "bm" ||
		s.Spec.ImageID != "img" || s.Name != "vm-"+strconv.Itoa(n-1) || s.ProjectID != "p" || s.Spec.RootGB != 10 {
		t.Fatalf("adopted %s: %+v %v", ids[n-1], s, err)
	}
	rep, err = a.FromIronic(ctx, adopt.Options{})
	if err != nil || len(rep.Adopted) != 0 || len(rep.Already) != n {
		t.Fatalf("second run: %d adopted, %d already, %v", len(rep.Adopted), len(rep.Already), err)
	}
}

// TestAdoptAmbiguousFlavor: two flavors of the node's class with other
// disks than root_gb are refused unless --flavor chooses; one with the
// instance's root_gb is chosen.
func TestAdoptAmbiguousFlavor(t *testing.T) {
	a, _, _ := world(t, 1, store.Flavor{ID: "a", Name: "a", ResourceClass: "rc", DiskGB: 20},
		store.Flavor{ID: "b", Name: "b", ResourceClass: "rc", DiskGB: 40})
	ctx := context.Background()
	rep, err := a.FromIronic(ctx, adopt.Options{DryRun: true})
	if err != nil || len(rep.Refused) != 1 || rep.Refused[0].Reason != `ambiguous flavor: a, b all have resource class "rc"; choose one with --flavor` {
		t.Fatalf("%+v %v", rep, err)
	}
	rep, err = a.FromIronic(ctx, adopt.Options{DryRun: true, Flavor: "b"})
	if err != nil || len(rep.Adopted) != 1 || rep.Adopted[0].Flavor != "b" {
		t.Fatalf("--flavor b: %+v %v", rep, err)
	}
	a, _, _ = world(t, 1, store.Flavor{ID: "a", Name: "a", ResourceClass: "rc", DiskGB: 20},
		store.Flavor{ID: "c", Name: "c", ResourceClass: "rc", DiskGB: 10})
	rep, err = a.FromIronic(ctx, adopt.Options{DryRun: true})
	if err != nil || len(rep.Adopted) != 1 || rep.Adopted[0].Flavor != "c" {
		t.Fatalf("root_gb 10: %+v %v", rep, err)
	}
}

// TestAdoptRefusesVolumeTargets: a node with volume targets is refused
// (ingot would not release volumes it never recorded), nothing written.
func TestAdoptRefusesVolumeTargets(t *testing.T) {
	a, st, ids, _ := worldWith(t, 1, func(ic *ironic.Client, node string) {
		if _, err := ic.CreateVolumeTarget(context.Background(), ironic.VolumeTarget{NodeID: node, VolumeType: "iscsi",
			VolumeID: "vol-1", BootIndex: 1}); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()
	rep, err := a.FromIronic(ctx, adopt.Options{})
	if err != nil || len(rep.Refused) != 1 || rep.Refused[0].Reason != "1 volume targets on the node, 0 volumes attached: adopting volumes needs volume.backend: cinder" {
		t.Fatalf("%+v %v", rep, err)
	}
	if _, err := st.GetServer(ctx, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("refused server written: %v", err)
	}
}
