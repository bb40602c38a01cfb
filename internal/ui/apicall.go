package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// apiMicroversion is what the console asks the compute API for: hostId and
// host on events (2.62), event details (2.84), the embedded flavor (2.47).
const apiMicroversion = "compute 2.90"

// apiClient calls the API handler in-process as the console's user.
type apiClient struct {
	h      http.Handler
	ctx    context.Context
	token  string
	remote string
}

// apiError is a non-2xx answer of the API, with its own message.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return e.Message }

// do sends method path (with a JSON body when body is not nil) and decodes
// a 2xx answer into out (may be nil). A non-2xx answer is an *apiError.
func (a *apiClient) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.ctx, method, path, rd)
	if err != nil {
		return err
	}
	req.RemoteAddr = a.remote
	// The browser's Host was checked by ServeHTTP; this in-process call
	// names loopback, which the API's Host check accepts.
	req.Host = "localhost"
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("OpenStack-API-Version", apiMicroversion)
	// ingot:phase, ingot:fault and ingot:attempts are opt-in members.
	req.Header.Set("X-Ingot-Extensions", "true")
	if a.token != "" {
		req.Header.Set("X-Auth-Token", a.token)
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	a.h.ServeHTTP(rec, req)
	if rec.status/100 != 2 {
		return &apiError{Status: rec.status, Message: errorMessage(rec.status, rec.body.Bytes())}
	}
	if out == nil || rec.body.Len() == 0 {
		return nil
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return fmt.Errorf("console: %s %s: decode: %w", method, path, err)
	}
	return nil
}

// get is do("GET", …).
func (a *apiClient) get(path string, out any) error { return a.do(http.MethodGet, path, nil, out) }

// errorMessage is the message of a Nova-shaped error body
// ({"itemNotFound": {"code": 404, "message": …}}), else the status text.
func errorMessage(status int, body []byte) string {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) == nil {
		for _, v := range doc {
			var m struct{ Message string }
			if json.Unmarshal(v, &m) == nil && m.Message != "" {
				return m.Message
			}
		}
	}
	if s := strings.TrimSpace(string(body)); s != "" && len(s) < 300 && !strings.HasPrefix(s, "{") {
		return s
	}
	return http.StatusText(status)
}

// recorder collects the API's answer.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
