package cinder_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingot-dev/ingot/internal/cinder"
)

// TestUnreachable: no Cinder at the endpoint is ErrUnavailable; a
// cancelled call is also context.Canceled.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := cinder.New(t.Context(), cinder.Config{Endpoint: "http://" + addr + "/v3", User: cinder.StaticToken("t")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetVolume(t.Context(), "x")
	wantErr(t, "closed port", err, cinder.ErrUnavailable)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = c.ListVolumes(ctx)
	if !errors.Is(err, cinder.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestCatalogLookup: New finds block-storage (else volumev3) of the
// interface asked for, and says so when the catalog has neither.
func TestCatalogLookup(t *testing.T) {
	body := `{"catalog": [
		{"type": "compute", "endpoints": [{"interface": "public", "region_id": "RegionOne", "url": "http://nova"}]},
		{"type": "volumev3", "endpoints": [{"interface": "public", "region_id": "RegionOne", "url": "http://v3-public"},
			{"interface": "internal", "region_id": "RegionOne", "url": "http://v3-internal"}]}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3/auth/catalog" || r.Header.Get("X-Auth-Token") != "svc" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	for iface, want := range map[string]string{"": "http://v3-public/", "internal": "http://v3-internal/"} {
		c, err := cinder.New(t.Context(), cinder.Config{Identity: srv.URL + "/v3", Interface: iface,
			User: cinder.StaticToken("user"), Service: cinder.StaticToken("svc")})
		if err != nil || c.Endpoint() != want {
			t.Fatalf("interface %q: %v %v", iface, err, c)
		}
	}
	if _, err := cinder.New(t.Context(), cinder.Config{Identity: srv.URL + "/v3", Region: "Elsewhere",
		Service: cinder.StaticToken("svc")}); err == nil {
		t.Fatal("found an endpoint in a region the catalog lacks")
	}
}
