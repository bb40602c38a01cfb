package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
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

// logLines is a text log that tests read back (safe for concurrent writes).
type logLines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count returns how many lines hold every one of the strings.
func (l *logLines) count(subs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		all := line != ""
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// TestWaitsLogOncePerBurst: builds waiting for a node are logged at INFO
// once per burst of a resource class, each wait at DEBUG, and a wait after a
// quiet minute starts a new burst.
func TestWaitsLogOncePerBurst(t *testing.T) {
	inv := newInventory(t, 1)
	clk := clock.NewManual(time.Unix(0, 0))
	var lines logLines
	log := slog.New(slog.NewTextHandler(&lines, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sc := New(inv, clk, Options{MinRefresh: time.Second, Logger: log})
	if _, err := sc.Pick(context.Background(), server(0)); err != nil {
		t.Fatal(err)
	}
	for tick := range 5 {
		clk.Advance(100 * time.Millisecond)
		for i := range 40 {
			if _, err := sc.Pick(context.Background(), server(1+i)); !errors.Is(err, ErrRetryLater) {
				t.Fatalf("tick %d pick %d: %v, want ErrRetryLater", tick, i, err)
			}
		}
	}
	if n := lines.count("level=INFO"); n != 1 {
		t.Errorf("%d INFO lines for a burst of 200 waits, want 1:\n%s", n, lines.buf.String())
	}
	if n := lines.count("level=DEBUG", "waits for a free node", "resource_class=rc"); n != 199 {
		t.Errorf("%d DEBUG lines, want 199", n)
	}
	clk.Advance(burstGap) // a quiet minute; the next pick lists again
	if _, err := sc.Pick(context.Background(), server(1)); !errors.Is(err, ErrNoCandidate) {
		t.Fatalf("pick after a quiet minute: %v, want ErrNoCandidate", err)
	}
	clk.Advance(100 * time.Millisecond)
	if _, err := sc.Pick(context.Background(), server(2)); !errors.Is(err, ErrRetryLater) {
		t.Fatalf("pick right after that listing: %v, want ErrRetryLater", err)
	}
	if n := lines.count("level=INFO"); n != 2 {
		t.Errorf("%d INFO lines after a second burst, want 2", n)
	}
}
