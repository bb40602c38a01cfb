package ironicnotify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

const sampleNode = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"

// sampleEnvelope is a notification as oslo.messaging 14 sends it for Ironic
// 21.4 (docs/ironic.md §13), with data as the payload's ironic_object.data.
func sampleEnvelope(t testing.TB, eventType string, data map[string]any) []byte {
	t.Helper()
	msg := map[string]any{
		"message_id": "0d3b0c38-5d2c-4f0a-9d3e-7c1b2a3d4e5f", "publisher_id": "ironic-conductor.localhost",
		"event_type": eventType, "priority": "INFO", "timestamp": "2026-12-01 20:37:35.526396",
		"payload": map[string]any{"ironic_object.name": "NodePayload", "ironic_object.namespace": "ironic",
			"ironic_object.version": "1.17", "ironic_object.data": data},
		"_context_request_id": "req-1",
	}
	inner, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(map[string]any{"oslo.version": "2.0", "oslo.message": string(inner)})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDecode(t *testing.T) {
	e, err := Decode(sampleEnvelope(t, "baremetal.node.provision_set.end", map[string]any{
		"uuid": sampleNode, "instance_uuid": "b6a7c9e0-0000-4000-8000-000000000001", "provision_state": "active",
		"target_provision_state": nil, "power_state": "power off", "target_power_state": nil, "maintenance": false,
		"previous_provision_state": "deploying", "event": "done", "last_error": nil}))
	if err != nil {
		t.Fatal(err)
	}
	want := Event{MessageID: "0d3b0c38-5d2c-4f0a-9d3e-7c1b2a3d4e5f", Type: TypeProvisionSet, Phase: PhaseEnd, NodeUUID: sampleNode,
		InstanceUUID: "b6a7c9e0-0000-4000-8000-000000000001", ProvisionState: "active", PowerState: "power off",
		At: time.Date(2026, 12, 1, 20, 37, 35, 526396000, time.UTC)}
	if e != want {
		t.Errorf("got  %+v\nwant %+v", e, want)
	}

	// A port's event names its node; it carries no node fields.
	e, err = Decode(sampleEnvelope(t, "baremetal.port.create.end", map[string]any{"uuid": "port-1", "node_uuid": sampleNode}))
	if err != nil || e.Type != TypePort || e.NodeUUID != sampleNode || e.NodeEvent() {
		t.Errorf("port event: %+v, %v", e, err)
	}
	// An action of a node ingot has no name for is still a node hint.
	if e, err := Decode(sampleEnvelope(t, "baremetal.node.inspect_set.error", map[string]any{"uuid": sampleNode})); err != nil || e.Type != TypeOther || e.Phase != PhaseError {
		t.Errorf("unknown node action: %+v, %v", e, err)
	}
	// oslo's 1.0 format: the message bare.
	var env map[string]string
	_ = json.Unmarshal(sampleEnvelope(t, "baremetal.node.power_set.start", map[string]any{"uuid": sampleNode}), &env)
	if e, err := Decode([]byte(env["oslo.message"])); err != nil || e.Type != TypePowerSet || e.Phase != PhaseStart {
		t.Errorf("bare message: %+v, %v", e, err)
	}
	// About no node: not an error worth a warning.
	if _, err := Decode(sampleEnvelope(t, "baremetal.chassis.create.end", map[string]any{"uuid": "c"})); !errors.Is(err, errNotNode) || errors.Is(err, ErrMalformed) {
		t.Errorf("chassis event: %v, want errNotNode", err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	for name, body := range map[string][]byte{
		"not JSON":             []byte("garbage"),
		"empty":                nil,
		"inner not JSON":       []byte(`{"oslo.version": "2.0", "oslo.message": "{"}`),
		"unknown version":      []byte(`{"oslo.version": "3.0", "oslo.message": "{}"}`),
		"message not string":   []byte(`{"oslo.version": "2.0", "oslo.message": {"event_type": "baremetal.node.update.end"}}`),
		"no event_type":        sampleEnvelope(t, "", map[string]any{"uuid": sampleNode}),
		"not Ironic's":         sampleEnvelope(t, "compute.instance.create.end", map[string]any{"uuid": sampleNode}),
		"unknown status":       sampleEnvelope(t, "baremetal.node.update.finished", map[string]any{"uuid": sampleNode}),
		"no node":              sampleEnvelope(t, "baremetal.node.update.end", map[string]any{}),
		"port without node":    sampleEnvelope(t, "baremetal.port.update.end", map[string]any{"uuid": "p"}),
		"payload not object":   []byte(`{"event_type": "baremetal.node.update.end", "payload": "x"}`),
		"bad uuid type":        sampleEnvelope(t, "baremetal.node.update.end", map[string]any{"uuid": 7}),
		"bad timestamp":        []byte(`{"event_type": "baremetal.node.update.end", "timestamp": "yesterday", "payload": {"ironic_object.data": {"uuid": "n"}}}`),
		"array":                []byte(`[1, 2]`),
		"maintenance not bool": sampleEnvelope(t, "baremetal.node.update.end", map[string]any{"uuid": sampleNode, "maintenance": "yes"}),
	} {
		if _, err := Decode(body); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode = %v, want ErrMalformed", name, err)
		}
	}
}

func TestTypeAndPhaseNames(t *testing.T) {
	if TypeMaintenanceSet.String() != "maintenance_set" || PhaseSuccess.String() != "success" || Type(99).String() != "Type(99)" {
		t.Errorf("names: %s %s %s", TypeMaintenanceSet, PhaseSuccess, Type(99))
	}
}

// logBuffer is a logger's output, safe for the consumer's goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) count(s string) int { return strings.Count(l.String(), s) }

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

func TestNewChecksConfig(t *testing.T) {
	h := func(context.Context, Event) {}
	for name, tc := range map[string]struct {
		cfg  Config
		h    Handler
		want string
	}{
		"not amqp":   {Config{URL: "http://u:s3cret@rabbit/", Queue: "q"}, h, "want amqp://"},
		"no host":    {Config{URL: "amqp://u:s3cret@:5672/", Queue: "q"}, h, "want amqp://"},
		"no queue":   {Config{URL: "amqp://rabbit/"}, h, "queue name is required"},
		"Ironic's":   {Config{URL: "amqp://rabbit/", Queue: DefaultTopic + ".info"}, h, "one of Ironic's own"},
		"no handler": {Config{URL: "amqp://rabbit/", Queue: "q"}, nil, "handler is required"},
		"unparsable": {Config{URL: "amqp://u:s3cret@rabbit:56 72/", Queue: "q"}, h, "does not parse"},
	} {
		_, err := New(tc.cfg, tc.h, nil, Hooks{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: New = %v, want %q without the password", name, err, tc.want)
		}
	}
	if _, err := New(Config{URL: "amqps://rabbit/", Queue: "q"}, h, nil, Hooks{}); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// TestRunStopsWhileBusDown: with no broker to reach, Run reports each
// failed attempt, keeps retrying, and returns at once when ctx is done.
func TestRunStopsWhileBusDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	failures := make(chan error, 100)
	c, err := New(Config{URL: "amqp://guest:s3cret@" + addr + "/", Queue: "q"}, func(context.Context, Event) {}, nil,
		Hooks{Disconnected: func(err error) { failures <- err }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for range 4 { // the first attempt and retries after 0.2, 0.4, 0.8 s; the next waits 1.6 s
		select {
		case err := <-failures:
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the password: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no Disconnected report while the bus is down")
		}
	}
	if st := c.Status(); st.Connected || st.LastError == "" {
		t.Errorf("status while down: %+v", st)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
	case <-time.After(500 * time.Millisecond):
		t.Fatal("Run did not return within 0.5 s of the cancel (in a 1.6 s backoff)")
	}
}
