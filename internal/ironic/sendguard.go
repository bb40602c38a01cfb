package ironic

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
)

// The send guard (Config.BeforeSend): the last check before a request that
// changes a node leaves the process. It is made twice: as the request
// enters the transport, after every other step of the call (a Deploy is
// three requests, each checked), and again in the connection's first write
// of the request, so that nothing — a dial, a wait for a connection, the
// scheduling of the transport's writer — lies between the check and the
// bytes going out. A process paused between its caller's checks and the
// send finds out there, on resuming, that it may no longer send: the
// deadline of the call's context is not enough, as after a pause its timer
// may fire only after the write. The body, a small JSON document, is read
// first and sent from memory, so the request goes out in one write.

// refusalKey carries a call's *refusal, so that do reports the guard's
// error rather than the transport's wrapping of it.
type refusalKey struct{}

type refusal struct {
	mu  sync.Mutex
	err error
}

func (r *refusal) set(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

func (r *refusal) get() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// idleConnsPerHost is how many idle connections to Ironic are kept.
const idleConnsPerHost = 64

// guardTransport checks every request to Ironic (under prefix: a shared
// Keystone provider's client also carries other services' requests, which
// it leaves alone) but GET and HEAD with check.
type guardTransport struct {
	next   http.RoundTripper
	prefix string
	check  func(context.Context) error
}

// newGuardTransport wraps next; an *http.Transport (or none: the default)
// is cloned to dial guardConns, speaking HTTP/1.1 only (one request at a
// time on a connection, so its first write is that request's).
func newGuardTransport(next http.RoundTripper, prefix string, check func(context.Context) error) guardTransport {
	if next == nil {
		next = http.DefaultTransport
	}
	if t, ok := next.(*http.Transport); ok {
		t = t.Clone()
		dial := t.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &guardConn{Conn: c}, nil
		}
		t.ForceAttemptHTTP2 = false
		// The reconciler's workers (32 by default) call Ironic at once: with
		// net/http's 2 idle connections per host the others were closed
		// after each answer and dialed again (9 % of ingot's CPU in a burst
		// of 2,000 builds).
		if t.MaxIdleConnsPerHost < idleConnsPerHost {
			t.MaxIdleConnsPerHost = idleConnsPerHost
		}
		if t.MaxIdleConns != 0 && t.MaxIdleConns < idleConnsPerHost {
			t.MaxIdleConns = idleConnsPerHost
		}
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		next = t
	}
	return guardTransport{next: next, prefix: prefix, check: check}
}

func (g guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead || !strings.HasPrefix(req.URL.String(), g.prefix) {
		return g.next.RoundTrip(req)
	}
	ctx := req.Context()
	if err := g.refuse(ctx); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	// Checked again in the connection's first write of this request.
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		c := info.Conn
		if nc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS
			c = nc.NetConn()
		}
		if gc, ok := c.(*guardConn); ok {
			gc.arm(func() error { return g.refuse(ctx) })
		}
	}})
	out := req.Clone(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return g.next.RoundTrip(out)
}

// refuse runs the check, noting a refusal for do.
func (g guardTransport) refuse(ctx context.Context) error {
	err := g.check(ctx)
	if err != nil {
		if r, ok := ctx.Value(refusalKey{}).(*refusal); ok {
			r.set(err)
		}
	}
	return err
}

// guardConn runs the check armed for the request about to be written in
// its first write of it.
type guardConn struct {
	net.Conn
	mu      sync.Mutex
	pending func() error
}

func (c *guardConn) arm(check func() error) {
	c.mu.Lock()
	c.pending = check
	c.mu.Unlock()
}

func (c *guardConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	check := c.pending
	c.pending = nil
	c.mu.Unlock()
	if check != nil {
		if err := check(); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}
