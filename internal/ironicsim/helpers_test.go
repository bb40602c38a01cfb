package ironicsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
)

const ms = time.Millisecond

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness is a simulator on a manual clock behind an httptest server.
type harness struct {
	t   *testing.T
	sim *Sim
	clk *clock.Manual
	srv *httptest.Server
	ver string
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	clk := clock.NewManual(t0)
	opts.Clock = clk
	if opts.Seed == 0 {
		opts.Seed = 42
	}
	sim := New(opts)
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return &harness{t: t, sim: sim, clk: clk, srv: srv, ver: "1.78"}
}

type resp struct {
	status int
	body   []byte
	header http.Header
}

// json decodes the body into a generic value.
func (r resp) json() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		return nil
	}
	return m
}

// fault returns the faultstring (or routing description) of an error body.
func (r resp) fault() string {
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if err := json.Unmarshal(r.body, &outer); err != nil {
		return "<no error body: " + string(r.body) + ">"
	}
	var inner map[string]any
	if err := json.Unmarshal([]byte(outer.ErrorMessage), &inner); err != nil {
		return "<bad inner: " + outer.ErrorMessage + ">"
	}
	if s, ok := inner["faultstring"].(string); ok {
		return s
	}
	s, _ := inner["description"].(string)
	return s
}

// do sends a request at the harness's microversion ("" sends no header).
func (h *harness) do(method, path string, body any) resp {
	return h.doVer(h.ver, method, path, body)
}

func (h *harness) doVer(ver, method, path string, body any) resp {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, _ := json.Marshal(b)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if ver != "" {
		req.Header.Set("X-OpenStack-Ironic-API-Version", ver)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: b, header: res.Header}
}

// want checks a status and, when msg is not empty, the exact fault text.
func (h *harness) want(r resp, status int, msg string) {
	h.t.Helper()
	if r.status != status {
		h.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if msg != "" && r.fault() != msg {
		h.t.Fatalf("fault %q\n want %q", r.fault(), msg)
	}
}

// node reads a node through the API.
func (h *harness) node(id string) map[string]any {
	h.t.Helper()
	r := h.do("GET", "/v1/nodes/"+id, nil)
	h.want(r, 200, "")
	return r.json()
}

func (h *harness) state(id string) string {
	h.t.Helper()
	s, _ := h.node(id)["provision_state"].(string)
	return s
}

func (h *harness) provision(id string, body map[string]any) resp {
	return h.do("PUT", "/v1/nodes/"+id+"/states/provision", body)
}

func (h *harness) patch(id string, ops ...map[string]any) resp {
	list := make([]any, len(ops))
	for i, o := range ops {
		list[i] = o
	}
	return h.do("PATCH", "/v1/nodes/"+id, list)
}

func op(o, path string, value ...any) map[string]any {
	m := map[string]any{"op": o, "path": path}
	if len(value) > 0 {
		m["value"] = value[0]
	}
	return m
}

// addNode creates one available node with the given spec.
func (h *harness) addNode(spec NodeSpec) string {
	return h.sim.AddNodes(1, spec)[0]
}

const (
	inst1 = "812bed85-c87c-4cfd-ab86-ee028861adf3"
	inst2 = "c64039e9-c0ee-4b6b-b5e8-6f8acfe70078"
)
