package config

import "github.com/ingot-dev/ingot/internal/novanotify"

// Publish is notifications: the message bus ingot publishes Nova's
// versioned instance.* notifications to, for billing and monitoring
// (docs/DESIGN.md §2.13). Off while URL is empty.
type Publish struct {
	// URL is amqp://user:password@host:port/vhost (amqps:// for TLS), as
	// Nova's [oslo_messaging_notifications] transport_url.
	URL string `yaml:"url"`
	// URLFile reads URL from a file; INGOT_NOTIFICATIONS_PUBLISH_URL
	// overrides both.
	URLFile string `yaml:"url_file"`
	// Exchange is Nova's control_exchange (default nova).
	Exchange string `yaml:"exchange"`
	// Topic is the notifications topic (default versioned_notifications):
	// messages are routed to <topic>.info and <topic>.error.
	Topic string `yaml:"topic"`
	// PublisherID is the messages' publisher_id (default
	// nova-compute:<host>).
	PublisherID string `yaml:"publisher_id"`
	// Durable declares the exchange and queues durable (oslo.messaging's
	// amqp_durable_queues; it must match what the consumers declared).
	Durable bool `yaml:"durable"`
}

// Enabled reports whether ingot publishes notifications.
func (p Publish) Enabled() bool { return p.URL != "" }

func publishDefaults(c *Config) {
	c.Notifications = Publish{Exchange: novanotify.DefaultExchange, Topic: novanotify.DefaultTopic}
}

// normalizePublish fills publisher_id from host (after Normalize has set
// it) and checks notifications.
func (c *Config) normalizePublish(bad func(key, format string, args ...any)) {
	p := &c.Notifications
	if !p.Enabled() {
		return
	}
	const key = "notifications."
	checkAMQP(bad, key+"url", p.URL)
	if p.Exchange == "" {
		bad(key+"exchange", "must not be empty (Nova's default is %s)", novanotify.DefaultExchange)
	}
	if p.Topic == "" {
		bad(key+"topic", "must not be empty (Nova's default is %s)", novanotify.DefaultTopic)
	}
	if p.PublisherID == "" {
		p.PublisherID = "nova-compute:" + c.Host
	}
	if hasSpaceOrControl(p.PublisherID) {
		bad(key+"publisher_id", "want no spaces or control characters, got %q", p.PublisherID)
	}
}

// Publisher is the publisher's configuration (after Normalize).
func (p Publish) Publisher(host string) novanotify.Config {
	return novanotify.Config{URL: p.URL, Exchange: p.Exchange, Topic: p.Topic, Durable: p.Durable, Holder: host}
}
