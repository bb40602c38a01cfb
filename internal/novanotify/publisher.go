package novanotify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ingot-dev/ingot/internal/store"
)

// Defaults of Nova ([oslo_messaging_notifications] topics as Nova's
// versioned notifications use them, and its control_exchange).
const (
	DefaultExchange = "nova"
	DefaultTopic    = "versioned_notifications"
)

// Tuning of the publisher.
const (
	minBackoff  = 200 * time.Millisecond
	maxBackoff  = 30 * time.Second
	dialTimeout = 10 * time.Second
	heartbeat   = 10 * time.Second
	batchSize   = 100
	// claimTTL is how long the one drainer's claim lasts unrenewed; it is
	// renewed when half of it is left, so at most one claim write per
	// claimTTL/2 while idle.
	claimTTL = 30 * time.Second
	// claimRetry is how often a replica that does not drain tries to
	// claim (the holder's release or expiry is seen within it).
	claimRetry = 5 * time.Second
	// warnEvery bounds the warnings while the bus stays down.
	warnEvery = time.Minute
)

// Config says where the notifications go.
type Config struct {
	// URL is the broker, amqp://user:password@host:port/vhost (amqps://
	// for TLS): Nova's [oslo_messaging_notifications] transport_url.
	URL string
	// Exchange (default "nova") and Topic (default
	// "versioned_notifications"): messages go to the exchange with routing
	// key <Topic>.<priority> (info, error), as oslo.messaging sends them.
	Exchange, Topic string
	// Durable declares the exchange and the topic's queues durable (oslo's
	// amqp_durable_queues; default false, as oslo's).
	Durable bool
	// Holder names this replica in the drainer's claim.
	Holder string
	// Poll is how often an idle publisher looks at the outbox (0: 500 ms).
	Poll time.Duration
}

// Hooks are told what the publisher does, for metrics; any may be nil.
type Hooks struct {
	// Published: n messages confirmed by the broker and deleted.
	Published func(n int)
	// Failed: a connection, publish or confirm failed; retried with backoff.
	Failed func(err error)
	// Depth: the outbox holds n notices, the oldest created age ago (0
	// when empty).
	Depth func(n int, age time.Duration)
	// Step is called at the publisher's crash points (the kill -9 suite):
	// "notify:publish" before a batch is sent, "notify:confirmed" once the
	// broker confirmed it and before it is deleted.
	Step func(point string)
}

// Publisher drains a store's outbox to the bus: in Seq order, each message
// kept until the broker confirms it (publisher confirms), so a crash or an
// outage delivers it later, at least once (the message_id is stable for
// consumers to dedupe). Among replicas one drains at a time (the outbox's
// claim).
type Publisher struct {
	cfg   Config
	out   store.Outbox
	hooks Hooks
	log   *slog.Logger

	conn *amqp.Connection
	ch   *amqp.Channel

	heldUntil time.Time
	nextClaim time.Time // while another holds the claim: when to try again
	down      time.Time // since when publishing fails (zero: it works)
	warned    time.Time
}

// NewPublisher returns a publisher of out's notices; Run starts it.
func NewPublisher(cfg Config, out store.Outbox, hooks Hooks, log *slog.Logger) *Publisher {
	if cfg.Exchange == "" {
		cfg.Exchange = DefaultExchange
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Publisher{cfg: cfg, out: out, hooks: hooks, log: log}
}

// Run drains the outbox until ctx ends, then gives up the claim. It may
// be run again after it returned (never twice at once).
func (p *Publisher) Run(ctx context.Context) {
	defer p.close()
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = p.out.ReleaseOutbox(rctx, p.cfg.Holder)
		p.heldUntil, p.nextClaim = time.Time{}, time.Time{} // a next Run claims first
	}()
	backoff := minBackoff
	for {
		wait := p.cfg.Poll
		n, err := p.step(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			p.failed(err)
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		default:
			p.recovered()
			backoff = minBackoff
			if n > 0 {
				wait = 0 // more may be waiting
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// step publishes one batch if this replica holds the claim; it returns
// how many were confirmed.
func (p *Publisher) step(ctx context.Context) (int, error) {
	if time.Until(p.heldUntil) < claimTTL/2 {
		if p.heldUntil.IsZero() && time.Now().Before(p.nextClaim) {
			return 0, nil // another replica drains; look again later
		}
		held, err := p.out.ClaimOutbox(ctx, p.cfg.Holder, claimTTL)
		if err != nil {
			return 0, err
		}
		if !held {
			// Another replica drains: a claim is a write, so the others
			// try once per claimRetry, not at every poll.
			p.heldUntil, p.nextClaim = time.Time{}, time.Now().Add(claimRetry)
			p.close()
			return 0, nil
		}
		p.heldUntil = time.Now().Add(claimTTL)
	}
	batch, err := p.out.PendingNotices(ctx, batchSize)
	if err != nil {
		return 0, err
	}
	p.depth(ctx, batch)
	if len(batch) == 0 {
		return 0, nil
	}
	if err := p.connect(ctx); err != nil {
		return 0, err
	}
	p.crashPoint("notify:publish")
	done, perr := p.publish(ctx, batch)
	if len(done) > 0 {
		p.crashPoint("notify:confirmed")
		// Confirmed: deleted even when ctx ends meanwhile (a shutdown), or
		// the next drainer sends them again.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dialTimeout)
		err := p.out.DeleteNotices(dctx, done)
		cancel()
		if err != nil {
			return 0, err // published again later: at least once
		}
		if p.hooks.Published != nil {
			p.hooks.Published(len(done))
		}
	}
	if perr != nil {
		p.close()
		return len(done), perr
	}
	return len(done), nil
}

func (p *Publisher) crashPoint(point string) {
	if p.hooks.Step != nil {
		p.hooks.Step(point)
	}
}

// publish sends the batch and waits for the broker's confirms; it returns
// the seqs confirmed (acked), and an error when any was not.
func (p *Publisher) publish(ctx context.Context, batch []store.Notice) ([]int64, error) {
	confirms := make([]*amqp.DeferredConfirmation, 0, len(batch))
	var sendErr error
	for _, n := range batch {
		body, err := Envelope(n.Body)
		if err != nil {
			return nil, err
		}
		dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, p.cfg.Exchange, p.routingKey(n.Priority), false, false,
			amqp.Publishing{ContentType: "application/json", ContentEncoding: "utf-8", DeliveryMode: amqp.Persistent,
				MessageId: n.MessageID, Body: body})
		if err != nil {
			sendErr = fmt.Errorf("publish %s: %w", n.EventType, err)
			break
		}
		confirms = append(confirms, dc)
	}
	var done []int64
	for i, dc := range confirms {
		wctx, cancel := context.WithTimeout(ctx, dialTimeout)
		ok, err := dc.WaitContext(wctx)
		cancel()
		if err != nil {
			return done, fmt.Errorf("confirm of %s: %w", batch[i].EventType, err)
		}
		if !ok {
			return done, fmt.Errorf("broker refused %s (nack)", batch[i].EventType)
		}
		done = append(done, batch[i].Seq)
	}
	return done, sendErr
}

// routingKey is oslo.messaging's: <topic>.<priority in lower case>.
func (p *Publisher) routingKey(priority string) string {
	return p.cfg.Topic + "." + strings.ToLower(priority)
}

// Envelope wraps a message in oslo.messaging's 2.0 envelope.
func Envelope(message []byte) ([]byte, error) {
	return json.Marshal(map[string]string{"oslo.version": "2.0", "oslo.message": string(message)})
}

// connect opens the connection and a confirming channel, and declares the
// exchange and the topic's queues as oslo.messaging's notifier does (so
// messages wait in them while no consumer runs).
func (p *Publisher) connect(ctx context.Context) error {
	if p.ch != nil && !p.ch.IsClosed() && !p.conn.IsClosed() {
		return nil
	}
	p.close()
	conn, err := amqp.DialConfig(p.cfg.URL, amqp.Config{
		Heartbeat: heartbeat,
		Dial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, network, addr)
		},
		Properties: amqp.Table{"connection_name": "ingot-notifications." + p.cfg.Holder},
	})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redact(p.cfg.URL), err)
	}
	ch, err := conn.Channel()
	if err == nil {
		err = ch.Confirm(false)
	}
	if err == nil {
		err = ch.ExchangeDeclare(p.cfg.Exchange, amqp.ExchangeTopic, p.cfg.Durable, false, false, false, nil)
	}
	for _, prio := range []string{PriorityInfo, PriorityError} {
		if err != nil {
			break
		}
		q := p.routingKey(prio)
		if _, err = ch.QueueDeclare(q, p.cfg.Durable, false, false, false, nil); err == nil {
			err = ch.QueueBind(q, q, p.cfg.Exchange, false, nil)
		}
	}
	if err != nil {
		conn.Close()
		return fmt.Errorf("set up exchange %s: %w", p.cfg.Exchange, err)
	}
	p.conn, p.ch = conn, ch
	return nil
}

func (p *Publisher) close() {
	if p.conn != nil {
		p.conn.Close()
	}
	p.conn, p.ch = nil, nil
}

// depth reports the outbox's depth and its oldest notice's age.
func (p *Publisher) depth(ctx context.Context, batch []store.Notice) {
	if p.hooks.Depth == nil {
		return
	}
	n := len(batch)
	if n == batchSize {
		if d, err := p.out.OutboxDepth(ctx); err == nil {
			n = d
		}
	}
	var age time.Duration
	if len(batch) > 0 {
		age = time.Since(batch[0].CreatedAt)
	}
	p.hooks.Depth(n, age)
}

// failed records a failure, warning when publishing starts failing and
// then at most once per warnEvery.
func (p *Publisher) failed(err error) {
	if p.hooks.Failed != nil {
		p.hooks.Failed(err)
	}
	now := time.Now()
	if p.down.IsZero() {
		p.down = now
	}
	if now.Sub(p.warned) >= warnEvery {
		p.warned = now
		p.log.Warn("notifications: cannot publish; they wait in the outbox", "err", err,
			"down_for", now.Sub(p.down).Round(time.Second).String())
	}
}

func (p *Publisher) recovered() {
	if !p.down.IsZero() {
		p.log.Info("notifications: publishing again", "down_for", time.Since(p.down).Round(time.Second).String())
	}
	p.down, p.warned = time.Time{}, time.Time{}
}

// redact hides the URL's password.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
