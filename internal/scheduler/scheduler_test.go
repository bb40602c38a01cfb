package scheduler

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// inventory is the real Ironic adapter over the simulator, with n available nodes.
type inventory struct {
	*ironic.Client
	sim *ironicsim.Sim
}

func newInventory(t *testing.T, n int) *inventory {
	t.Helper()
	sim := ironicsim.New(ironicsim.Options{Seed: 1})
	sim.AddNodes(n, ironicsim.NodeSpec{ResourceClass: "rc"})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	c, err := ironic.New(ironic.Config{URL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &inventory{Client: c, sim: sim}
}

func (i *inventory) lists() int { return i.sim.Counts()["GET /v1/nodes"] }

func server(i int, excluded ...string) *lifecycle.Server {
	return &lifecycle.Server{ID: fmt.Sprintf("server-%04d", i), Spec: lifecycle.Spec{ResourceClass: "rc"}, Excluded: excluded}
}

func TestPickSpreadsAndClaims(t *testing.T) {
	inv := newInventory(t, 20)
	clk := clock.NewManual(time.Unix(0, 0))
	sc := New(inv, clk, Options{})
	seen := map[string]string{}
	for i := range 20 {
		n, err := sc.Pick(context.Background(), server(i))
		if err != nil {
			t.Fatalf("pick %d: %v", i, err)
		}
		if prev, dup := seen[n]; dup {
			t.Fatalf("node %s picked for %s and server-%04d while claimed", n, prev, i)
		}
		seen[n] = fmt.Sprint(i)
	}
	if inv.lists() != 1 {
		t.Errorf("%d inventory listings for 20 picks, want 1", inv.lists())
	}
	// All 20 claimed: the 21st finds none, refreshes once, and fails for good.
	clk.Advance(2 * time.Second)
	if _, err := sc.Pick(context.Background(), server(99)); !errors.Is(err, ErrNoCandidate) {
		t.Fatalf("21st pick: %v, want ErrNoCandidate", err)
	}
}

func TestPickHonoursExclusions(t *testing.T) {
	inv := newInventory(t, 3)
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	all := inv.sim.Nodes()
	n, err := sc.Pick(context.Background(), server(1, all[0].UUID, all[1].UUID))
	if err != nil || n != all[2].UUID {
		t.Fatalf("got %q, %v; want %s", n, err, all[2].UUID)
	}
}

func TestPickRetriesLaterRightAfterARefresh(t *testing.T) {
	inv := newInventory(t, 1)
	clk := clock.NewManual(time.Unix(0, 0))
	sc := New(inv, clk, Options{MinRefresh: time.Second})
	if _, err := sc.Pick(context.Background(), server(1)); err != nil {
		t.Fatal(err)
	}
	// The only node is claimed; a node released moments ago may not be listed
	// yet, so the scheduler must not call it "no valid host" without listing.
	clk.Advance(100 * time.Millisecond)
	if _, err := sc.Pick(context.Background(), server(2)); !errors.Is(err, ErrRetryLater) {
		t.Fatalf("pick right after a refresh: %v, want ErrRetryLater", err)
	}
}

func TestBurstListsOnce(t *testing.T) {
	inv := newInventory(t, 200)
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := sc.Pick(context.Background(), server(i)); err != nil {
				t.Errorf("pick: %v", err)
			}
		}()
	}
	wg.Wait()
	if inv.lists() != 1 {
		t.Errorf("%d listings for a burst of 64 picks, want 1", inv.lists())
	}
}

func TestInventoryErrorsPassThrough(t *testing.T) {
	inv := newInventory(t, 1)
	if err := inv.sim.InjectFault(ironicsim.Fault{Method: "GET", Path: "/v1/nodes", Kind: ironicsim.Fault503}); err != nil {
		t.Fatal(err)
	}
	sc := New(inv, clock.NewManual(time.Unix(0, 0)), Options{})
	if _, err := sc.Pick(context.Background(), server(1)); !errors.Is(err, ironic.ErrUnavailable) {
		t.Fatalf("got %v, want ErrUnavailable", err)
	}
}
