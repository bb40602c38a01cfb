package reconciler

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/cindersim"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/store"
)

// TestGuardedCinder: Cinder's attachment and volume changes go out only
// under a valid lease (a fence in the context), lists pass through; past
// the lease's local deadline the change is refused before it is sent.
func TestGuardedCinder(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	k := NewKeeper(leaseStore(t, clk), clk, nil, LeaseConfig{Host: "a", Shards: 1, TTL: 10 * time.Second}, LeaseHooks{})
	ctx := t.Context()
	if err := k.Round(ctx); err != nil {
		t.Fatal(err)
	}
	f, ok := k.Fence("server-1")
	if !ok {
		t.Fatal("no fence")
	}
	sim := cindersim.New(cindersim.Options{})
	sim.AddToken("ingot", cindersim.Identity{ProjectID: "service", Roles: []string{"admin", "service"}})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	c, err := cinder.New(ctx, cinder.Config{Endpoint: srv.URL + "/v3", User: cinder.StaticToken("ingot"), AllProjects: true})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.CreateVolume(ctx, cinder.VolumeSpec{SizeGB: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := guardedCinder{Cinder: c, k: k}
	fctx := store.WithFence(ctx, f)
	if _, err := g.CreateAttachment(fctx, v.ID, "server-1", nil); err != nil {
		t.Fatalf("create under a valid lease: %v", err)
	}
	if _, err := g.CreateAttachment(ctx, v.ID, "server-1", nil); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("create with no fence: %v", err)
	}
	clk.Advance(8 * time.Second) // past the local deadline (a pause)
	if err := g.DeleteVolume(fctx, v.ID); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("delete past the deadline: %v", err)
	}
	if as, err := g.ListAttachments(context.Background(), "server-1", v.ID); err != nil || len(as) != 1 {
		t.Fatalf("list (unguarded): %d, %v", len(as), err)
	}
	if sim.Calls()["POST /v3/attachments"] != 1 || sim.Calls()["DELETE /v3/volumes/{id}"] != 0 {
		t.Fatalf("calls sent: %v", sim.Calls())
	}
}
