package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/poll"
)

type serviceRow struct {
	ID             string  `json:"id"`
	Binary         string  `json:"binary"`
	Host           string  `json:"host"`
	Status         string  `json:"status"`
	State          string  `json:"state"`
	DisabledReason *string `json:"disabled_reason"`
}

// TestDisabledComputeSchedulesNothing: the replica registers its services
// at start (up); with its nova-compute disabled a new build fails
// no_valid_host at once, as in Nova, and the hypervisors show disabled;
// enabled again, builds are placed. A restart keeps the disable.
func TestDisabledComputeSchedulesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Dev(dir)
	cfg.Host = "replica-a"
	cfg.PollInterval = 50 * time.Millisecond
	cfg.Ironic.Sim.DeployTime = 50 * time.Millisecond
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := New(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler)
	done := make(chan struct{})
	go func() { _ = a.Reconciler.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done; srv.Close(); a.Close() }

	c := apitest.New(t, srv.URL)
	c.Microversion = "2.53"
	var list struct {
		Services []serviceRow `json:"services"`
	}
	if code := c.Call("GET", "/v2.1/os-services", nil, &list); code != http.StatusOK || len(list.Services) != 3 {
		t.Fatalf("services: HTTP %d, %+v", code, list.Services)
	}
	var compute serviceRow
	for _, s := range list.Services {
		if s.Host != "replica-a" || s.State != "up" || s.Status != "enabled" {
			t.Fatalf("service at start: %+v", s)
		}
		if s.Binary == "nova-compute" {
			compute = s
		}
	}
	set := func(body map[string]any) {
		t.Helper()
		if code := c.Call("PUT", "/v2.1/os-services/"+compute.ID, body, nil); code != http.StatusOK {
			t.Fatalf("update service %v: HTTP %d", body, code)
		}
	}
	set(map[string]any{"status": "disabled", "disabled_reason": "rack maintenance"})
	var hyps struct {
		Hypervisors []struct {
			Status string `json:"status"`
		} `json:"hypervisors"`
	}
	if c.Call("GET", "/v2.1/os-hypervisors", nil, &hyps); len(hyps.Hypervisors) != cfg.Ironic.Sim.Nodes || hyps.Hypervisors[0].Status != "disabled" {
		t.Fatalf("hypervisors with the compute service disabled: %+v", hyps)
	}
	create := func(name string) string {
		return c.Create(map[string]any{"name": name, "flavorRef": "bm.small", "imageRef": cfg.Images[0].ID,
			"networks": []map[string]string{{"uuid": cfg.Networks[0].ID}}})
	}
	id := create("while-disabled")
	s := c.WaitStatus(id, "ERROR", time.Minute)
	if s.Fault == nil || !strings.Contains(s.Fault.Message, "compute service") {
		t.Fatalf("fault of a build while every compute service is disabled: %+v", s.Fault)
	}
	set(map[string]any{"status": "enabled"})
	c.WaitStatus(create("after-enable"), "ACTIVE", time.Minute)

	// Forced down schedules nothing either; a restart keeps it.
	set(map[string]any{"forced_down": true})
	stop()
	b, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv2 := httptest.NewServer(b.Handler)
	defer srv2.Close()
	c2 := apitest.New(t, srv2.URL)
	c2.Microversion = "2.53"
	c2.Call("GET", "/v2.1/os-services?binary=nova-compute", nil, &list)
	if len(list.Services) != 1 || list.Services[0].State != "down" || list.Services[0].ID != compute.ID {
		t.Fatalf("after a restart: %+v", list.Services)
	}
}

// TestHeartbeat: the replica's services report the clock's time every
// interval; once an admin deleted them, the heartbeat says so and stops.
func TestHeartbeat(t *testing.T) {
	cfg := config.Dev(t.TempDir())
	cfg.Host = "replica-h"
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	var lines logLines
	a, err := New(context.Background(), cfg, Options{Clock: clk, ReportInterval: 5 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&lines, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { a.heartbeat(ctx); close(done) }()
	later := clk.Now().Add(time.Hour)
	clk.Set(later)
	poll.Until(t, time.Minute, fmt.Sprintf("a heartbeat at %s", later), func() (bool, string) {
		all, err := a.Store.ListServices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(all) == 3 && all[0].UpdatedAt.Equal(later) && all[1].UpdatedAt.Equal(later) && all[2].UpdatedAt.Equal(later), fmt.Sprintf("%+v", all)
	})
	all, _ := a.Store.ListServices(ctx)
	for _, s := range all {
		if err := a.Store.DeleteService(ctx, s.UUID); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the heartbeat went on after its services were deleted")
	}
	if lines.count("services were deleted", "replica-h") != 1 {
		t.Fatalf("log: %s", lines.buf.String())
	}
}
