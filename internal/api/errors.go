package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// apiError is an error answered to the client in Nova's shape:
// {"<key>": {"code": N, "message": "..."}}. Handlers return it; anything else
// they return becomes a logged 500 computeFault.
type apiError struct {
	status  int
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.status, e.message) }

func badRequest(format string, a ...any) error {
	return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) error {
	return &apiError{status: http.StatusNotFound, message: fmt.Sprintf(format, a...)}
}

func conflict(format string, a ...any) error {
	return &apiError{status: http.StatusConflict, message: fmt.Sprintf(format, a...)}
}

func unavailable(format string, a ...any) error {
	return &apiError{status: http.StatusServiceUnavailable, message: fmt.Sprintf(format, a...)}
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
	writeJSON(w, status, map[string]errorBody{errorKey(status): {Code: status, Message: message}})
}

// writeJSON answers v as JSON. An encoding failure is a programming error;
// it can only be reported as a truncated body, so it is ignored here.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"computeFault": {"code": 500, "message": "response encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// asAPIError unwraps an *apiError from err.
func asAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	return nil, false
}

// muxErrorWriter stands in for the ResponseWriter when ServeMux answers a
// request no pattern serves (its own plain-text 404/405): it keeps the
// status and headers (Allow) and replaces the body with Nova's shape.
type muxErrorWriter struct {
	http.ResponseWriter
	wrote bool
}

func (m *muxErrorWriter) WriteHeader(status int) {
	if m.wrote {
		return
	}
	m.wrote = true
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
	return len(b), nil // the mux's plain-text body is dropped
}
