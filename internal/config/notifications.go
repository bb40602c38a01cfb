package config

import (
	"errors"
	"net/url"
	"strings"

	"github.com/ingot-dev/ingot/internal/ironicnotify"
)

// Notifications is ironic.notifications: the message bus Ironic publishes
// its versioned notifications to, which ingot reads as hints to look at a
// node at once (docs/ironic.md §13). Off while URL is empty.
type Notifications struct {
	// URL is amqp://user:password@host:port/vhost (amqps:// for TLS), the
	// broker and vhost of Ironic's [oslo_messaging_notifications]
	// transport_url.
	URL string `yaml:"url"`
	// URLFile reads URL (which carries the broker's password) from a file;
	// INGOT_NOTIFICATIONS_URL overrides both.
	URLFile string `yaml:"url_file"`
	// Exchange is Ironic's notification exchange (its control_exchange).
	Exchange string `yaml:"exchange"`
	// Topic is Ironic's versioned_notifications_topics entry.
	Topic string `yaml:"topic"`
	// Queue is this replica's own queue (default ingot.<host>): every
	// replica needs its own, and none may be one of Ironic's.
	Queue string `yaml:"queue"`
	// Durable must equal Ironic's [oslo_messaging_rabbit] amqp_durable_queues.
	Durable bool `yaml:"durable"`
}

// Enabled reports whether ingot reads notifications.
func (n Notifications) Enabled() bool { return n.URL != "" }

func notificationDefaults(c *Config) {
	c.Ironic.Notifications = Notifications{Exchange: ironicnotify.DefaultExchange, Topic: ironicnotify.DefaultTopic}
}

// normalizeNotifications fills the queue's name from host (after Normalize
// has set it) and checks ironic.notifications.
func (c *Config) normalizeNotifications(bad func(key, format string, args ...any)) {
	n := &c.Ironic.Notifications
	if !n.Enabled() {
		return
	}
	const key = "ironic.notifications."
	checkAMQP(bad, key+"url", n.URL)
	if n.Exchange == "" {
		bad(key+"exchange", "must not be empty (Ironic's default is %s)", ironicnotify.DefaultExchange)
	}
	if n.Topic == "" {
		bad(key+"topic", "must not be empty (Ironic's default is %s)", ironicnotify.DefaultTopic)
	}
	if n.Queue == "" {
		n.Queue = "ingot." + c.Host
	}
	switch {
	case len(n.Queue) > 255 || hasSpaceOrControl(n.Queue):
		bad(key+"queue", "want a queue name (at most 255 bytes, no spaces), got %q", n.Queue)
	case strings.HasPrefix(n.Queue, "amq."):
		bad(key+"queue", "names starting with amq. are reserved by the broker, got %q", n.Queue)
	case ironicnotify.IronicQueue(n.Topic, n.Queue):
		bad(key+"queue", "%q is one of Ironic's own queues: reading it would take its messages from every other reader; name a queue of ingot's own", n.Queue)
	}
}

// Consumer is the consumer's configuration (after Normalize).
func (n Notifications) Consumer() ironicnotify.Config {
	return ironicnotify.Config{URL: n.URL, Exchange: n.Exchange, Topic: n.Topic, Queue: n.Queue, Durable: n.Durable}
}

// checkAMQP checks a broker URL, never quoting its password.
func checkAMQP(bad func(key, format string, args ...any), key, raw string) {
	if u, err := url.Parse(raw); err != nil {
		// url's error quotes the URL, password included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		bad(key, "want amqp://user:password@host:port/vhost: %v", err)
	} else if (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Hostname() == "" {
		bad(key, "want amqp://user:password@host:port/vhost (or amqps://), got %s", u.Redacted())
	}
}
