package scheduler

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
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
