package ironic

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
)

// The send guard (Config.BeforeSend): the last check before a request that
// changes a node leaves the process, made as the request enters the
// transport, after every other step of the call (a Deploy is three
// requests, each checked). Its body, a small JSON document, is read first
// and sent from memory, so the transport writes the request at once, in
// one flush, on a connection it already has (or dials: the window left is
// that dial). A process paused between its caller's checks and the send
// finds out here, on resuming, that it may no longer send: the deadline of
// the call's context is not enough, as after a pause its timer may fire
// only after the write.

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

// guardTransport checks every request to Ironic (under prefix: a shared
// Keystone provider's client also carries other services' requests, which
// it leaves alone) but GET and HEAD with check.
type guardTransport struct {
	next   http.RoundTripper
	prefix string
	check  func(context.Context) error
}

func (g guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead || !strings.HasPrefix(req.URL.String(), g.prefix) {
		return g.next.RoundTrip(req)
	}
	ctx := req.Context()
	out := req
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		out = req.Clone(ctx)
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if err := g.check(ctx); err != nil {
		if r, ok := ctx.Value(refusalKey{}).(*refusal); ok {
			r.set(err)
		}
		return nil, err
	}
	return g.next.RoundTrip(out)
}
