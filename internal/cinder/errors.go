package cinder

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// What a failed call means to its caller; every error the package returns
// wraps one of them (as an *Error when Cinder answered).
var (
	ErrVolumeNotFound     = errors.New("cinder: volume not found")
	ErrAttachmentNotFound = errors.New("cinder: attachment not found")
	ErrSnapshotNotFound   = errors.New("cinder: snapshot not found")
	// ErrVolumeNotAvailable: the volume's status forbids the call (another
	// server's attachment, or a delete of an attached volume): Cinder's
	// 400 "… status must be available …".
	ErrVolumeNotAvailable = errors.New("cinder: volume not available")
	// ErrDuplicateConnector: the connector is already on another of the
	// volume's attachments (Cinder's 500 "duplicate connectors detected").
	ErrDuplicateConnector = errors.New("cinder: duplicate connector")
	// ErrComputeRefused: Cinder asked the catalog's compute endpoint about
	// an attachment a user's token (no service token) deletes, and compute
	// still uses it (409), or Cinder failed to ask (a bare 500: no compute
	// endpoint in the catalog; then ErrUnavailable too).
	ErrComputeRefused = errors.New("cinder: compute refused the attachment's deletion")
	// ErrImageNotUsable: a volume from an image Cinder cannot read from
	// the image service (a 400 "Invalid image identifier …").
	ErrImageNotUsable = errors.New("cinder: image not usable")
	ErrUnauthorized   = errors.New("cinder: unauthorized")
	ErrForbidden      = errors.New("cinder: forbidden")
	// ErrBadRequest: any other 4xx; the *Error keeps Cinder's message.
	ErrBadRequest = errors.New("cinder: bad request")
	// ErrUnavailable: Cinder unreachable or failing (5xx); worth a retry.
	ErrUnavailable = errors.New("cinder: unavailable")
)

// Error is Cinder's answer to a failed call.
type Error struct {
	// Op names the call, e.g. "create attachment".
	Op string
	// Status is the HTTP status (0 when Cinder did not answer).
	Status int
	// Message is Cinder's own message (or the transport error's).
	Message string
	kind    error
	cause   error
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("cinder: %s: %s", e.Op, e.Message)
	}
	return fmt.Sprintf("cinder: %s: %d %s", e.Op, e.Status, e.Message)
}

// Unwrap gives the sentinel the error is classified as (and the
// transport's error when Cinder did not answer).
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}

// notFound is what a 404 of the call means.
type notFound error

// classify turns an error of gophercloud's into an *Error; a 404 becomes nf.
func classify(op string, err error, nf notFound) error {
	if err == nil {
		return nil
	}
	var resp gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &resp) {
		// No answer: the transport's error (a cancelled context stays
		// visible through errors.Is).
		return &Error{Op: op, Message: err.Error(), kind: ErrUnavailable, cause: err}
	}
	e := &Error{Op: op, Status: resp.Actual, Message: message(resp.Body)}
	low := strings.ToLower(e.Message)
	switch {
	case resp.Actual == http.StatusNotFound && nf != nil:
		e.kind = nf
	case resp.Actual == http.StatusBadRequest && strings.Contains(low, "status must be"):
		e.kind = ErrVolumeNotAvailable
	case resp.Actual == http.StatusBadRequest && strings.Contains(low, "invalid image identifier"):
		e.kind = ErrImageNotUsable
	case strings.Contains(low, "duplicate connectors"):
		e.kind = ErrDuplicateConnector
	case resp.Actual == http.StatusConflict && strings.Contains(low, "nova"):
		e.kind = ErrComputeRefused
	case resp.Actual == http.StatusUnauthorized:
		e.kind = ErrUnauthorized
	case resp.Actual == http.StatusForbidden:
		e.kind = ErrForbidden
	case resp.Actual >= 500:
		e.kind = ErrUnavailable
	default:
		e.kind = ErrBadRequest
	}
	return e
}

// message reads Cinder's fault body, {"badRequest": {"code": 400,
// "message": "…"}}, whatever its key; else the body itself.
func message(body []byte) string {
	var fault map[string]struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &fault) == nil {
		for _, f := range fault {
			if f.Message != "" {
				return f.Message
			}
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
