package ironictest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
)

// Response is the raw answer to Request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map (nil when it is not a JSON object).
func (r *Response) JSON() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// Fault is the text of an Ironic error: the inner faultstring, or the inner
// description of a routing-level error. NOTE: Ironic's error bodies are
// double-encoded, {"error_message": "<JSON string>"} (docs/ironic.md §0).
// Returns the raw body when it has neither.
func (r *Response) Fault() string {
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if json.Unmarshal(r.Body, &outer) == nil && outer.ErrorMessage != "" {
		var inner struct {
			Faultstring string `json:"faultstring"`
			Title       string `json:"title"`
			Description string `json:"description"`
		}
		if json.Unmarshal([]byte(outer.ErrorMessage), &inner) == nil {
			switch {
			case inner.Faultstring != "":
				return inner.Faultstring
			case inner.Description != "":
				return inner.Description
			case inner.Title != "":
				return inner.Title
			}
		}
		return outer.ErrorMessage
	}
	return string(r.Body)
}

// transient: worth retrying the same call (NodeLocked, no free conductor
// worker, the concurrent unprovisioning limit; docs/ironic.md §6, §7).
func (r *Response) transient() bool {
	switch r.Status {
	case http.StatusConflict:
		return strings.Contains(r.Fault(), "is locked by host")
	case http.StatusServiceUnavailable:
		return true
	case http.StatusInternalServerError:
		return strings.Contains(r.Fault(), "concurrent action limit")
	}
	return false
}

// Request sends one call at Microversion (body JSON-encoded unless nil) and
// fails the test only when Ironic cannot be reached. path starts with /v1.
func (e *Env) Request(t testing.TB, method, path string, body any) *Response {
	t.Helper()
	r, err := e.call(method, path, body)
	if err != nil {
		t.Fatalf("ironictest: %v", err)
	}
	return r
}

func (e *Env) call(method, path string, body any) (*Response, error) {
	return e.callVersion(Microversion, method, path, body)
}

func (e *Env) callVersion(version, method, path string, body any) (*Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	if e.AuthToken != "" {
		req.Header.Set("X-Auth-Token", e.AuthToken)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// retryTimeout bounds the retries of a transient answer, retryPace is
// the longest pause between them.
const (
	retryTimeout = 30 * time.Second
	retryPace    = 500 * time.Millisecond
)

// expect sends the call, retrying transient answers, and fails the test
// unless the final status is one of want.
func (e *Env) expect(t testing.TB, method, path string, body any, want ...int) *Response {
	t.Helper()
	r, err := e.expectErr(method, path, body, want...)
	if err != nil {
		t.Fatalf("ironictest: %v", err)
	}
	return r
}

func (e *Env) expectErr(method, path string, body any, want ...int) (*Response, error) {
	var r *Response
	err := poll.WaitPaced(context.Background(), retryTimeout, retryPace, func() (bool, string, error) {
		var err error
		if r, err = e.call(method, path, body); err != nil {
			return false, "", err
		}
		return slices.Contains(want, r.Status) || !r.transient(), "", nil
	})
	if err != nil && !errors.Is(err, poll.ErrTimeout) {
		return nil, err
	}
	if !slices.Contains(want, r.Status) {
		return r, fmt.Errorf("%s %s: got %d %s, want %v", method, path, r.Status, r.Fault(), want)
	}
	return r, nil
}
