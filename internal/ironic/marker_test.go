package ironic_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// TestListSurvivesDeletedMarker: Ironic answers 404 for a page whose marker
// node was deleted since the previous page; the bulk view must restart the
// walk instead of failing the whole tick.
func TestListSurvivesDeletedMarker(t *testing.T) {
	var sim *ironicsim.Sim
	var once sync.Once
	deleted := ""
	env := ironictest.StartSim(t, ironictest.SimOptions{Middleware: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m := r.URL.Query().Get("marker"); m != "" && r.URL.Path == "/v1/nodes" {
				once.Do(func() {
					deleted = m
					if err := sim.DeleteOutOfBand(m); err != nil {
						t.Errorf("delete marker node: %v", err)
					}
				})
			}
			next.ServeHTTP(w, r)
		})
	}})
	sim = env.Sim
	ids := sim.AddNodes(5, ironicsim.NodeSpec{ResourceClass: "rc"})
	c, _ := newClient(t, env.URL, 2)
	ctx := context.Background()
	for i, id := range ids {
		if _, err := c.Reserve(ctx, id, instanceUUIDs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := c.ListAssociated(ctx)
	if err != nil {
		t.Fatalf("ListAssociated with a marker deleted mid-walk: %v", err)
	}
	if deleted == "" || len(nodes) != 4 {
		t.Fatalf("deleted %q, got %d nodes, want 4", deleted, len(nodes))
	}
	for _, n := range nodes {
		if n.UUID == deleted {
			t.Fatalf("deleted node listed")
		}
	}
}

var instanceUUIDs = []string{
	"10000000-0000-4000-8000-000000000001", "10000000-0000-4000-8000-000000000002",
	"10000000-0000-4000-8000-000000000003", "10000000-0000-4000-8000-000000000004",
	"10000000-0000-4000-8000-000000000005",
}
