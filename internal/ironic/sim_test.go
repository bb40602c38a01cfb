package ironic_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// TestInjectedFaults drives each of the simulator's injected faults through
// the adapter over real HTTP and checks the typed error; the simulator always
// runs (the real Ironic cannot be made to fail on demand).
func TestInjectedFaults(t *testing.T) {
	env := ironictest.StartSim(t, ironictest.SimOptions{})
	id := env.EnrollNode(t, ironictest.NodeSpec{Name: "flt-a", ResourceClass: "flt"})
	ctx := context.Background()
	c, err := ironic.New(ironic.Config{URL: env.URL, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind    ironicsim.FaultKind
		latency time.Duration
		want    error
	}{
		{ironicsim.FaultServerError, 0, ironic.ErrUnavailable},
		{ironicsim.FaultUnavailable, 0, ironic.ErrUnavailable},
		{ironicsim.FaultNodeLocked, 0, ironic.ErrNodeLocked},
		{ironicsim.FaultDrop, 0, ironic.ErrUnavailable},
		{ironicsim.FaultLatency, time.Second, ironic.ErrUnavailable}, // over the 200 ms per-call timeout
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			if err := env.Sim.InjectFault(ironicsim.Fault{Method: "PATCH", Path: "/v1/nodes/*", Kind: tc.kind, Count: 1, Latency: tc.latency}); err != nil {
				t.Fatal(err)
			}
			_, err := c.Reserve(ctx, id, uuid.NewString(), nil)
			if !errors.Is(err, tc.want) || !ironic.IsTransient(err) {
				t.Fatalf("Reserve under %s = %v, want %v", tc.kind, err, tc.want)
			}
			// The fault was one-shot: the next call goes through (and the
			// reservation may only be ours once).
			if err := c.Unreserve(ctx, id); err != nil {
				t.Fatalf("Unreserve after the fault: %v", err)
			}
		})
	}

	t.Run("list page fails", func(t *testing.T) {
		if err := env.Sim.InjectFault(ironicsim.Fault{Method: "GET", Path: "/v1/nodes", Kind: ironicsim.Fault503, Count: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListNodes(ctx); !errors.Is(err, ironic.ErrUnavailable) {
			t.Fatalf("ListNodes under 503 = %v, want ErrUnavailable", err)
		}
		if nodes, err := c.ListNodes(ctx); err != nil || len(nodes) != 1 {
			t.Fatalf("ListNodes after the fault = %d nodes, %v", len(nodes), err)
		}
	})
}
