package ironicnotify

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Tests on the machine's RabbitMQ alone (a fresh vhost each), publishing
// what Ironic would.

// TestMalformedIsDropped: a message that is not a notification is rejected
// with a warning, and the next one is delivered.
func TestMalformedIsDropped(t *testing.T) {
	bus := ironictest.NewBus(t)
	rec := newRecorder()
	var logs logBuffer
	r := start(t, bus, "ingot-malformed", rec, logs.logger())
	publish(t, bus, "ingot-malformed", []byte(`{"oslo.version": "2.0", "oslo.message": "{not json"}`))
	publish(t, bus, "ingot-malformed", []byte(`not even json`))
	publish(t, bus, "ingot-malformed", sampleEnvelope(t, "baremetal.node.power_set.end", map[string]any{"uuid": sampleNode, "power_state": "power on"}))
	rec.waitEvent(t, 0, waitEvent, "the good message", powerEnd(sampleNode, "power on"))
	rec.wait(t, "the ack", waitEvent, func() bool { return rec.delivered == 1 })
	if st := r.c.Status(); st.Dropped != 2 || st.Events != 1 || !st.Connected {
		t.Errorf("status: %+v, want 2 dropped, 1 event, connected", st)
	}
	if n := logs.count("does not decode"); n != 2 {
		t.Errorf("%d warnings about undecodable messages, want 2:\n%s", n, logs.String())
	}
	if depth := queueDepth(t, bus, "ingot-malformed"); depth != 0 {
		t.Errorf("%d messages left in the queue, want 0 (rejected, not requeued)", depth)
	}
}

// TestEveryReplicaGetsEveryEvent: two replicas, each with its own queue,
// both get a notification published to Ironic's exchange (each acts on
// the nodes it holds), and Ironic's default queue keeps its copy.
func TestEveryReplicaGetsEveryEvent(t *testing.T) {
	bus := ironictest.NewBus(t)
	a, b := newRecorder(), newRecorder()
	start(t, bus, "ingot.replica-a", a, nil)
	start(t, bus, "ingot.replica-b", b, nil)
	declareAsIronic(t, bus, false)
	publishTo(t, bus, DefaultExchange, DefaultTopic+".info",
		sampleEnvelope(t, "baremetal.node.power_set.end", map[string]any{"uuid": sampleNode, "power_state": "power on"}))
	a.waitEvent(t, 0, waitEvent, "the event on replica a", powerEnd(sampleNode, "power on"))
	b.waitEvent(t, 0, waitEvent, "the event on replica b", powerEnd(sampleNode, "power on"))
	if n := queueDepth(t, bus, DefaultTopic+".info"); n != 1 {
		t.Errorf("Ironic's default queue holds %d messages, want its copy (1)", n)
	}
}

// TestDurableExchangeLeftAlone: an Ironic set up with amqp_durable_queues
// declared a durable exchange; a consumer configured for Ironic's default
// (non-durable) still consumes, because it never re-declares an exchange
// that exists (a declare with the other durability is a 406 that closes
// the channel).
func TestDurableExchangeLeftAlone(t *testing.T) {
	bus := ironictest.NewBus(t)
	declareAsIronic(t, bus, true)
	rec := newRecorder()
	start(t, bus, "ingot-durable", rec, nil)
	publishTo(t, bus, DefaultExchange, DefaultTopic+".error",
		sampleEnvelope(t, "baremetal.node.provision_set.error", map[string]any{"uuid": sampleNode, "provision_state": "deploy failed"}))
	g := rec.waitEvent(t, 0, waitEvent, "the error event", func(e Event) bool { return e.Phase == PhaseError })
	if g.Type != TypeProvisionSet || g.ProvisionState != "deploy failed" {
		t.Errorf("got %+v", g.Event)
	}
}

// declareAsIronic declares the exchange and the default info queue as
// oslo.messaging does on Ironic's first publish.
func declareAsIronic(t *testing.T, bus *ironictest.Bus, durable bool) {
	t.Helper()
	ch := channel(t, bus)
	if err := ch.ExchangeDeclare(DefaultExchange, amqp.ExchangeTopic, durable, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	q := DefaultTopic + ".info"
	if _, err := ch.QueueDeclare(q, durable, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(q, q, DefaultExchange, false, nil); err != nil {
		t.Fatal(err)
	}
}
