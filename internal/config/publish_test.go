package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPublishOffByDefault(t *testing.T) {
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Notifications; p.Enabled() || p.PublisherID != "" || p.Exchange != "nova" || p.Topic != "versioned_notifications" {
		t.Errorf("notifications: %+v", p)
	}
}

func TestPublishDefaults(t *testing.T) {
	c, err := Parse([]byte("host: replica-a\nnotifications: {url: 'amqp://ingot:s3cret@rabbit.example:5672/nova'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Publish{URL: "amqp://ingot:s3cret@rabbit.example:5672/nova", Exchange: "nova", Topic: "versioned_notifications",
		PublisherID: "nova-compute:replica-a"}
	if c.Notifications != want {
		t.Errorf("got  %+v\nwant %+v", c.Notifications, want)
	}
	if pc := c.Notifications.Publisher(c.Host); pc.Holder != "replica-a" || pc.Exchange != "nova" || pc.URL != want.URL {
		t.Errorf("Publisher() = %+v", pc)
	}
}

// TestPublishURLSecret: the URL (it carries the broker's password) comes
// from url_file or the environment as the other secrets do.
func TestPublishURLSecret(t *testing.T) {
	f := filepath.Join(t.TempDir(), "url")
	if err := os.WriteFile(f, []byte("amqp://ingot:fromfile@rabbit/nova\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte("notifications: {url_file: " + f + "}\n"))
	if err != nil || c.Notifications.URL != "amqp://ingot:fromfile@rabbit/nova" {
		t.Fatalf("url_file: %q, %v", c.Notifications.URL, err)
	}
	t.Setenv(EnvPublishURL, "amqp://ingot:fromenv@rabbit/nova")
	if c, err = Parse([]byte("notifications: {url_file: " + f + "}\n")); err != nil || c.Notifications.URL != "amqp://ingot:fromenv@rabbit/nova" {
		t.Fatalf("%s: %q, %v", EnvPublishURL, c.Notifications.URL, err)
	}
}

func TestPublishErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"{url: 'http://rabbit:5672/'}", "notifications.url: want amqp://"},
		{"{url: 'amqp://ingot:s3cret@rabbit:56 72/'}", "notifications.url: want amqp://"},
		{"{url: 'amqp://rabbit/', exchange: ''}", "notifications.exchange: must not be empty"},
		{"{url: 'amqp://rabbit/', topic: ''}", "notifications.topic: must not be empty"},
		{"{url: 'amqp://rabbit/', publisher_id: 'two words'}", "notifications.publisher_id: want no spaces"},
	} {
		_, err := Parse([]byte("notifications: " + tc.yaml + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", tc.yaml, err)
		}
	}
}
