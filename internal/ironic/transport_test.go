package ironic_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
)

// A port nobody listens on: connection refused → ErrUnavailable, fast.
func TestUnavailableOnClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var ops []string
	c, err := ironic.New(ironic.Config{URL: "http://" + addr, Observer: func(op string, err error, d time.Duration) {
		ops = append(ops, op)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Ping(ctx); !errors.Is(err, ironic.ErrUnavailable) {
		t.Fatalf("Ping = %v, want ErrUnavailable", err)
	}
	if _, err := c.ListAssociated(ctx); !errors.Is(err, ironic.ErrUnavailable) || !ironic.IsTransient(err) {
		t.Fatalf("ListAssociated = %v, want ErrUnavailable", err)
	}
	if _, err := c.Reserve(ctx, "n", "i", nil); !errors.Is(err, ironic.ErrUnavailable) {
		t.Fatalf("Reserve = %v, want ErrUnavailable", err)
	}
	if len(ops) != 3 || ops[0] != "ping" || ops[1] != "node.list" || ops[2] != "node.patch" {
		t.Fatalf("observer saw %v", ops)
	}
}

// A server that accepts and never answers: the per-call timeout is
// ErrUnavailable, while the caller's own cancellation comes back as
// ctx.Err() and not as ErrUnavailable.
func TestTimeoutVersusCallerCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	c, err := ironic.New(ironic.Config{URL: srv.URL + "/v1/", Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = c.Ping(context.Background())
	if !errors.Is(err, ironic.ErrUnavailable) {
		t.Fatalf("per-call timeout: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("per-call timeout took %v", d)
	}

	c, err = ironic.New(ironic.Config{URL: srv.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err = c.Ping(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ironic.ErrUnavailable) {
		t.Fatalf("caller cancel: %v, want context.Canceled only", err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = c.Ping(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ironic.ErrUnavailable) {
		t.Fatalf("caller deadline: %v, want context.DeadlineExceeded only", err)
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:6385", "ftp://x"} {
		if _, err := ironic.New(ironic.Config{URL: u}); !errors.Is(err, ironic.ErrInvalid) {
			t.Errorf("New(%q) = %v, want ErrInvalid", u, err)
		}
	}
}
