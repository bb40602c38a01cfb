package ironicnotify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Defaults of Ironic 2023.1 ([DEFAULT] versioned_notifications_topics and
// oslo.messaging's control_exchange as Ironic sets it).
const (
	DefaultExchange = "ironic"
	DefaultTopic    = "ironic_versioned_notifications"
)

// Tuning of the consumer.
const (
	minBackoff  = 200 * time.Millisecond
	maxBackoff  = 30 * time.Second
	heartbeat   = 10 * time.Second
	dialTimeout = 10 * time.Second
	prefetch    = 64
	// queueExpiry and queueMaxLength bound the queue of a consumer that
	// never comes back (a replica renamed or removed): RabbitMQ deletes a
	// queue unused this long, and drops its oldest messages beyond the
	// length, so it cannot grow until the broker's memory alarm blocks
	// Ironic's publishers. Losing them costs only hints: a consumer that
	// starts again resyncs from Ironic's API anyway.
	queueExpiry    = 24 * time.Hour
	queueMaxLength = 100_000
)

// Config says where the notifications are.
type Config struct {
	// URL is the broker, amqp://user:password@host:port/vhost (amqps:// for
	// TLS): the same broker and vhost as Ironic's
	// [oslo_messaging_notifications] transport_url.
	URL string
	// Exchange is Ironic's notification exchange (default "ironic").
	Exchange string
	// Topic is Ironic's versioned_notifications_topics entry (default
	// "ironic_versioned_notifications"); the queue is bound to <Topic>.*,
	// every priority.
	Topic string
	// Queue is this consumer's own queue; one per replica (see Consumer).
	Queue string
	// Durable must equal Ironic's [oslo_messaging_rabbit]
	// amqp_durable_queues (default false): it is used only when the
	// exchange does not exist yet, and an exchange of the wrong durability
	// makes Ironic's publishes fail and its notifications be dropped.
	Durable bool
}

// Hooks are told what the consumer does, for metrics; any may be nil.
// They run on the consumer's goroutine and must not block.
type Hooks struct {
	// Connected: consuming from the queue. resumed is true after a
	// disconnection: notifications may have been missed meanwhile (a broker
	// restart loses the binding), so a resync from Ironic is due.
	Connected func(resumed bool)
	// Disconnected: the connection failed or could not be made; the
	// consumer retries with a backoff up to 30 s.
	Disconnected func(err error)
	// Delivered: the handler returned and the message was acked. lag is
	// from Ironic's timestamp to the receipt (clocks of two hosts).
	Delivered func(e Event, lag time.Duration)
	// Dropped: a message that could not be decoded was rejected.
	Dropped func(err error)
}

// Status is a snapshot of the consumer.
type Status struct {
	Connected  bool
	Events     uint64        // delivered to the handler and acked
	Dropped    uint64        // malformed, rejected
	Reconnects uint64        // connections made after the first
	LastLag    time.Duration // of the last event delivered
	LastError  string        // why the last connection ended or failed
}

// Handler receives each event. It should be quick (wake the server that
// holds the node, no Ironic call): the next message waits for it. The
// message is acked once it returns, unless ctx was cancelled meanwhile,
// in which case the broker delivers it again to the next consumer.
type Handler func(ctx context.Context, e Event)

// Consumer reads Ironic's notifications from a queue of its own, bound to
// Ironic's exchange. Why its own, and not Ironic's default queues
// (<topic>.info, .error, which Ironic declares and fills): a queue shared by
// two consumers hands each message to one of them, so reading Ironic's
// would rob any other reader (a billing service) and split the events
// among ingot's replicas. A queue of one's own gets a copy of every
// message for as long as it exists; it is durable, not exclusive and not
// auto-deleted, so it keeps collecting while ingot restarts and the events
// published meanwhile are delivered at the next start. Every replica has
// its own queue and sees every event; each acts on the nodes of the
// servers it holds and ignores the rest (their holder got its own copy).
type Consumer struct {
	cfg    Config
	handle Handler
	log    *slog.Logger
	hooks  Hooks

	connected  atomic.Bool
	events     atomic.Uint64
	dropped    atomic.Uint64
	reconnects atomic.Uint64
	lastLag    atomic.Int64
	mu         sync.Mutex
	lastErr    string
}

// New checks cfg and returns a consumer; Run starts it. log may be nil.
func New(cfg Config, handle Handler, log *slog.Logger, hooks Hooks) (*Consumer, error) {
	if cfg.Exchange == "" {
		cfg.Exchange = DefaultExchange
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if err := checkURL(cfg.URL); err != nil {
		return nil, err
	}
	if cfg.Queue == "" {
		return nil, errors.New("ironicnotify: a queue name is required")
	}
	if IronicQueue(cfg.Topic, cfg.Queue) {
		return nil, fmt.Errorf("ironicnotify: queue %q is one of Ironic's own: reading it takes its messages from every other reader", cfg.Queue)
	}
	if handle == nil {
		return nil, errors.New("ironicnotify: a handler is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Consumer{cfg: cfg, handle: handle, log: log.With("queue", cfg.Queue), hooks: hooks}, nil
}

// IronicQueue reports whether queue is one Ironic declares for topic
// (<topic>.info, <topic>.error, …).
func IronicQueue(topic, queue string) bool {
	return strings.HasPrefix(queue, topic+".")
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("ironicnotify: the URL does not parse") // url's error quotes the password
	}
	if (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Hostname() == "" {
		return fmt.Errorf("ironicnotify: want amqp://user:password@host:port/vhost, got %s", u.Redacted())
	}
	return nil
}

// Status returns the consumer's state now; safe from any goroutine.
func (c *Consumer) Status() Status {
	c.mu.Lock()
	lastErr := c.lastErr
	c.mu.Unlock()
	return Status{Connected: c.connected.Load(), Events: c.events.Load(), Dropped: c.dropped.Load(),
		Reconnects: c.reconnects.Load(), LastLag: time.Duration(c.lastLag.Load()), LastError: lastErr}
}

// Run consumes until ctx is done, reconnecting with a backoff whenever the
// broker goes away, and returns nil then. Messages handled but not yet
// acked when it stops are delivered again later. Run once per Consumer.
func (c *Consumer) Run(ctx context.Context) error {
	backoff := minBackoff
	everConnected := false
	for {
		wasConnected, err := c.session(ctx, everConnected)
		everConnected = everConnected || wasConnected
		c.connected.Store(false)
		if ctx.Err() != nil {
			return nil
		}
		if wasConnected {
			backoff = minBackoff
		}
		c.mu.Lock()
		c.lastErr = err.Error()
		c.mu.Unlock()
		c.log.Warn("ironic notifications: bus unavailable, relying on polling", "error", err, "retry_in", backoff)
		if c.hooks.Disconnected != nil {
			c.hooks.Disconnected(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// session is one connection: set up, then consume until it ends. It
// reports whether it got as far as consuming.
func (c *Consumer) session(ctx context.Context, resumed bool) (bool, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("ingot " + c.cfg.Queue) // shown by rabbitmqctl list_connections
	conn, err := amqp.DialConfig(c.cfg.URL, amqp.Config{Heartbeat: heartbeat, Dial: dialer(ctx), Properties: props})
	if err != nil {
		return false, fmt.Errorf("connect: %w", redactErr(err, c.cfg.URL))
	}
	defer conn.Close() // unacked messages go back to the queue
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	ch, err := c.declare(conn)
	if err != nil {
		return false, err
	}
	deliveries, err := ch.Consume(c.cfg.Queue, "", false, false, false, false, nil)
	if err != nil {
		return false, fmt.Errorf("consume %s: %w", c.cfg.Queue, err)
	}
	c.connected.Store(true)
	if resumed {
		c.reconnects.Add(1)
	}
	c.log.Info("ironic notifications: consuming", "exchange", c.cfg.Exchange, "binding", c.cfg.Topic+".*", "resumed", resumed)
	if c.hooks.Connected != nil {
		c.hooks.Connected(resumed)
	}
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case err := <-closed:
			if err == nil {
				return true, errors.New("connection closed")
			}
			return true, fmt.Errorf("connection lost: %w", err)
		case d, ok := <-deliveries:
			if !ok {
				// The channel closed (or the broker cancelled the
				// consumer: the queue was deleted). Reconnecting
				// declares the queue again.
				return true, errors.New("deliveries stopped (channel closed or consumer cancelled)")
			}
			c.deliver(ctx, d)
		}
	}
}

// declare makes sure the exchange, the queue and its binding exist. The
// exchange is declared only when it is missing: a passive declare never
// compares arguments, so a consumer never fails on, or overrides, what
// Ironic declared.
func (c *Consumer) declare(conn *amqp.Connection) (*amqp.Channel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	if err := ch.ExchangeDeclarePassive(c.cfg.Exchange, amqp.ExchangeTopic, c.cfg.Durable, false, false, false, nil); err != nil {
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Code != amqp.NotFound {
			return nil, fmt.Errorf("exchange %s: %w", c.cfg.Exchange, err)
		}
		// The 404 closed the channel. Ironic declares the same
		// (topic, durable as amqp_durable_queues, not auto-deleted).
		if ch, err = conn.Channel(); err != nil {
			return nil, fmt.Errorf("open channel: %w", err)
		}
		if err := ch.ExchangeDeclare(c.cfg.Exchange, amqp.ExchangeTopic, c.cfg.Durable, false, false, false, nil); err != nil {
			return nil, fmt.Errorf("declare exchange %s: %w", c.cfg.Exchange, err)
		}
	}
	args := amqp.Table{"x-expires": queueExpiry.Milliseconds(), "x-max-length": int64(queueMaxLength)}
	if _, err := ch.QueueDeclare(c.cfg.Queue, true, false, false, false, args); err != nil {
		return nil, fmt.Errorf("declare queue %s (durable, x-expires %s, x-max-length %d; a queue of that name with other arguments must be deleted first): %w",
			c.cfg.Queue, queueExpiry, queueMaxLength, err)
	}
	if err := ch.QueueBind(c.cfg.Queue, c.cfg.Topic+".*", c.cfg.Exchange, false, nil); err != nil {
		return nil, fmt.Errorf("bind queue %s: %w", c.cfg.Queue, err)
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return nil, fmt.Errorf("qos: %w", err)
	}
	return ch, nil
}

// deliver decodes one message, hands it to the handler and acks it. A
// message that cannot be decoded is rejected (dead-lettered if the
// operator set that up, else dropped), never requeued: it would come back
// forever.
func (c *Consumer) deliver(ctx context.Context, d amqp.Delivery) {
	e, err := Decode(d.Body)
	if errors.Is(err, errNotNode) {
		_ = d.Ack(false)
		return
	}
	if err != nil {
		c.dropped.Add(1)
		c.log.Warn("ironic notifications: dropping a message that does not decode", "error", err, "bytes", len(d.Body))
		_ = d.Reject(false)
		if c.hooks.Dropped != nil {
			c.hooks.Dropped(err)
		}
		return
	}
	e.Redelivered = d.Redelivered
	var lag time.Duration
	if !e.At.IsZero() {
		lag = time.Since(e.At)
	}
	c.handle(ctx, e)
	if ctx.Err() != nil {
		return // not acked: delivered again after the restart
	}
	if err := d.Ack(false); err != nil {
		return // the connection is gone; the session sees it
	}
	c.events.Add(1)
	c.lastLag.Store(int64(lag))
	if c.hooks.Delivered != nil {
		c.hooks.Delivered(e, lag)
	}
}

// dialer is amqp.DefaultDial that also gives up when ctx is done.
func dialer(ctx context.Context) func(network, addr string) (net.Conn, error) {
	return func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: dialTimeout}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// Until the AMQP handshake is done (the library clears it then).
		if err := conn.SetDeadline(time.Now().Add(dialTimeout)); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// redactErr keeps a dial error from quoting the URL's password.
func redactErr(err error, raw string) error {
	u, perr := url.Parse(raw)
	if perr != nil {
		return err
	}
	if p, ok := u.User.Password(); ok && p != "" && strings.Contains(err.Error(), p) {
		return errors.New(strings.ReplaceAll(err.Error(), p, "xxxxx"))
	}
	return err
}
