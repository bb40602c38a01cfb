package neutron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
)

// The kinds of error the core sees. Every error a Client method returns
// wraps exactly one of them (through *Error when Neutron answered), except
// when the caller's ctx ended first: then it wraps ctx.Err() instead.
var (
	ErrPortNotFound          = errors.New("neutron: port not found")
	ErrNetworkNotFound       = errors.New("neutron: network not found")
	ErrSubnetNotFound        = errors.New("neutron: subnet not found")
	ErrSecurityGroupNotFound = errors.New("neutron: security group not found")
	ErrNotFound              = errors.New("neutron: not found")
	// ErrIPAddressInUse: the fixed IP asked for is taken (Nova's FixedIpAlreadyInUse).
	ErrIPAddressInUse = errors.New("neutron: IP address already allocated")
	// ErrNoMoreAddresses: the network has no free address (Nova's NoMoreFixedIps).
	ErrNoMoreAddresses = errors.New("neutron: no more IP addresses on the network")
	// ErrMACAddressInUse: the MAC asked for is on another port of the network.
	ErrMACAddressInUse = errors.New("neutron: MAC address in use")
	// ErrPortBound: a change a bound port refuses (its MAC); unbind first.
	ErrPortBound = errors.New("neutron: port is bound")
	// ErrPortInUse: the port belongs to another device (Nova's PortInUse).
	ErrPortInUse = errors.New("neutron: port in use by another device")
	// ErrBindingFailed: Neutron accepted the binding but no mechanism
	// driver bound it (binding:vif_type binding_failed; HTTP 200).
	ErrBindingFailed = errors.New("neutron: port binding failed")
	ErrConflict      = errors.New("neutron: conflict")
	ErrNotAuthorized = errors.New("neutron: not authorized (token refused)")
	// ErrForbidden: policy refused the call (e.g. a member asking a fixed IP
	// on a shared network it does not own).
	ErrForbidden = errors.New("neutron: forbidden by policy")
	// ErrBadRequest: Neutron refused the request's content; Error.Message
	// keeps Neutron's text for a Nova-shaped 400.
	ErrBadRequest = errors.New("neutron: bad request")
	// ErrUnavailable: no answer, or a 5xx: transient, retry with backoff.
	ErrUnavailable = errors.New("neutron: unavailable")
)

// Error is an answer of Neutron classified: Kind is one of the sentinels,
// Type and Message are Neutron's NeutronError (e.g. "IpAddressAlreadyAllocated").
type Error struct {
	Kind    error
	Op      string
	Status  int
	Type    string
	Message string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%v: %s", e.Kind, e.Op)
	if e.Status != 0 {
		msg += fmt.Sprintf(": %d", e.Status)
	}
	if e.Type != "" {
		msg += " " + e.Type
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Kind }

// notFoundTypes and conflictTypes map Neutron's error type names (the
// exception classes of neutron and neutron-lib) to kinds.
var notFoundTypes = map[string]error{
	"PortNotFound":          ErrPortNotFound,
	"NetworkNotFound":       ErrNetworkNotFound,
	"SubnetNotFound":        ErrSubnetNotFound,
	"SecurityGroupNotFound": ErrSecurityGroupNotFound,
}

var conflictTypes = map[string]error{
	"IpAddressAlreadyAllocated":  ErrIPAddressInUse,
	"IpAddressInUse":             ErrIPAddressInUse,
	"IpAddressGenerationFailure": ErrNoMoreAddresses,
	"MacAddressInUse":            ErrMACAddressInUse,
	"PortBound":                  ErrPortBound,
	"PortInUse":                  ErrPortInUse,
}

// classify turns a gophercloud error into an *Error; a nil error stays nil.
func classify(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ue) {
		var pue *gophercloud.ErrUnexpectedResponseCode
		if !errors.As(err, &pue) || pue == nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fmt.Errorf("neutron: %s: %w", op, ctxErr)
			}
			// No answer (or an unreadable one, or the per-call timeout).
			return &Error{Kind: ErrUnavailable, Op: op, Message: err.Error()}
		}
		ue = *pue
	}
	typ, msg := neutronError(ue.Body)
	e := &Error{Op: op, Status: ue.Actual, Type: typ, Message: msg}
	switch s := ue.Actual; {
	case s == http.StatusNotFound:
		e.Kind = ErrNotFound
		if k, ok := notFoundTypes[typ]; ok {
			e.Kind = k
		}
	case s == http.StatusConflict:
		e.Kind = ErrConflict
		if k, ok := conflictTypes[typ]; ok {
			e.Kind = k
		}
	case s == http.StatusUnauthorized:
		e.Kind = ErrNotAuthorized
	case s == http.StatusForbidden:
		e.Kind = ErrForbidden
	case s >= 500 || s == http.StatusTooManyRequests:
		e.Kind = ErrUnavailable
	default:
		e.Kind = ErrBadRequest
	}
	return e
}

// neutronError reads {"NeutronError": {"type", "message", "detail"}};
// a body of another shape (keystonemiddleware's 401, a proxy's page) gives
// its text as the message.
func neutronError(body []byte) (typ, msg string) {
	var b struct {
		NeutronError struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"NeutronError"`
	}
	if json.Unmarshal(body, &b) == nil && (b.NeutronError.Type != "" || b.NeutronError.Message != "") {
		return b.NeutronError.Type, b.NeutronError.Message
	}
	const max = 300
	if len(body) > max {
		body = body[:max]
	}
	return "", string(body)
}
