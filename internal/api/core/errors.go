package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// APIError is an error answered to the client in Nova's shape:
// {"<key>": {"code": N, "message": "..."}}. Handlers return it; anything else
// they return becomes a logged 500 computeFault.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// BadRequest, NotFound, Conflict and Unavailable are the handlers' errors
// in Nova's shape (400, 404, 409, 503).
func BadRequest(format string, a ...any) error {
	return &APIError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, a...)}
}

func NotFound(format string, a ...any) error {
	return &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf(format, a...)}
}

func Conflict(format string, a ...any) error {
	return &APIError{Status: http.StatusConflict, Message: fmt.Sprintf(format, a...)}
}

func Unavailable(format string, a ...any) error {
	return &APIError{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf(format, a...)}
}

// errorKey is the wrapper key Nova uses for a status. novaclient reads the
// message from whatever single key wraps it, so the key matters for humans
// and for clients that switch on it.
func errorKey(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "badRequest"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "itemNotFound"
	case http.StatusMethodNotAllowed:
		return "badMethod"
	case http.StatusNotAcceptable:
		return "notAcceptable"
	case http.StatusConflict:
		return "conflictingRequest"
	case http.StatusRequestEntityTooLarge:
		return "HTTPRequestEntityTooLarge"
	case http.StatusUnsupportedMediaType:
		return "badMediaType"
	case http.StatusNotImplemented:
		return "notImplemented"
	case http.StatusServiceUnavailable:
		return "serviceUnavailable"
	}
	return "computeFault"
}

type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// writeError answers status with a Nova-shaped body.
func writeError(w http.ResponseWriter, status int, message string) {
	WriteJSON(w, status, map[string]errorBody{errorKey(status): {Code: status, Message: message}})
}

// WriteJSON answers v as JSON. json.Encoder marshals into a pooled buffer
// and writes only once the whole value is encoded, so a failure can still
// be answered as a 500; unlike json.Marshal it does not copy a 2 MB page.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	var buf headerDeferred
	buf.w, buf.status = w, status
	if err := json.NewEncoder(&buf).Encode(v); err != nil && !buf.wrote {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"computeFault": {"code": 500, "message": "response encoding failed"}}`))
	}
}

// headerDeferred sends the status line with the first (and, for
// json.Encoder, only) write of the body.
type headerDeferred struct {
	w      http.ResponseWriter
	status int
	wrote  bool
}

func (h *headerDeferred) Write(b []byte) (int, error) {
	if !h.wrote {
		h.wrote = true
		if len(b) <= 1<<16 {
			h.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		h.w.WriteHeader(h.status)
	}
	return h.w.Write(b)
}

// AsAPIError unwraps an *apiError from err.
func AsAPIError(err error) (*APIError, bool) {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae, true
	}
	return nil, false
}

// muxErrorWriter stands in for the ResponseWriter when ServeMux answers a
// request no pattern serves (its own plain-text 404/405): it keeps the
// status and headers (Allow) and replaces the body with Nova's shape.
// Anything else the mux answers (a redirect to a cleaned path) passes.
type muxErrorWriter struct {
	http.ResponseWriter
	wrote, pass bool
}

func (m *muxErrorWriter) WriteHeader(status int) {
	if m.wrote {
		return
	}
	m.wrote = true
	if status < 400 {
		m.pass = true
		m.ResponseWriter.WriteHeader(status)
		return
	}
	msg := "The resource could not be found."
	if status == http.StatusMethodNotAllowed {
		msg = "The method is not allowed for the requested URL."
	}
	writeError(m.ResponseWriter, status, msg)
}

func (m *muxErrorWriter) Write(b []byte) (int, error) {
	if !m.wrote {
		m.WriteHeader(http.StatusOK)
	}
	if m.pass {
		return m.ResponseWriter.Write(b)
	}
	return len(b), nil // the mux's plain-text body is dropped
}
