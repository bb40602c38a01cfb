package scheduler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/poll"
)

// gate holds every node listing until the test lets one through.
type gate struct {
	next http.RoundTripper
	pass chan struct{}
}

func (g gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/v1/nodes") {
		<-g.pass
	}
	return g.next.RoundTrip(r)
}

// With Background, no pick waits for a listing: the first answers
// ErrRetryLater while the class is listed, and once the inventory is held a
// stale one keeps serving while it is listed again. Without it, both picks
// would block on the held listing and the test would not get past them.
func TestBackgroundListingNeverBlocksAPick(t *testing.T) {
	sim := ironicsim.New(ironicsim.Options{Seed: 1})
	sim.AddNodes(5, ironicsim.NodeSpec{ResourceClass: "rc"})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	g := gate{next: http.DefaultTransport, pass: make(chan struct{})}
	c, err := ironic.New(ironic.Config{URL: srv.URL, Timeout: time.Minute, HTTPClient: &http.Client{Transport: g}})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Unix(0, 0))
	refreshed := make(chan struct{}, 4)
	sc := New(c, clk, Options{Background: true, OnRefresh: func() { refreshed <- struct{}{} }})
	picked := make(chan error, 1)
	pick := func(i int) (string, error) {
		var node string
		go func() {
			var err error
			node, err = sc.Pick(context.Background(), server(i))
			picked <- err
		}()
		select {
		case err := <-picked:
			return node, err
		case <-time.After(30 * time.Second):
			t.Fatal("the pick waited for the held listing")
			return "", nil
		}
	}
	if _, err := pick(1); !errors.Is(err, ErrRetryLater) {
		t.Fatalf("first pick: %v, want ErrRetryLater while the class is listed", err)
	}
	g.pass <- struct{}{}
	<-refreshed
	if n, err := pick(2); err != nil || n == "" {
		t.Fatalf("pick once listed: %q, %v", n, err)
	}
	clk.Advance(time.Hour) // the inventory is stale now
	if n, err := pick(3); err != nil || n == "" {
		t.Fatalf("pick from the stale inventory: %q, %v", n, err)
	}
	g.pass <- struct{}{} // the background listing the stale pick started
	<-refreshed
}

// Warm lists the flavors' classes (and the ports) ahead of the first pick,
// which then answers from the inventory at once (without Warm it would
// answer ErrRetryLater while its class is first listed), and lists nothing
// while the caches are fresh.
func TestWarmListsAheadOfTheFirstPick(t *testing.T) {
	sim := ironicsim.New(ironicsim.Options{Seed: 1})
	sim.AddNodes(3, ironicsim.NodeSpec{ResourceClass: "rc"})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	c, err := ironic.New(ironic.Config{URL: srv.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Unix(0, 0))
	refreshed := make(chan struct{}, 4)
	sc := New(c, clk, Options{Background: true, OnRefresh: func() { refreshed <- struct{}{} },
		Classes: func(context.Context) ([]string, error) { return []string{"rc", "other"}, nil }})
	sc.Warm(context.Background())
	select {
	case <-refreshed:
	case <-time.After(30 * time.Second):
		t.Fatal("no warm-up listing ended")
	}
	poll.Until(t, 30*time.Second, "the warm-up's listings", func() (bool, string) {
		sc.bg.mu.Lock()
		defer sc.bg.mu.Unlock()
		return len(sc.bg.running) == 0, fmt.Sprint(sc.bg.running)
	})
	counts := sim.Counts()
	if counts["GET /v1/nodes"] != 2 || counts["GET /v1/ports"] != 1 {
		t.Fatalf("warm-up listings %v, want both classes' nodes and the ports once", counts)
	}
	sim.ResetCounts()
	s := server(1)
	s.Spec.Networks = []string{"net"}
	if _, err := sc.Pick(context.Background(), s); err != nil {
		t.Fatalf("the first pick after the warm-up: %v", err)
	}
	sc.Warm(context.Background())
	if n := sim.Counts(); len(n) != 0 {
		t.Fatalf("Ironic calls %v by a pick and a warm-up on fresh caches, want none", n)
	}
}
