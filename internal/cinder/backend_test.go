package cinder_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/cindersim"
	"github.com/ingot-dev/ingot/internal/cindertest"
)

// backend is one Cinder the adapter tests run against.
type backend struct {
	// calls records the requests of every client of the backend.
	calls *callLog
	// endpoint is the API root (for clients with made-up tokens).
	endpoint string
	// client calls as user (a keystonetest user), with the token of a user
	// with the role service as X-Service-Token when service is set.
	client func(t *testing.T, user string, service bool) *cinder.Client
	// registerCompute puts url in the catalog as the compute endpoint.
	registerCompute func(t *testing.T, url string)
}

// realBackend starts the real Cinder (skipped when it is not installed).
func realBackend(t *testing.T) backend {
	e := cindertest.Start(t)
	t.Logf("Keystone and Cinder up in %s (Keystone %s), Cinder's RSS %d MiB",
		e.SetupTime.Round(1e6), e.Keystone.SetupTime.Round(1e6), e.RSS()/1024)
	svc := e.ServiceTokenUser(t, "svc-only")
	var mu sync.Mutex
	tokens := map[string]string{}
	token := func(t *testing.T, user string) cinder.StaticToken {
		mu.Lock()
		defer mu.Unlock()
		if tokens[user] == "" {
			tokens[user] = e.Keystone.Token(t, user)
		}
		return cinder.StaticToken(tokens[user])
	}
	calls := &callLog{}
	return backend{
		calls:    calls,
		endpoint: e.URL,
		client: func(t *testing.T, user string, service bool) *cinder.Client {
			cfg := cinder.Config{Identity: e.Keystone.URL, User: token(t, user), HTTPClient: calls.client()}
			if service {
				cfg.Service = token(t, svc.Name)
			}
			c, err := cinder.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		registerCompute: func(t *testing.T, url string) {
			e.Keystone.RegisterService(t, "compute", "nova", url)
		},
	}
}

// simBackend serves a cindersim.Sim; its tokens are the keystonetest
// users' names.
func simBackend(t *testing.T) backend {
	sim := cindersim.New(cindersim.Options{})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	sim.AddToken("member-a", cindersim.Identity{ProjectID: "a", Roles: []string{"member", "reader"}})
	sim.AddToken("member-b", cindersim.Identity{ProjectID: "b", Roles: []string{"member", "reader"}})
	sim.AddToken("svc-only", cindersim.Identity{ProjectID: "service", Roles: []string{"service"}})
	calls := &callLog{}
	return backend{
		calls:    calls,
		endpoint: srv.URL + "/v3",
		client: func(t *testing.T, user string, service bool) *cinder.Client {
			cfg := cinder.Config{Endpoint: srv.URL + "/v3", User: cinder.StaticToken(user), HTTPClient: calls.client()}
			if service {
				cfg.Service = cinder.StaticToken("svc-only")
			}
			c, err := cinder.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		registerCompute: func(t *testing.T, url string) { sim.SetComputeURL(url) },
	}
}

// fakeCompute answers Cinder's call-back, GET
// /v2.1/servers/{id}/os-volume_attachments/{volume}: with the attachment
// id it is given (compute still uses it), or 404 when it is "".
type fakeCompute struct {
	mu           sync.Mutex
	attachmentID string
	calls        []string
}

func (f *fakeCompute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 5 || parts[1] != "servers" || parts[3] != "os-volume_attachments" || f.attachmentID == "" {
		http.Error(w, `{"itemNotFound": {"code": 404, "message": "not found"}}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"volumeAttachment": {"id": "` + parts[4] + `", "volumeId": "` + parts[4] +
		`", "serverId": "` + parts[2] + `", "attachment_id": "` + f.attachmentID + `", "delete_on_termination": false}}`))
}

func (f *fakeCompute) set(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attachmentID, f.calls = id, nil
}

func (f *fakeCompute) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func startFakeCompute(t *testing.T) (*fakeCompute, string) {
	f := &fakeCompute{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v2.1"
}

// callLog records "METHOD path" of the requests its clients send.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) client() *http.Client { return &http.Client{Transport: l} }

func (l *callLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.calls = append(l.calls, r.Method+" "+r.URL.Path)
	l.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// take returns the calls since the last take.
func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	return out
}
