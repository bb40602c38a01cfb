// Package ironicnotify consumes Ironic's versioned notifications from
// RabbitMQ (AMQP 0-9-1) and turns each into a small typed hint, Event: which
// node changed, how, and what the payload says its states are now. The
// oslo.messaging envelope and Ironic's event_type strings stop here.
//
// A notification is only a hint to look at the node now: Ironic does not
// notify every transition, and a payload can be incomplete (docs/ironic.md
// §13). A decision reads the node from Ironic's API, never from the Event.
package ironicnotify

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Type is what happened, by Ironic object and action.
type Type int

const (
	TypeOther               Type = iota // a node-related event ingot has no name for
	TypeNodeCreate                      // baremetal.node.create
	TypeNodeUpdate                      // baremetal.node.update (a PATCH)
	TypeNodeDelete                      // baremetal.node.delete
	TypeProvisionSet                    // baremetal.node.provision_set
	TypePowerSet                        // baremetal.node.power_set
	TypePowerStateCorrected             // baremetal.node.power_state_corrected (the power sync saw a change)
	TypeMaintenanceSet                  // baremetal.node.maintenance_set (set and unset)
	TypeConsoleSet                      // baremetal.node.console_set / console_restore
	TypePort                            // baremetal.port.* and baremetal.portgroup.*
	TypeVolume                          // baremetal.volumeconnector.* and baremetal.volumetarget.*
	TypeAllocation                      // baremetal.allocation.*
)

var typeNames = [...]string{"other", "node_create", "node_update", "node_delete", "provision_set", "power_set",
	"power_state_corrected", "maintenance_set", "console_set", "port", "volume", "allocation"}

func (t Type) String() string {
	if t < 0 || int(t) >= len(typeNames) {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// Phase is where in its action the notification was sent.
type Phase int

const (
	PhaseStart   Phase = iota + 1 // the action began
	PhaseEnd                      // it finished (for provision_set: a resting or waiting state was reached)
	PhaseSuccess                  // a provision step succeeded and the next began
	PhaseError                    // it failed (sent with priority ERROR)
)

var phaseNames = [...]string{"", "start", "end", "success", "error"}

func (p Phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return fmt.Sprintf("Phase(%d)", int(p))
	}
	return phaseNames[p]
}

// Event is one notification about a node. States are Ironic's own strings
// (the API's spelling, as internal/ironic's State* constants); they are
// the payload's view at the time of sending, possibly stale or partial.
type Event struct {
	MessageID string // oslo's message_id, unique per notification
	Type      Type
	Phase     Phase
	// NodeUUID is the node the event is about: the node itself, or the node
	// a port, volume connector or target, or allocation belongs to.
	NodeUUID string
	// The node's fields, for node events only (zero otherwise).
	InstanceUUID         string
	ProvisionState       string
	TargetProvisionState string
	PowerState           string
	TargetPowerState     string
	Maintenance          bool
	// At is when Ironic sent it (its clock, UTC, microseconds).
	At time.Time
	// Redelivered: the broker delivered it before without an ack (a
	// consumer stopped while handling it).
	Redelivered bool
}

// NodeEvent reports whether the event carries the node's own fields.
func (e Event) NodeEvent() bool {
	switch e.Type {
	case TypePort, TypeVolume, TypeAllocation:
		return false
	}
	return true
}

// ErrMalformed wraps every reason a message cannot be decoded.
var ErrMalformed = errors.New("malformed notification")

// errNotNode: a well-formed notification about no node (a chassis, a
// deploy template), dropped without a warning.
var errNotNode = errors.New("notification about no node")

// envelope is oslo.messaging's wire format 2.0; the message is a JSON
// document inside a JSON string.
type envelope struct {
	Version string  `json:"oslo.version"`
	Message *string `json:"oslo.message"`
}

type message struct {
	EventType string  `json:"event_type"`
	Priority  string  `json:"priority"`
	MessageID string  `json:"message_id"`
	Timestamp string  `json:"timestamp"`
	Payload   payload `json:"payload"`
}

type payload struct {
	Name string      `json:"ironic_object.name"`
	Data payloadData `json:"ironic_object.data"`
}

type payloadData struct {
	UUID                 string `json:"uuid"`
	NodeUUID             string `json:"node_uuid"`
	InstanceUUID         string `json:"instance_uuid"`
	ProvisionState       string `json:"provision_state"`
	TargetProvisionState string `json:"target_provision_state"`
	PowerState           string `json:"power_state"`
	TargetPowerState     string `json:"target_power_state"`
	Maintenance          bool   `json:"maintenance"`
}

// timestampLayout is oslo's: UTC without a zone.
const timestampLayout = "2006-01-02 15:04:05.999999"

// Decode turns one AMQP message body into an Event. It accepts the 2.0
// envelope and a bare message (oslo's 1.0 format). An error wraps
// ErrMalformed, or says the notification concerns no node.
func Decode(body []byte) (Event, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	raw := body
	if env.Message != nil {
		if env.Version != "2.0" {
			return Event{}, fmt.Errorf("%w: oslo.version %q", ErrMalformed, env.Version)
		}
		raw = []byte(*env.Message)
	}
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return Event{}, fmt.Errorf("%w: oslo.message: %v", ErrMalformed, err)
	}
	// baremetal.<object>.<action>.<status>
	parts := strings.Split(m.EventType, ".")
	if len(parts) != 4 || parts[0] != "baremetal" {
		return Event{}, fmt.Errorf("%w: event_type %q", ErrMalformed, m.EventType)
	}
	e := Event{MessageID: m.MessageID, Type: classify(parts[1], parts[2])}
	switch parts[3] {
	case "start":
		e.Phase = PhaseStart
	case "end":
		e.Phase = PhaseEnd
	case "success":
		e.Phase = PhaseSuccess
	case "error":
		e.Phase = PhaseError
	default:
		return Event{}, fmt.Errorf("%w: status %q in event_type %q", ErrMalformed, parts[3], m.EventType)
	}
	if m.Timestamp != "" {
		at, err := time.Parse(timestampLayout, m.Timestamp)
		if err != nil {
			return Event{}, fmt.Errorf("%w: timestamp %q", ErrMalformed, m.Timestamp)
		}
		e.At = at
	}
	d := m.Payload.Data
	switch {
	case parts[1] == "node":
		e.NodeUUID = d.UUID
		e.InstanceUUID, e.Maintenance = d.InstanceUUID, d.Maintenance
		e.ProvisionState, e.TargetProvisionState = d.ProvisionState, d.TargetProvisionState
		e.PowerState, e.TargetPowerState = d.PowerState, d.TargetPowerState
	case e.Type == TypeOther:
		return Event{}, fmt.Errorf("%w: %s", errNotNode, m.EventType)
	default:
		e.NodeUUID = d.NodeUUID
	}
	if e.NodeUUID == "" {
		return Event{}, fmt.Errorf("%w: %s names no node", ErrMalformed, m.EventType)
	}
	return e, nil
}

// classify names an Ironic object and action (Ironic 2023.1's list).
func classify(object, action string) Type {
	switch object {
	case "node":
		switch action {
		case "create":
			return TypeNodeCreate
		case "update":
			return TypeNodeUpdate
		case "delete":
			return TypeNodeDelete
		case "provision_set":
			return TypeProvisionSet
		case "power_set":
			return TypePowerSet
		case "power_state_corrected":
			return TypePowerStateCorrected
		case "maintenance_set":
			return TypeMaintenanceSet
		case "console_set", "console_restore":
			return TypeConsoleSet
		}
		return TypeOther
	case "port", "portgroup":
		return TypePort
	case "volumeconnector", "volumetarget":
		return TypeVolume
	case "allocation":
		return TypeAllocation
	}
	return TypeOther // chassis, deploytemplate: Decode drops them
}
