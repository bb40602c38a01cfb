package connlimit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// serve starts an HTTP server on 127.0.0.1 behind New(max, perClient).
// Requests to /block wait until release is closed, each first sending on
// blocked once its handler runs; the header timeout is a
// minute, so nothing in these tests is rescued by it.
func serve(t *testing.T, max, perClient int) (addr string, l *Listener, release chan struct{}, blocked chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l = New(ln, max, perClient, func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.9") })
	release, blocked = make(chan struct{}), make(chan struct{}, 16)
	srv := &http.Server{ReadHeaderTimeout: time.Minute, ConnState: l.ConnState,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				blocked <- struct{}{}
				<-release
			}
			fmt.Fprint(w, "ok")
		})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), l, release, blocked
}

func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends one request on c and reads the answer (error: none came).
func get(c net.Conn, path string) error {
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func answered(t *testing.T, c net.Conn, path string) <-chan error {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- get(c, path) }()
	return got
}

func within(t *testing.T, got <-chan error, what string) {
	t.Helper()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second): // the header timeout is a minute: only eviction answers this soon
		t.Fatalf("%s: no answer", what)
	}
}

// TestSilentFloodDoesNotStarveRequests: every slot taken by connections
// that never send a byte, or hold a keep-alive; a request still gets in.
func TestSilentFloodDoesNotStarveRequests(t *testing.T) {
	addr, l, _, _ := serve(t, 8, 0)
	for i := range 8 {
		c := dialFrom(t, "127.0.0.1", addr)
		if i%2 == 0 { // half keep-alives, half silent
			if err := get(c, "/"); err != nil {
				t.Fatal(err)
			}
		}
	}
	within(t, answered(t, dialFrom(t, "127.0.0.1", addr), "/healthz"), "a request behind 8 idle connections")
	if s := l.Stats(); s.Evicted < 1 {
		t.Errorf("stats %+v, want an eviction", s)
	}
}

// TestBusyConnectionsAreKept: connections with a request in flight are
// never closed for room; the next waits until one ends.
func TestBusyConnectionsAreKept(t *testing.T) {
	addr, _, release, blocked := serve(t, 2, 0)
	var busy []<-chan error
	for range 2 {
		busy = append(busy, answered(t, dialFrom(t, "127.0.0.1", addr), "/block"))
	}
	inHandler(t, blocked, 2)
	third := answered(t, dialFrom(t, "127.0.0.1", addr), "/")
	select {
	case err := <-third:
		t.Fatalf("a third connection was served while two carried requests (err %v)", err)
	case <-time.After(300 * time.Millisecond): // what must not happen did not happen in this window
	}
	close(release)
	for i, b := range busy {
		within(t, b, fmt.Sprintf("busy request %d", i))
	}
	within(t, third, "the third request once one ended")
}

// TestPerClientLimit: one address cannot take every slot; past its share
// a new connection of its own is refused when none of its own is idle,
// while another client is served.
func TestPerClientLimit(t *testing.T) {
	addr, l, release, blocked := serve(t, 8, 2)
	defer close(release)
	for range 2 {
		answered(t, dialFrom(t, "127.0.0.2", addr), "/block")
	}
	inHandler(t, blocked, 2)
	if err := get(dialFrom(t, "127.0.0.2", addr), "/"); err == nil {
		t.Fatal("a third busy-client connection was served past its limit of 2")
	}
	within(t, answered(t, dialFrom(t, "127.0.0.3", addr), "/"), "another client")
	if s := l.Stats(); s.Refused != 1 {
		t.Errorf("stats %+v, want one refusal", s)
	}
	// Its idle connections make room for its own new ones.
	idle := dialFrom(t, "127.0.0.4", addr)
	if err := get(idle, "/"); err != nil {
		t.Fatal(err)
	}
	dialFrom(t, "127.0.0.4", addr)
	within(t, answered(t, dialFrom(t, "127.0.0.4", addr), "/"), "a client replacing its idle connections")
}

// TestSharedAddressHasNoClientLimit: a trusted proxy carries many clients;
// only the global limit applies to it.
func TestSharedAddressHasNoClientLimit(t *testing.T) {
	addr, l, release, blocked := serve(t, 8, 2)
	defer close(release)
	for range 3 {
		answered(t, dialFrom(t, "127.0.0.9", addr), "/block")
	}
	inHandler(t, blocked, 3)
	within(t, answered(t, dialFrom(t, "127.0.0.9", addr), "/"), "a fourth request through the proxy")
	if s := l.Stats(); s.Refused != 0 {
		t.Errorf("stats %+v, want no refusal", s)
	}
}

// inHandler waits until n /block requests are in their handler.
func inHandler(t *testing.T, blocked <-chan struct{}, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-blocked:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d requests reached the handler", i, n)
		}
	}
}
