package ironic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// BeforeSend refuses a change: nothing reaches Ironic, the error is the
// refusal's (no typed Ironic error), and reads are not asked about.
func TestBeforeSendRefusesUnsent(t *testing.T) {
	sim := ironicsim.New(ironicsim.Options{Seed: 1})
	node := sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: "bm"})[0]
	var changes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			changes.Add(1)
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	refuse := errors.New("lease gone")
	var asked atomic.Int64
	var deny atomic.Bool
	c, err := ironic.New(ironic.Config{URL: srv.URL, BeforeSend: func(context.Context) error {
		asked.Add(1)
		if deny.Load() {
			return refuse
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.GetNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 0 {
		t.Fatalf("BeforeSend asked %d times for a read", asked.Load())
	}
	deny.Store(true)
	for name, call := range map[string]func() error{
		"reserve (PATCH)":  func() error { _, err := c.Reserve(ctx, node, "5d8b1f0e-0f43-4c55-9a39-5f3c1d2e7a10", nil); return err },
		"power (PUT)":      func() error { return c.SetPowerOn(ctx, node) },
		"vif detach (DEL)": func() error { return c.DetachVIF(ctx, node, "vif") },
	} {
		err := call()
		if !errors.Is(err, refuse) || errors.Is(err, ironic.ErrUnavailable) {
			t.Errorf("%s = %v, want the refusal and no ErrUnavailable", name, err)
		}
	}
	if n := changes.Load(); n != 0 {
		t.Fatalf("%d refused changes reached Ironic", n)
	}
	deny.Store(false)
	if _, err := c.Reserve(ctx, node, "5d8b1f0e-0f43-4c55-9a39-5f3c1d2e7a10", nil); err != nil {
		t.Fatal(err)
	}
	if changes.Load() != 1 {
		t.Fatalf("%d changes reached Ironic after the guard allowed one", changes.Load())
	}
}

// A lease lost between the transport's first check and the write (a pause
// there) is caught by the second, in the connection's write: nothing
// reaches Ironic.
func TestBeforeSendCheckedAtTheWrite(t *testing.T) {
	sim := ironicsim.New(ironicsim.Options{Seed: 1})
	node := sim.AddNodes(1, ironicsim.NodeSpec{ResourceClass: "bm"})[0]
	var changes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			changes.Add(1)
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	refuse := errors.New("lease gone at the write")
	var asked atomic.Int64
	c, err := ironic.New(ironic.Config{URL: srv.URL, BeforeSend: func(context.Context) error {
		if asked.Add(1) == 1 {
			return nil // the transport's first check passes, then the lease is gone
		}
		return refuse
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.GetNode(ctx, node); err != nil { // the connection the change reuses
		t.Fatal(err)
	}
	if err := c.SetPowerOn(ctx, node); !errors.Is(err, refuse) {
		t.Fatalf("power on = %v, want the refusal at the write", err)
	}
	if asked.Load() < 2 {
		t.Fatalf("BeforeSend asked %d times: the write did not ask", asked.Load())
	}
	if n := changes.Load(); n != 0 {
		t.Fatalf("%d changes refused at the write reached Ironic", n)
	}
}
