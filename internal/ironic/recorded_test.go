package ironic_test

// Responses the noop-network Ironic of the test environments cannot produce
// (it accepts every VIF call), replayed from the real bodies recorded with
// network_interface=flat in docs/ironic.md §4.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingot-dev/ingot/internal/ironic"
)

func replay(t *testing.T, status int, body string) *ironic.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-OpenStack-Ironic-API-Version") != "1.78" {
			t.Errorf("microversion header = %q", r.Header.Get("X-OpenStack-Ironic-API-Version"))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := ironic.New(ironic.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAttachVIFAlreadyAttachedIsSuccess(t *testing.T) {
	c := replay(t, 409, `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Unable to attach VIF because VIF v1 is already attached to Ironic Port 5e1b6e8e-7d47-4a4e-9a57-3c3f2b0f6c11\", \"debuginfo\": null}"}`)
	if err := c.AttachVIF(context.Background(), "n1", "v1"); err != nil {
		t.Fatalf("AttachVIF already attached = %v, want nil", err)
	}
}

func TestAttachVIFLockedIsNotSuccess(t *testing.T) {
	c := replay(t, 409, `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node n1 is locked by host localhost, please retry after the current operation is completed.\", \"debuginfo\": null}"}`)
	if err := c.AttachVIF(context.Background(), "n1", "v1"); !errors.Is(err, ironic.ErrNodeLocked) {
		t.Fatalf("AttachVIF on a locked node = %v, want ErrNodeLocked", err)
	}
}

func TestDetachVIFNotAttachedIsNotFound(t *testing.T) {
	c := replay(t, 400, `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Unable to detach VIF v1 from node n1 because it is not attached to it.\", \"debuginfo\": null}"}`)
	err := c.DetachVIF(context.Background(), "n1", "v1")
	if !errors.Is(err, ironic.ErrNotFound) || errors.Is(err, ironic.ErrInvalid) {
		t.Fatalf("DetachVIF not attached = %v, want ErrNotFound only", err)
	}
}

// Null strings decode to "", and the node is read from the list body.
func TestDecodeNulls(t *testing.T) {
	c := replay(t, 200, `{"nodes": [{"uuid": "u1", "name": null, "instance_uuid": null, "provision_state": "available",
		"target_provision_state": null, "power_state": null, "maintenance": false, "maintenance_reason": null,
		"last_error": null, "reservation": null, "resource_class": null, "traits": [],
		"provision_updated_at": "2026-11-30T01:46:44.567001+00:00", "links": []}]}`)
	nodes, err := c.ListNodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 {
		t.Fatalf("nodes = %+v", nodes)
	}
	n := nodes[0]
	if n.UUID != "u1" || n.Name != "" || n.PowerState != "" || n.TargetProvisionState != "" || n.LastError != "" ||
		n.Reservation != "" || n.ProvisionUpdatedAt.Unix() != 1796003204 {
		t.Fatalf("decoded %+v (provision_updated_at %d)", n, n.ProvisionUpdatedAt.Unix())
	}
}
