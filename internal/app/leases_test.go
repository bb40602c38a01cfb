package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

// TestLoneReplicaHoldsEveryShard: with no configuration (SQLite, one
// process) the replica holds every shard as soon as New returns — before
// any tick — shows them in /readyz and ingot_leases_held, and Close gives
// them back at once.
func TestLoneReplicaHoldsEveryShard(t *testing.T) {
	cfg := config.Dev(t.TempDir())
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := New(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			a.Close()
		}
	}()
	srv := httptest.NewServer(a.Root())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Status  string `json:"status"`
		Replica struct {
			Host   string `json:"host"`
			Shards int    `json:"shards"`
			Live   int    `json:"live_replicas"`
			Leases []struct {
				Shard int   `json:"shard"`
				Epoch int64 `json:"epoch"`
			} `json:"leases"`
		} `json:"replica"`
	}
	err = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || ready.Status != "ok" {
		t.Fatalf("/readyz: %d %+v %v", resp.StatusCode, ready, err)
	}
	r := ready.Replica
	if r.Host != cfg.Host || r.Shards != 64 || r.Live != 1 || len(r.Leases) != 64 {
		t.Fatalf("/readyz replica: host %q shards %d live %d leases %d; want %q, 64, 1, 64", r.Host, r.Shards, r.Live, len(r.Leases), cfg.Host)
	}

	resp, err = http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\ningot_leases_held 64\n") || !strings.Contains(string(body), "ingot_lease_takeovers_total 0") {
		t.Fatalf("/metrics lacks ingot_leases_held 64 and ingot_lease_takeovers_total 0")
	}

	a.Close()
	closed = true
	st, err := sqlite.Open(ctx, cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.ListLeases(ctx)
	st.Close()
	if err != nil || len(all) != 64 {
		t.Fatalf("leases after Close: %d, %v", len(all), err)
	}
	for _, l := range all {
		if l.ExpiresAt.After(time.Now()) {
			t.Fatalf("after Close the lease %+v is still held", l)
		}
	}

	b, err := New(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	all, err = b.Store.(store.Leases).ListLeases(ctx)
	if err != nil || len(all) != 64 {
		t.Fatalf("leases after a restart: %d, %v", len(all), err)
	}
	for _, l := range all {
		if l.Holder != cfg.Host || l.Epoch != 2 {
			t.Fatalf("after Close and a new start: %+v, want held again by %s at epoch 2", l, cfg.Host)
		}
	}
}
