package ironic_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// BenchmarkList measures the per-tick bulk view (ListAssociated, without
// traits) and the inventory (ListNodes, with traits) over the same N nodes,
// all associated (INGOT_BENCH_NODES, default 200), at the default page size.
//
//	go test ./internal/ironic -run '^$' -bench List -benchtime 20x   # on the real Ironic when installed
func BenchmarkList(b *testing.B) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("INGOT_BENCH_NODES")); err == nil && v > 0 {
		n = v
	}
	env := ironictest.Start(b, ironictest.Options{})
	ids := env.EnrollNodes(b, n, ironictest.NodeSpec{Name: "bench"})
	cnt := &counter{}
	c, err := newBenchClient(env.URL, cnt)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range ids {
		if _, err := c.Reserve(ctx, id, uuid.NewString(), nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		list func(context.Context) ([]ironic.Node, error)
	}{{"Associated", c.ListAssociated}, {"Nodes", c.ListNodes}} {
		b.Run(bc.name, func(b *testing.B) {
			cnt.take()
			for b.Loop() {
				nodes, err := bc.list(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if len(nodes) != n {
					b.Fatalf("%d nodes, want %d", len(nodes), n)
				}
			}
			b.ReportMetric(float64(cnt.take()["node.list"])/float64(b.N), "requests/op")
		})
	}
}
