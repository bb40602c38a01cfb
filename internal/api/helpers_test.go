package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

const (
	imageID    = "11111111-2222-3333-4444-555555555555"
	image2ID   = "11111111-2222-3333-4444-666666666666"
	netID      = "99999999-8888-7777-6666-555555555555"
	net2ID     = "99999999-8888-7777-6666-444444444444"
	unknownID  = "00000000-0000-0000-0000-000000000000"
	buildLimit = 20 * time.Minute
)

var t0 = time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)

func testCatalog() *catalog.Catalog {
	return &catalog.Catalog{
		Flavors: []catalog.Flavor{
			{ID: "1", Name: "bm.small", ResourceClass: "baremetal", VCPUs: 2, RAMMB: 4096, DiskGB: 40, Description: "small"},
			{ID: "2", Name: "bm.large", ResourceClass: "bm-large.v2", VCPUs: 32, RAMMB: 262144, DiskGB: 900, Traits: []string{"CUSTOM_GPU"},
				ForbiddenTraits: []string{"CUSTOM_SLOW"}, Capabilities: map[string]string{"boot_mode": "uefi"}},
		},
		Images: []catalog.Image{
			{ID: imageID, Name: "debian-12", URL: "http://images/debian-12.qcow2", Checksum: "0123456789abcdef0123456789abcdef", MinDisk: 10, OSDistro: "debian"},
			{ID: image2ID, Name: "ubuntu-24.04", URL: "http://images/ubuntu.qcow2"},
		},
	}
}

func testNetworks() network.Networks {
	return network.Networks{
		{ID: netID, Name: "provisioning", CIDR: netip.MustParsePrefix("10.0.0.0/24"), MTU: 1500},
		{ID: net2ID, Name: "storage", CIDR: netip.MustParsePrefix("10.1.0.0/24")},
	}
}

// fixture is an API over a real SQLite store, served on a local port.
type fixture struct {
	t     testing.TB
	store *sqlite.Store
	clock *clock.Manual
	url   string
	api   http.Handler

	mu    sync.Mutex
	kicks []kick        // what the store held at each Kick
	nodes []ironic.Node // the Ironic inventory GET /ingot/v1/nodes shows
	ready error
}

// kick records, at the moment the API woke the reconciler (after the
// store call, before the answer), whether the store listed a server
// (listed is 0 or 1: one row is enough to see a commit, and cheap).
type kick struct{ listed int }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureWith(t, nil)
}

// newFixtureWith is newFixture with the API's configuration changed by
// configure before the API is made.
func newFixtureWith(t testing.TB, configure func(*api.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{t: t, store: st, clock: clock.NewManual(t0)}
	cfg := api.Config{
		Store: st, Catalog: testCatalog(), Networks: testNetworks(), Clock: f.clock,
		BuildTimeout: buildLimit,
		Kick: func(...string) {
			list, err := st.ListServers(context.Background(), store.ListOptions{Limit: 1})
			if err != nil {
				t.Errorf("kick: list: %v", err)
			}
			f.mu.Lock()
			f.kicks = append(f.kicks, kick{listed: len(list)})
			f.mu.Unlock()
		},
		Nodes: func(ctx context.Context) ([]ironic.Node, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.nodes, nil
		},
		Ready: func(ctx context.Context) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.ready
		},
	}
	if configure != nil {
		configure(&cfg)
	}
	f.api = api.New(cfg)
	srv := httptest.NewServer(f.api)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// do sends a request; mv "" sends no microversion header.
func (f *fixture) do(method, path, mv string, body any) response {
	f.t.Helper()
	return f.doWith(nil, method, path, mv, body)
}

// doWith is do with extra headers (X-Auth-Project-Id, X-Roles: who asks).
func (f *fixture) doWith(h http.Header, method, path, mv string, body any) response {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			f.t.Fatalf("marshal: %v", err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	if err != nil {
		f.t.Fatalf("request: %v", err)
	}
	req.Header.Set("X-Auth-Token", "notused")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if mv != "" {
		req.Header.Set("X-OpenStack-Nova-API-Version", mv)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("read body: %v", err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			f.t.Fatalf("%s %s: bad JSON %q: %v", method, path, raw, err)
		}
	}
	return r
}

// want fails unless the status matches.
func (r response) want(t testing.TB, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.raw)
	}
	return r
}

// novaError checks a Nova-shaped error body: one key wrapping code and message.
func (r response) novaError(t testing.TB, status int, key string) string {
	t.Helper()
	r.want(t, status)
	if len(r.body) != 1 {
		t.Fatalf("error body %s: want exactly one wrapper key", r.raw)
	}
	inner, ok := r.body[key].(map[string]any)
	if !ok {
		t.Fatalf("error body %s: want key %q", r.raw, key)
	}
	if code, _ := inner["code"].(float64); int(code) != status {
		t.Fatalf("error body %s: code %v, want %d", r.raw, inner["code"], status)
	}
	msg, _ := inner["message"].(string)
	if msg == "" {
		t.Fatalf("error body %s: empty message", r.raw)
	}
	return msg
}

func obj(t testing.TB, v any, path ...string) map[string]any {
	t.Helper()
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %q: %T is not an object", k, v)
		}
		v = m[k]
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v: %T is not an object", path, v)
	}
	return m
}

func list(t testing.TB, v any, key string) []any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%T is not an object", v)
	}
	l, ok := m[key].([]any)
	if !ok {
		t.Fatalf("%q: %T is not a list", key, m[key])
	}
	return l
}

func validCreate() map[string]any {
	return map[string]any{"server": map[string]any{
		"name": "vm1", "imageRef": imageID, "flavorRef": "1",
		"networks": []any{map[string]any{"uuid": netID}},
	}}
}

// create makes a server through the API and returns its id.
func (f *fixture) create(name string) string {
	f.t.Helper()
	body := validCreate()
	body["server"].(map[string]any)["name"] = name
	r := f.do("POST", "/v2.1/servers", "2.90", body).want(f.t, http.StatusAccepted)
	return obj(f.t, r.body, "server")["id"].(string)
}

// advance moves a stored server along, as the reconciler would.
func (f *fixture) advance(id string, change func(s *lifecycle.Server)) {
	f.t.Helper()
	ctx := context.Background()
	s, err := f.store.GetServer(ctx, id)
	if err != nil {
		f.t.Fatalf("get %s: %v", id, err)
	}
	change(s)
	s.UpdatedAt = f.clock.Now()
	if err := f.store.SaveServer(ctx, s, lifecycle.Event{ServerID: id, RequestID: s.CreateRequestID,
		Action: lifecycle.ActionCreate, Name: "test_step", Node: s.NodeID, Result: lifecycle.ResultSuccess,
		Start: f.clock.Now(), Finish: f.clock.Now()}); err != nil {
		f.t.Fatalf("save %s: %v", id, err)
	}
}

func (f *fixture) serverCount() int {
	f.t.Helper()
	l, err := f.store.ListServers(context.Background(), store.ListOptions{})
	if err != nil {
		f.t.Fatalf("list: %v", err)
	}
	return len(l)
}

var errNotReady = errors.New("ironic down")

func decodeJSON(resp *http.Response, v any) error {
	return json.NewDecoder(resp.Body).Decode(v)
}

// ed25519Key is a fresh OpenSSH ed25519 public key line.
func ed25519Key(t testing.TB) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var blob []byte
	for _, f := range [][]byte{[]byte("ssh-ed25519"), pub} {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(f)))
		blob = append(blob, f...)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + " test@ingot"
}
