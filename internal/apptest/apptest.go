// Package apptest runs the whole service (internal/app) for a test: built
// from a configuration, serving on a free loopback port, stopped and
// closed when the test ends (a Serve error fails the test).
package apptest

import (
	"context"
	"net"
	"testing"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
)

// Serve builds the app from cfg (normalized here) and serves it; it
// returns the app and its root URL, http://127.0.0.1:PORT.
func Serve(t testing.TB, cfg config.Config, opts app.Options) (*app.App, string) {
	t.Helper()
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		cancel()
		t.Fatalf("app: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		a.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		a.Close()
	})
	return a, "http://" + ln.Addr().String()
}
