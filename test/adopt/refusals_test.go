package adopt

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/backend"
)

// TestAdoptRefusals: an instance whose node an ingot server holds, one
// whose id is an ingot server's on another node, and one whose resource
// class no flavor has are each refused with the reason, and nothing of
// them is written; the one adoptable instance beside them is adopted.
// databaseOf is the database config names.
func databaseOf(t *testing.T, config string) string {
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	return strings.TrimPrefix(first, "database: ")
}

func TestAdoptRefusals(t *testing.T) {
	ir := ironictest.StartReal(t, ironictest.RealOptions{})
	nodes := ir.EnrollNodes(t, 4, ironictest.NodeSpec{Name: "refuse", ResourceClass: rc, Kind: ironictest.Fast})
	odd := ir.EnrollNode(t, ironictest.NodeSpec{Name: "refuse-odd", ResourceClass: "rc-no-flavor", Kind: ironictest.Fast})
	const (
		heldID  = "c0000000-0000-4000-8000-000000000001" // its node is held by holder
		takenID = "c0000000-0000-4000-8000-000000000002" // an ingot server's id, on another node
		fine    = "c0000000-0000-4000-8000-000000000003"
		oddID   = "c0000000-0000-4000-8000-000000000004"
		holder  = "d0000000-0000-4000-8000-000000000001"
		novas   = "c0000000-0000-4000-8000-000000000005" // deployed by a nova-compute
	)
	deployByHand(t, ir, nodes[0], heldID, "held", imageURL, "", "", "")
	deployByHand(t, ir, nodes[1], takenID, "taken", imageURL, "", "", "")
	deployByHand(t, ir, nodes[2], fine, "fine", imageURL, "", "", "")
	deployByHand(t, ir, odd, oddID, "odd", imageURL, "", "", "")
	deployByHand(t, ir, nodes[3], novas, "novas", imageURL, "", "", "")
	// What Nova's Ironic driver leaves in instance_info besides.
	if r := ir.Request(t, "PATCH", "/v1/nodes/"+nodes[3], []map[string]any{{"op": "add", "path": "/instance_info/nova_host_id", "value": "compute-1"}}); r.Status != 200 {
		t.Fatalf("PATCH nova_host_id: %d %s", r.Status, r.Body)
	}

	config := writeConfig(t, ir.URL)
	db := databaseOf(t, config)
	ctx := context.Background()
	st, err := backend.Open(ctx, db, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, s := range []*lifecycle.Server{
		{ID: holder, Name: "holder", ProjectID: "ingot", Phase: lifecycle.PhaseActive, NodeID: nodes[0], CreatedAt: now},
		{ID: takenID, Name: "other", ProjectID: "ingot", Phase: lifecycle.PhaseActive, NodeID: "", CreatedAt: now},
	} {
		if err := st.CreateServer(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	bin := buildBinary(t)
	for _, args := range [][]string{{"--dry-run"}, nil} {
		out, ee := runAdopt(t, bin, config, nil, args...)
		if ee != nil {
			t.Fatalf("adopt %v: %v\n%s", args, ee, out)
		}
		t.Logf("adopt %v:\n%s", args, out)
		for id, why := range map[string]string{
			heldID:  "conflict: node " + nodes[0] + " is held by ingot server " + holder,
			takenID: "conflict: ingot server " + takenID + " exists",
			oddID:   `unknown flavor: none has resource class "rc-no-flavor"`,
			novas:   "Nova's compute service on compute-1 deployed it and may still act on the node: disable and stop it (openstack compute service set --disable compute-1 nova-compute;",
		} {
			if !regexp.MustCompile(`cannot adopt ` + id + ` .*: ` + regexp.QuoteMeta(why)).MatchString(out) {
				t.Errorf("adopt %v does not refuse %s with %q", args, id, why)
			}
		}
		if a, al, r := summary(t, out); a != 1 || al != 0 || r != 4 {
			t.Fatalf("adopt %v: %d/%d/%d, want 1 adopted, 0 already, 4 refused", args, a, al, r)
		}
	}
	// The operator's word that nova-compute is stopped adopts Nova's instance.
	out, ee := runAdopt(t, bin, config, nil, "--nova-stopped")
	if ee != nil {
		t.Fatalf("adopt --nova-stopped: %v\n%s", ee, out)
	}
	if a, al, r := summary(t, out); a != 1 || al != 1 || r != 3 || !strings.Contains(out, "adopted "+novas) {
		t.Fatalf("adopt --nova-stopped: %d/%d/%d, want %s adopted, 1 already, 3 refused\n%s", a, al, r, novas, out)
	}
	st, err = backend.Open(ctx, db, backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{heldID, oddID} {
		if _, err := st.GetServer(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("refused %s written: %v", id, err)
		}
	}
	if s, err := st.GetServer(ctx, takenID); err != nil || s.Name != "other" || s.Version != 1 {
		t.Errorf("ingot's server %s changed: %+v %v", takenID, s, err)
	}
	if s, err := st.GetServer(ctx, fine); err != nil || s.Phase != lifecycle.PhaseActive || s.NodeID != nodes[2] {
		t.Errorf("adopted %s: %+v %v", fine, s, err)
	}
}
