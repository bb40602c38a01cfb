package ironicnotify

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Tests against Debian's Ironic publishing to the machine's RabbitMQ, each on
// a fresh vhost. Skipped when either is missing, failed then with
// INGOT_TEST_IRONIC=1.

const waitEvent = 15 * time.Second

func realIronic(t *testing.T) (*ironictest.Bus, *ironictest.Env) {
	t.Helper()
	bus := ironictest.NewBus(t)
	env := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL})
	return bus, env
}

// call sends an API call, retrying while the node is locked (the conductor
// keeps the lock a moment after a change, docs/ironic.md §11), and returns
// when the accepted call was sent.
func call(t *testing.T, env *ironictest.Env, method, path string, body any, want int) time.Time {
	t.Helper()
	deadline := time.Now().Add(waitEvent)
	for {
		sent := time.Now()
		r := env.Request(t, method, path, body)
		if r.Status == want {
			return sent
		}
		if r.Status != 409 || time.Now().After(deadline) {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Fault(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func setPower(t *testing.T, env *ironictest.Env, node, target string) time.Time {
	t.Helper()
	return call(t, env, "PUT", "/v1/nodes/"+node+"/states/power", map[string]any{"target": target}, 202)
}

func powerEnd(node, state string) func(Event) bool {
	return func(e Event) bool {
		return e.NodeUUID == node && e.Type == TypePowerSet && e.Phase == PhaseEnd && e.PowerState == state
	}
}

func provision(node string, phase Phase) func(Event) bool {
	return func(e Event) bool { return e.NodeUUID == node && e.Type == TypeProvisionSet && e.Phase == phase }
}

// delays prints the median, p90 and max of a sample.
func delays(name string, d []time.Duration) string {
	slices.Sort(d)
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("%smedian %s, p90 %s, max %s (n=%d)", name, ms(percentile(d, 0.5)), ms(percentile(d, 0.9)), ms(d[len(d)-1]), len(d))
}

// TestEventsFromRealIronic: the consumer, started before Ironic ever
// published (so it declares the exchange itself), gets fake deploys,
// undeploys and power changes as hints with the right node and states, and
// Ironic's own default queues still get every message (nothing robbed,
// nothing dropped for an exchange of the wrong kind). Prints the delays
// from the API call to the hint.
func TestEventsFromRealIronic(t *testing.T) {
	bus := ironictest.NewBus(t)
	rec := newRecorder()
	start(t, bus, "ingot-test", rec, nil)
	env := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL})
	node := env.EnrollNode(t, ironictest.NodeSpec{})
	rec.waitEvent(t, 0, waitEvent, "node.create.end", func(e Event) bool {
		return e.NodeUUID == node && e.Type == TypeNodeCreate && e.Phase == PhaseEnd
	})
	nodePath := "/v1/nodes/" + node

	var deploys, undeploys, powers, lags []time.Duration
	const cycles = 5
	for range cycles {
		instance := uuid.NewString()
		call(t, env, "PATCH", nodePath, []map[string]any{{"op": "add", "path": "/instance_uuid", "value": instance}}, 200)
		from := rec.len()
		sent := call(t, env, "PUT", nodePath+"/states/provision", map[string]any{"target": "active"}, 202)
		st := rec.waitEvent(t, from, waitEvent, "provision_set.start (deploying)", provision(node, PhaseStart))
		if st.ProvisionState != "deploying" || st.TargetProvisionState != "active" || st.InstanceUUID != instance {
			t.Errorf("provision_set.start: %+v, want deploying → active for instance %s", st.Event, instance)
		}
		end := rec.waitEvent(t, from, waitEvent, "provision_set.end (active)", provision(node, PhaseEnd))
		if end.ProvisionState != "active" || end.InstanceUUID != instance || end.At.IsZero() || end.MessageID == "" {
			t.Errorf("provision_set.end: %+v, want active for instance %s, with a time and a message id", end.Event, instance)
		}
		deploys = append(deploys, end.Received.Sub(sent))
		lags = append(lags, end.Received.Sub(end.At))

		from = rec.len()
		sent = call(t, env, "PUT", nodePath+"/states/provision", map[string]any{"target": "deleted"}, 202)
		end = rec.waitEvent(t, from, waitEvent, "provision_set.end (available)", provision(node, PhaseEnd))
		if end.ProvisionState != "available" || end.InstanceUUID != "" {
			t.Errorf("undeploy's provision_set.end: %+v, want available without an instance", end.Event)
		}
		undeploys = append(undeploys, end.Received.Sub(sent))
	}
	for i := range 4 * cycles {
		target := "power on"
		if i%2 == 1 {
			target = "power off"
		}
		from := rec.len()
		sent := setPower(t, env, node, target)
		g := rec.waitEvent(t, from, waitEvent, "power_set.end "+target, powerEnd(node, target))
		powers = append(powers, g.Received.Sub(sent))
		lags = append(lags, g.Received.Sub(g.At))
	}
	t.Logf("API call → hint: %s; %s; %s; Ironic's timestamp → hint (the bus and the consumer alone): %s",
		delays("deploy (provision_set.end active) ", deploys), delays("undeploy (provision_set.end available) ", undeploys),
		delays("power_set.end ", powers), delays("", lags))

	// Ironic's default queues hold a copy of every message we got.
	deadline := time.Now().Add(waitEvent)
	for {
		ours := rec.len()
		theirs := ironicQueuesDepth(t, bus)
		if theirs == ours && ours > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ironic's default queues hold %d messages, the consumer got %d", theirs, ours)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := env.NotificationFailures(t); n != 0 {
		t.Errorf("Ironic logged %d notifications it could not send", n)
	}
}

// TestNothingLostAcrossRestart: events Ironic publishes while the consumer
// is stopped wait in its queue and arrive when it starts again; what was
// acked before the stop is not delivered again.
func TestNothingLostAcrossRestart(t *testing.T) {
	bus, env := realIronic(t)
	node := env.EnrollNode(t, ironictest.NodeSpec{})
	const queue = "ingot-restart"
	before := newRecorder()
	a := start(t, bus, queue, before, nil)
	setPower(t, env, node, "power on")
	before.waitEvent(t, 0, waitEvent, "power_set.end power on", powerEnd(node, "power on"))
	// Ironic sends start and end of each change; wait for both before the stop.
	before.wait(t, "2 events", waitEvent, func() bool { return len(before.events) >= 2 })
	a.stop()

	// Published while nobody consumes: two changes, four notifications.
	setPower(t, env, node, "power off")
	waitPower(t, env, node, "power off")
	setPower(t, env, node, "power on")
	waitPower(t, env, node, "power on")
	deadline := time.Now().Add(waitEvent)
	for queueDepth(t, bus, queue) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("queue %s holds %d messages after two power changes, want 4", queue, queueDepth(t, bus, queue))
		}
		time.Sleep(50 * time.Millisecond)
	}

	after := newRecorder()
	start(t, bus, queue, after, nil)
	after.waitEvent(t, 0, waitEvent, "power_set.end power off (published while stopped)", powerEnd(node, "power off"))
	after.waitEvent(t, 0, waitEvent, "power_set.end power on (published while stopped)", powerEnd(node, "power on"))
	time.Sleep(300 * time.Millisecond) // would a redelivery of the first consumer's events follow? (they came first if at all)
	seen := map[string]bool{}
	for _, g := range before.snapshot() {
		seen[g.MessageID] = true
	}
	afterEvents := after.snapshot()
	if len(afterEvents) != 4 {
		t.Errorf("after the restart got %d events, want the 4 published meanwhile:\n%s", len(afterEvents), after.describe())
	}
	for _, g := range afterEvents {
		if seen[g.MessageID] || g.Redelivered {
			t.Errorf("message %s (%s.%s) delivered again after the restart (redelivered %v)", g.MessageID, g.Type, g.Phase, g.Redelivered)
		}
		seen[g.MessageID] = true
	}
}

func waitPower(t *testing.T, env *ironictest.Env, node, state string) {
	t.Helper()
	deadline := time.Now().Add(waitEvent)
	for {
		n := env.GetNode(t, node)
		if n["power_state"] == state && n["target_power_state"] == nil && n["reservation"] == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: power %v (target %v), want %s", node, n["power_state"], n["target_power_state"], state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReconnectsAfterConnectionsClosed: the broker closes every connection
// of the vhost; the consumer says it is disconnected, reconnects, says the
// link resumed (a resync is due), and hints flow again.
func TestReconnectsAfterConnectionsClosed(t *testing.T) {
	bus, env := realIronic(t)
	node := env.EnrollNode(t, ironictest.NodeSpec{})
	rec := newRecorder()
	r := start(t, bus, "ingot-reconnect", rec, nil)

	closed := time.Now()
	bus.CloseConnections(t)
	rec.wait(t, "Disconnected", waitEvent, func() bool { return rec.lost >= 1 })
	rec.wait(t, "Connected(resumed)", waitEvent, func() bool { return slices.Contains(rec.connected, true) })
	resumed := time.Now()
	if st := r.c.Status(); !st.Connected || st.Reconnects != 1 || st.LastError == "" {
		t.Errorf("status after the reconnection: %+v, want connected, 1 reconnection, the last error", st)
	}
	from := rec.len()
	sent := setPower(t, env, node, "power on")
	// Ironic's own connection was closed too: its first publish after it
	// reconnects (oslo.messaging backs off for a few seconds under load).
	g := rec.waitEvent(t, from, 2*waitEvent, "power_set.end power on after the reconnection", powerEnd(node, "power on"))
	t.Logf("reconnected %s after the close; the next hint %s after its API call",
		resumed.Sub(closed).Round(time.Millisecond), g.Received.Sub(sent).Round(time.Millisecond))
}

// TestDurabilityMismatchDropsNotifications pins the trap the consumer's
// exchange handling avoids (docs/ironic.md §13): with the exchange declared
// durable before Ironic's first publish, Ironic's publishes fail, it logs
// that it could not send and drops the notifications, while its API
// answers as usual.
func TestDurabilityMismatchDropsNotifications(t *testing.T) {
	bus := ironictest.NewBus(t)
	ch := channel(t, bus)
	if err := ch.ExchangeDeclare(DefaultExchange, "topic", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	env := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL})
	env.EnrollNode(t, ironictest.NodeSpec{}) // create, update and power notifications
	deadline := time.Now().Add(waitEvent)
	for env.NotificationFailures(t) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Ironic logged no failed notification with a durable exchange")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n, err := queueDepthErr(bus, DefaultTopic+".info"); err == nil && n > 0 {
		t.Errorf("Ironic's default queue holds %d messages, want none delivered", n)
	}
}
