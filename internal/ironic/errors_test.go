package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
)

// ironicBody double-encodes a faultstring the way Ironic does.
func ironicBody(faultcode, faultstring string) []byte {
	inner, _ := json.Marshal(map[string]any{"faultcode": faultcode, "faultstring": faultstring, "debuginfo": nil})
	outer, _ := json.Marshal(map[string]string{"error_message": string(inner)})
	return outer
}

func marshalErr() error {
	_, err := json.Marshal(make(chan int))
	return err
}

func httpErr(status int, body []byte) error {
	return gophercloud.ErrUnexpectedResponseCode{Method: "PATCH", URL: "http://x/v1/nodes/n", Actual: status, Body: body}
}

// The bodies below are quoted from the real Ironic 21.4 (docs/ironic.md).
func TestClassify(t *testing.T) {
	const n = "320591b9-9e55-4462-9256-04440ef1ffa8"
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v1", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
	reset := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v1", Err: &net.OpError{Op: "read", Net: "tcp",
		Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}
	tests := []struct {
		name   string
		err    error
		want   error
		inText string
	}{
		{"node associated (§3)", httpErr(409, ironicBody("Client", "Node "+n+" is associated with instance 812bed85-c87c-4cfd-ab86-ee028861adf3.")), ErrNodeAssociated, "is associated with instance"},
		{"instance associated (§3)", httpErr(409, ironicBody("Client", "Instance c64039e9-c0ee-4b6b-b5e8-6f8acfe70078 is already associated with a node, it cannot be associated with this other node 73d179c1-1b22-4f70-95f5-af34759b948f")), ErrInstanceAssociated, "already associated"},
		{"node locked (§7)", httpErr(409, ironicBody("Client", "Node 974f5aea-9ee6-43f6-b17a-62e62c3a9242 is locked by host localhost, please retry after the current operation is completed.")), ErrNodeLocked, "locked by host"},
		{"transition in progress (§7A)", httpErr(409, ironicBody("Client", "Node "+n+" can not be updated while a state transition is in progress.")), ErrNodeLocked, "state transition"},
		{"duplicate boot index (§5)", httpErr(409, ironicBody("Client", "A volume target with boot index '0' for the same node already exists.")), ErrInvalid, "boot index"},
		{"duplicate MAC (§2)", httpErr(409, ironicBody("Client", "A port with MAC address 52:54:00:00:00:01 already exists.")), ErrInvalid, "MAC"},
		{"delete active (§7C)", httpErr(409, ironicBody("Client", `Can not delete node "`+n+`" while it is in provision state "active". Valid provision states to perform deletion are: "('manageable', 'enroll', 'adopt failed', 'available')", or set the node into maintenance mode`)), ErrInvalidState, "provision state"},
		{"allocation removal (§3)", httpErr(409, ironicBody("Client", "Node "+n+" with an allocation can not have instance_uuid removed unless it is in one of allowed (enroll, inspecting, inspect wait, manageable, available) states or in maintenance mode.")), ErrInvalidState, "allocation"},
		{"unknown 409 is transient", httpErr(409, ironicBody("Client", "Something new.")), ErrNodeLocked, "Something new."},
		{"VIF already attached 409 (handled by AttachVIF)", httpErr(409, ironicBody("Client", "Unable to attach VIF because VIF v1 is already attached to Ironic Port p1")), ErrNodeLocked, "already attached"},
		{"not found (§7D)", httpErr(404, ironicBody("Client", "Node d950e625-1a42-4c77-80cb-4cc12358d129 could not be found.")), ErrNotFound, "could not be found"},
		{"routing 404 (§0)", httpErr(404, []byte(`{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`)), ErrNotFound, "Not Found"},
		{"406 microversion (§0)", httpErr(406, []byte(`{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.83 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\"}"}`)), ErrInvalid, "Version 1.83"},
		{"deploy enroll node (§6)", httpErr(400, ironicBody("Client", `The requested action "active" can not be performed on node "`+n+`" while it is in state "enroll".`)), ErrInvalidState, "enroll"},
		{"maintenance (§6)", httpErr(400, ironicBody("Client", "The provisioning operation can't be performed on node "+n+" because it's in maintenance mode.")), ErrInvalidState, "maintenance"},
		{"target delete powered on (§5)", httpErr(400, ironicBody("Client", `The requested action "volume target update" can not be performed on node "`+n+`" while it is in state "power on".`)), ErrInvalidState, "power on"},
		{"abort in wait call-back (§7B)", httpErr(400, ironicBody("Client", `The requested action "abort" can not be performed on node "`+n+`" while it is in state "wait call-back".`)), ErrInvalidState, "wait call-back"},
		{"bad uuid (§3)", httpErr(400, ironicBody("Client", "Expected UUID for instance_uuid: not-a-uuid")), ErrInvalid, "Expected UUID"},
		{"traits missing (§6)", httpErr(400, ironicBody("Client", "Failed to validate deploy or power info for node "+n+": Cannot specify instance traits that are not also set on the node. Node "+n+" is missing traits CUSTOM_X")), ErrInvalid, "CUSTOM_X"},
		{"schema error (§3)", httpErr(400, ironicBody("Client", "Schema error for patch: 'test' is not one of ['add', 'replace', 'remove']")), ErrInvalid, "Schema error"},
		{"concurrent action limit 500 (§6)", httpErr(500, ironicBody("Server", "Unable to process request at this time. The concurrent action limit for unprovisioning has been reached. Please contact your administrator and try again later.")), ErrUnavailable, "concurrent action limit"},
		{"no free conductor worker 503", httpErr(503, ironicBody("Server", "Requested action cannot be performed due to lack of free conductor workers.")), ErrUnavailable, "free conductor"},
		{"bad image href 500 (§6)", httpErr(500, ironicBody("Server", "Validation of image href x failed, reason: Scheme-less image href is not a UUID.")), ErrInvalid, "image href"},
		{"no-rescue 500 (§12)", httpErr(500, ironicBody("Server", "Failed to rescue instance i for node n: Validation failed: Driver fake-hardware does not support rescue (disabled or not implemented).")), ErrInvalid, "does not support rescue"},
		{"502 from a proxy, not JSON", httpErr(502, []byte("<html>Bad Gateway</html>")), ErrUnavailable, "Bad Gateway"},
		{"429", httpErr(429, nil), ErrUnavailable, "HTTP 429"},
		{"connection refused", refused, ErrUnavailable, "connection refused"},
		{"connection reset", reset, ErrUnavailable, "connection reset"},
		{"EOF", &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, ErrUnavailable, "EOF"},
		{"unexpected EOF in body", io.ErrUnexpectedEOF, ErrUnavailable, "unexpected EOF"},
		{"per-call timeout", &url.Error{Op: "Get", URL: "http://x", Err: context.DeadlineExceeded}, ErrUnavailable, "per-call timeout"},
		{"garbled 200 body", &json.SyntaxError{}, ErrUnavailable, "PATCH node n"},
		{"unencodable request", marshalErr(), ErrInvalid, "unsupported type"},
		{"already classified", fmt.Errorf("%w: x", ErrNotFound), ErrNotFound, "x"},
	}
	all := []error{ErrNotFound, ErrNodeAssociated, ErrInstanceAssociated, ErrNodeLocked, ErrUnavailable, ErrInvalidState, ErrInvalid}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := classify("PATCH node n", tc.err)
			if !errors.Is(got, tc.want) {
				t.Fatalf("classify = %v, want %v", got, tc.want)
			}
			for _, s := range all {
				if s != tc.want && errors.Is(got, s) {
					t.Errorf("also wraps %v", s)
				}
			}
			if !strings.Contains(got.Error(), tc.inText) {
				t.Errorf("message %q lacks %q", got, tc.inText)
			}
			var ue gophercloud.ErrUnexpectedResponseCode
			var pue *gophercloud.ErrUnexpectedResponseCode
			if errors.As(got, &ue) || errors.As(got, &pue) {
				t.Errorf("a gophercloud type leaks: %#v", got)
			}
		})
	}
}

func TestInstanceInfoOps(t *testing.T) {
	current := map[string]any{
		"image_source": "http://a/img", "root_gb": json.Number("10"), "capabilities": map[string]any{"boot_mode": "uefi"},
		"gone": "x", "image_type": "whole-disk",
	}
	want := map[string]any{
		"image_source": "http://b/img",                         // changed
		"root_gb":      10,                                     // same number, other type
		"capabilities": map[string]string{"boot_mode": "uefi"}, // same, other type
		"gone":         nil,                                    // removed
		"absent":       nil,                                    // nothing to remove
		"a/b~c":        "new",                                  // added, escaped
	}
	ops, err := instanceInfoOps(current, want)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(ops)
	const expect = `[{"op":"add","path":"/instance_info/a~1b~0c","value":"new"},{"op":"remove","path":"/instance_info/gone"},{"op":"add","path":"/instance_info/image_source","value":"http://b/img"}]`
	if string(got) != expect {
		t.Fatalf("ops = %s\nwant  %s", got, expect)
	}
	if ops, _ := instanceInfoOps(current, map[string]any{"image_source": "http://a/img"}); len(ops) != 0 {
		t.Fatalf("no change must give no ops, got %v", ops)
	}
	if _, err := instanceInfoOps(nil, map[string]any{"bad": make(chan int)}); err == nil {
		t.Fatal("unencodable value accepted")
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]string{
		"2026-11-30T01:46:44.567001+00:00": "2026-11-30T01:46:44.567001Z",
		"2026-11-30T01:46:44+00:00":        "2026-11-30T01:46:44Z",
		"2026-11-30T01:46:44.567001":       "2026-11-30T01:46:44.567001Z",
		"":                                 "0001-01-01T00:00:00Z",
		"garbage":                          "0001-01-01T00:00:00Z",
	} {
		if got := parseTime(in).Format("2006-01-02T15:04:05.999999Z07:00"); got != want {
			t.Errorf("parseTime(%q) = %s, want %s", in, got, want)
		}
	}
}
