package novanotify

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// Priorities, as oslo.messaging spells them (and the routing key's suffix,
// lower-cased).
const (
	PriorityInfo  = "INFO"
	PriorityError = "ERROR"
)

// TimestampLayout is oslo.messaging's message timestamp (UTC, no zone).
const TimestampLayout = "2006-01-02 15:04:05.000000"

// Message is oslo.messaging's notification message (the envelope's
// oslo.message).
type Message struct {
	MessageID   string `json:"message_id"`
	PublisherID string `json:"publisher_id"`
	EventType   string `json:"event_type"`
	Priority    string `json:"priority"`
	Payload     Object `json:"payload"`
	Timestamp   string `json:"timestamp"`
}

// Builder makes the outbox notices of a server's changes (a
// store.Notifier through Notices).
type Builder struct {
	// HostOf is the compute host of a node, the payloads' host (as the
	// API's OS-EXT-SRV-ATTR:host); nil: Host.
	HostOf func(node string) string
	// Host is the payloads' host when HostOf is nil.
	Host string
	// PublisherID is the messages' publisher_id (Nova's
	// nova-compute:<host>).
	PublisherID string
	// Now is the clock of the timestamps (nil: time.Now).
	Now func() time.Time
	// FlavorName names a flavor by id ("" or nil: the payload's name is
	// the id; the server's record keeps the flavor's sizes, not its name).
	FlavorName func(id string) string
}

// Notices are the notices of the change old -> new (Events), each with
// a fresh message_id. Pure but for the clock and the ids.
func (b Builder) Notices(old, new *lifecycle.Server) []store.Notice {
	types := Events(old, new)
	if len(types) == 0 {
		return nil
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	at := now().UTC()
	out := make([]store.Notice, 0, len(types))
	for _, et := range types {
		m := Message{
			MessageID: uuid.NewString(), PublisherID: b.PublisherID, EventType: et, Priority: PriorityInfo,
			Payload: b.object(et, old, new, at), Timestamp: at.Format(TimestampLayout),
		}
		if strings.HasSuffix(et, ".error") {
			m.Priority = PriorityError
		}
		body, err := json.Marshal(m)
		if err != nil {
			continue // every field is a plain value: cannot fail
		}
		out = append(out, store.Notice{MessageID: m.MessageID, EventType: et, Priority: m.Priority, ServerID: new.ID,
			Body: body, CreatedAt: at})
	}
	return out
}

// object is the payload of event et.
func (b Builder) object(et string, old, new *lifecycle.Server, at time.Time) Object {
	flavorName := new.Spec.FlavorID
	if b.FlavorName != nil {
		if name := b.FlavorName(flavorName); name != "" {
			flavorName = name
		}
	}
	host := b.Host
	if b.HostOf != nil && new.NodeID != "" {
		host = b.HostOf(new.NodeID)
	}
	base := payload(new, host, flavorName)
	act := action{instance: base, Fault: fault(new)}
	switch {
	case et == Update:
		was, is := lifecycle.Nova(old), lifecycle.Nova(new)
		u := update{
			instance: base, Bandwidth: []any{}, Tags: tags(new),
			StateUpdate: object("InstanceStateUpdatePayload", versionStateUpdate, stateUpdate{
				OldState: was.VMState, State: is.VMState,
				OldTaskState: nullString(was.TaskState), NewTaskState: nullString(is.TaskState),
			}),
			AuditPeriod: object("AuditPeriodPayload", versionAuditPeriod, auditPeriod{
				Beginning: time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC).Format(payloadTimeLayout),
				Ending:    at.Format(payloadTimeLayout),
			}),
		}
		if old.Name != new.Name {
			u.OldDisplayName = &old.Name
		}
		return object("InstanceUpdatePayload", versionUpdate, u)
	case strings.HasPrefix(et, "instance.create."):
		return object("InstanceCreatePayload", versionCreate, create{
			action: act, Keypairs: []any{}, Tags: tags(new), InstanceName: "instance-" + new.ID,
		})
	case strings.HasPrefix(et, "instance.rebuild."):
		return object("InstanceActionRebuildPayload", versionRebuild, rebuild{action: act})
	case strings.HasPrefix(et, "instance.rescue."):
		return object("InstanceActionRescuePayload", versionRescue, rescue{action: act})
	case strings.HasPrefix(et, "instance.volume_attach."), strings.HasPrefix(et, "instance.volume_detach."):
		return object("InstanceActionVolumePayload", versionVolume, volumeAction{action: act, VolumeID: new.Op.VolumeID})
	}
	return object("InstanceActionPayload", versionAction, act)
}

func tags(s *lifecycle.Server) []string {
	if s.Spec.Tags == nil {
		return []string{}
	}
	return s.Spec.Tags
}
