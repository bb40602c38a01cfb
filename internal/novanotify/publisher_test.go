package novanotify

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/postgres"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

// received reads the messages of the topic's info queue, decoding the
// envelope, until the test ends.
func received(t *testing.T, bus *ironictest.Bus) (func() []Message, func()) {
	return receivedFrom(t, bus, DefaultTopic+".info")
}

// receivedFrom is received on queue q.
func receivedFrom(t *testing.T, bus *ironictest.Bus, q string) (func() []Message, func()) {
	t.Helper()
	conn, err := amqp.Dial(bus.URL)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(q, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(q, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []Message
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range deliveries {
			var env map[string]string
			var m Message
			if err := json.Unmarshal(d.Body, &env); err != nil || env["oslo.version"] != "2.0" {
				t.Errorf("envelope %s: %v", d.Body, err)
				continue
			}
			if err := json.Unmarshal([]byte(env["oslo.message"]), &m); err != nil {
				t.Errorf("message %s: %v", env["oslo.message"], err)
				continue
			}
			mu.Lock()
			got = append(got, m)
			mu.Unlock()
		}
	}()
	stop := func() { conn.Close(); <-done }
	t.Cleanup(stop)
	return func() []Message {
		mu.Lock()
		defer mu.Unlock()
		return append([]Message(nil), got...)
	}, stop
}

// TestOneDrainerAmongReplicas: two publishers on one outbox (two replicas
// of one database) deliver every notice once, all through the replica
// holding the claim; when it stops, the other takes over.
func TestOneDrainerAmongReplicas(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ingot.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		oneDrainer(t, st, st, st)
	})
	t.Run("postgres", func(t *testing.T) {
		// Three connections to one database: the writer and two replicas.
		dsn := pgtest.DSN(t)
		var sts [3]*postgres.Store
		for i := range sts {
			st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			sts[i] = st
		}
		oneDrainer(t, sts[0], sts[1], sts[2])
	})
}

// outboxStore is a store with an outbox.
type outboxStore interface {
	store.Store
	store.Outbox
}

// oneDrainer: w writes, publishers run on a and b.
func oneDrainer(t *testing.T, w, a, b outboxStore) {
	bus := ironictest.NewBus(t)
	st := w
	st.SetNotifier(Builder{Host: "h", PublisherID: "nova-compute:h"}.Notices)
	get, _ := received(t, bus)

	var byA, byB atomic.Int64
	run := func(holder string, out store.Outbox, n *atomic.Int64) context.CancelFunc {
		ctx, cancel := context.WithCancel(t.Context())
		p := NewPublisher(Config{URL: bus.URL, Holder: holder, Poll: 20 * time.Millisecond}, out,
			Hooks{Published: func(k int) { n.Add(int64(k)) }}, nil)
		done := make(chan struct{})
		go func() { defer close(done); p.Run(ctx) }()
		return func() { cancel(); <-done }
	}
	create := func(from, to int) {
		for i := from; i < to; i++ {
			if err := st.CreateServer(t.Context(), storetest.MinimalServer(fmt.Sprintf("s%03d", i), storetest.T0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	stopA := run("a", a, &byA)
	create(0, 1)
	poll.Until(t, 10*time.Second, "a drains", func() (bool, string) { return byA.Load() == 1, "" })
	stopB := run("b", b, &byB)
	defer stopB()
	create(1, 150)
	poll.Until(t, 30*time.Second, "150 published", func() (bool, string) {
		n := byA.Load() + byB.Load()
		return n >= 150, fmt.Sprintf("%d published", n)
	})
	if a, b := byA.Load(), byB.Load(); a != 150 || b != 0 {
		t.Errorf("a published %d, b %d; want all by a, the holder", a, b)
	}
	stopA() // releases the claim: b takes over at once
	create(150, 160)
	poll.Until(t, 30*time.Second, "10 more through b", func() (bool, string) {
		return byB.Load() == 10, fmt.Sprintf("b published %d", byB.Load())
	})
	poll.Until(t, 10*time.Second, "160 received", func() (bool, string) { return len(get()) >= 160, "" })
	seen := map[string]bool{}
	for _, m := range get() {
		if seen[m.MessageID] || m.EventType != CreateStart {
			t.Errorf("%s %s: twice or unexpected", m.MessageID, m.EventType)
		}
		seen[m.MessageID] = true
	}
	if len(seen) != 160 {
		t.Errorf("%d distinct messages, want 160", len(seen))
	}
	if n, err := st.OutboxDepth(t.Context()); err != nil || n != 0 {
		t.Errorf("outbox depth %d, %v after the drain", n, err)
	}
}

// TestErrorsToTheErrorQueue: a build that fails sends instance.create.error
// with priority ERROR to <topic>.error, as oslo.messaging routes it, and
// its instance.update to <topic>.info.
func TestErrorsToTheErrorQueue(t *testing.T) {
	bus := ironictest.NewBus(t)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.SetNotifier(Builder{Host: "h", PublisherID: "nova-compute:h"}.Notices)
	errs, _ := receivedFrom(t, bus, DefaultTopic+".error")
	infos, _ := received(t, bus)
	s := storetest.MinimalServer("s1", storetest.T0)
	if err := st.CreateServer(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	s.Phase, s.Fault = lifecycle.PhaseError, &lifecycle.Fault{Reason: lifecycle.ReasonNoValidHost, Message: "no node"}
	if err := st.SaveServer(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		NewPublisher(Config{URL: bus.URL, Holder: "a", Poll: 20 * time.Millisecond}, st, Hooks{}, nil).Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	poll.Until(t, 30*time.Second, "create.error on the error queue", func() (bool, string) {
		return len(errs()) == 1 && len(infos()) == 2, fmt.Sprintf("%d errors, %d infos", len(errs()), len(infos()))
	})
	if m := errs()[0]; m.EventType != CreateError || m.Priority != PriorityError {
		t.Errorf("error queue got %+v", m)
	}
	if got := []string{infos()[0].EventType, infos()[1].EventType}; got[0] != CreateStart || got[1] != Update {
		t.Errorf("info queue got %v", got)
	}
}
