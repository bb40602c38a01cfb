package ironicnotify

import (
	"encoding/json"
	"errors"
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
