package ironicnotify

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testlog"
)

// logBuffer is a logger's output, safe for the consumer's goroutine.
type logBuffer struct{ testlog.Buffer }

func (l *logBuffer) count(s string) int { return strings.Count(l.String(), s) }

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

func TestNewChecksConfig(t *testing.T) {
	h := func(context.Context, Event) {}
	for name, tc := range map[string]struct {
		cfg  Config
		h    Handler
		want string
	}{
		"not amqp":   {Config{URL: "http://u:s3cret@rabbit/", Queue: "q"}, h, "want amqp://"},
		"no host":    {Config{URL: "amqp://u:s3cret@:5672/", Queue: "q"}, h, "want amqp://"},
		"no queue":   {Config{URL: "amqp://rabbit/"}, h, "queue name is required"},
		"Ironic's":   {Config{URL: "amqp://rabbit/", Queue: DefaultTopic + ".info"}, h, "one of Ironic's own"},
		"no handler": {Config{URL: "amqp://rabbit/", Queue: "q"}, nil, "handler is required"},
		"unparsable": {Config{URL: "amqp://u:s3cret@rabbit:56 72/", Queue: "q"}, h, "does not parse"},
	} {
		_, err := New(tc.cfg, tc.h, nil, Hooks{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: New = %v, want %q without the password", name, err, tc.want)
		}
	}
	if _, err := New(Config{URL: "amqps://rabbit/", Queue: "q"}, h, nil, Hooks{}); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// TestRunStopsWhileBusDown: with no broker to reach, Run reports each
// failed attempt, keeps retrying, and returns at once when ctx is done.
func TestRunStopsWhileBusDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	failures := make(chan error, 100)
	c, err := New(Config{URL: "amqp://guest:s3cret@" + addr + "/", Queue: "q"}, func(context.Context, Event) {}, nil,
		Hooks{Disconnected: func(err error) { failures <- err }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for range 4 { // the first attempt and retries after 0.2, 0.4, 0.8 s; the next waits 1.6 s
		select {
		case err := <-failures:
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the password: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no Disconnected report while the bus is down")
		}
	}
	if st := c.Status(); st.Connected || st.LastError == "" {
		t.Errorf("status while down: %+v", st)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
	case <-time.After(500 * time.Millisecond):
		t.Fatal("Run did not return within 0.5 s of the cancel (in a 1.6 s backoff)")
	}
}
