package ironicnotify

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// got is one event as a test's handler saw it.
type got struct {
	Event
	Received time.Time
}

// recorder collects events and hook calls; waiters are woken on each.
type recorder struct {
	mu        sync.Mutex
	events    []got
	connected []bool // resumed, per Connected call
	lost      int    // Disconnected calls
	dropped   int
	delivered int // acked
	changed   chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) update(f func()) {
	r.mu.Lock()
	f()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) handle(_ context.Context, e Event) {
	now := time.Now()
	r.update(func() { r.events = append(r.events, got{e, now}) })
}

func (r *recorder) hooks() Hooks {
	return Hooks{
		Connected:    func(resumed bool) { r.update(func() { r.connected = append(r.connected, resumed) }) },
		Disconnected: func(error) { r.update(func() { r.lost++ }) },
		Dropped:      func(error) { r.update(func() { r.dropped++ }) },
		Delivered:    func(Event, time.Duration) { r.update(func() { r.delivered++ }) },
	}
}

// wait blocks until cond (called under the lock) holds, or fails the test.
func (r *recorder) wait(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		ok, ch := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("after %s still waiting for %s; events so far:\n%s", timeout, what, r.describe())
		}
	}
}

// waitEvent waits for an event from index from on that matches, and returns it.
func (r *recorder) waitEvent(t *testing.T, from int, timeout time.Duration, what string, match func(Event) bool) got {
	t.Helper()
	var found got
	r.wait(t, what, timeout, func() bool {
		for _, g := range r.events[min(from, len(r.events)):] {
			if match(g.Event) {
				found = g
				return true
			}
		}
		return false
	})
	return found
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

func (r *recorder) snapshot() []got {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) describe() string {
	var b bytes.Buffer
	for _, g := range r.events {
		b.WriteString("  " + g.Type.String() + "." + g.Phase.String() + " " + g.NodeUUID + " " + g.ProvisionState + "/" + g.PowerState + "\n")
	}
	return b.String()
}

// running is a consumer started by start; stop cancels it and waits.
type running struct {
	c    *Consumer
	stop func()
}

// start runs a consumer of queue on the bus, stopped at the latest when
// the test ends, and waits until it consumes.
func start(t *testing.T, bus *ironictest.Bus, queue string, rec *recorder, log *slog.Logger) running {
	t.Helper()
	c, err := New(Config{URL: bus.URL, Queue: queue}, rec.handle, log, rec.hooks())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Run did not return 10 s after its context was cancelled")
			}
		})
	}
	t.Cleanup(stop)
	rec.mu.Lock()
	n := len(rec.connected)
	rec.mu.Unlock()
	rec.wait(t, "the consumer to connect", 15*time.Second, func() bool { return len(rec.connected) > n })
	return running{c: c, stop: stop}
}

// queueDepth is the number of ready messages in a queue (a passive
// declare: no arguments compared, nothing created).
func queueDepth(t *testing.T, bus *ironictest.Bus, queue string) int {
	t.Helper()
	n, err := queueDepthErr(bus, queue)
	if err != nil {
		t.Fatalf("queue %s: %v", queue, err)
	}
	return n
}

// ironicQueuesDepth counts the messages in Ironic's default queues; Ironic
// declares each on its first publish of that priority.
func ironicQueuesDepth(t *testing.T, bus *ironictest.Bus) int {
	t.Helper()
	total := 0
	for _, q := range []string{DefaultTopic + ".info", DefaultTopic + ".error"} {
		n, err := queueDepthErr(bus, q)
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.NotFound {
			continue
		}
		if err != nil {
			t.Fatalf("queue %s: %v", q, err)
		}
		total += n
	}
	return total
}

func queueDepthErr(bus *ironictest.Bus, queue string) (int, error) {
	conn, err := amqp.Dial(bus.URL)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	return q.Messages, err
}

// publish puts a raw message into queue through the default exchange.
func publish(t *testing.T, bus *ironictest.Bus, queue string, body []byte) {
	t.Helper()
	publishTo(t, bus, "", queue, body)
}

// publishTo publishes a raw message to an exchange, as Ironic does.
func publishTo(t *testing.T, bus *ironictest.Bus, exchange, key string, body []byte) {
	t.Helper()
	ch := channel(t, bus)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ch.PublishWithContext(ctx, exchange, key, false, false, amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: body}); err != nil {
		t.Fatal(err)
	}
}

// percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// channel opens a channel on the bus, closed when the test ends.
func channel(t *testing.T, bus *ironictest.Bus) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(bus.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
