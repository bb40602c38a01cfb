package config

import (
	"strings"
	"testing"
)

func TestNotificationsOffByDefault(t *testing.T) {
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Ironic.Notifications; n.Enabled() || n.Queue != "" {
		t.Errorf("notifications on by default: %+v", n)
	}
}

func TestNotificationsDefaults(t *testing.T) {
	c, err := Parse([]byte("host: replica-a\nironic: {notifications: {url: 'amqp://ingot:s3cret@rabbit.example:5672/ironic'}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Notifications{URL: "amqp://ingot:s3cret@rabbit.example:5672/ironic", Exchange: "ironic",
		Topic: "ironic_versioned_notifications", Queue: "ingot.replica-a"}
	if c.Ironic.Notifications != want {
		t.Errorf("got  %+v\nwant %+v", c.Ironic.Notifications, want)
	}
	if cc := c.Ironic.Notifications.Consumer(); cc.Queue != "ingot.replica-a" || cc.Exchange != "ironic" || cc.URL != want.URL {
		t.Errorf("Consumer() = %+v", cc)
	}
}

func TestNotificationsErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"{url: 'http://rabbit:5672/'}", "ironic.notifications.url: want amqp://"},
		{"{url: 'amqp://ingot:s3cret@:5672/'}", "ironic.notifications.url: want amqp://"},
		{"{url: 'amqp://ingot:s3cret@rabbit:56 72/'}", "ironic.notifications.url: want amqp://"},
		{"{url: 'amqp://rabbit/', exchange: ''}", "ironic.notifications.exchange: must not be empty"},
		{"{url: 'amqp://rabbit/', topic: ''}", "ironic.notifications.topic: must not be empty"},
		{"{url: 'amqp://rabbit/', queue: ironic_versioned_notifications.info}", "one of Ironic's own queues"},
		{"{url: 'amqp://rabbit/', queue: amq.gen-1}", "reserved by the broker"},
		{"{url: 'amqp://rabbit/', queue: 'two words'}", "ironic.notifications.queue: want a queue name"},
		{"{url: 'amqp://rabbit/', queues: [a]}", "field queues not found"},
	} {
		_, err := Parse([]byte("ironic: {notifications: " + tc.yaml + "}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", tc.yaml, err)
		}
	}
}
