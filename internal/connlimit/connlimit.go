// Package connlimit bounds the connections an HTTP server holds open, in
// all and per client, without letting idle connections starve requests.
// At a cap, the connection idle longest — accepted but silent, or kept
// alive between requests — is closed to make room; a connection with a
// request in flight is never taken. So a flood of connections that send
// nothing (or hold keep-alives) cannot make a request or a health check
// wait, and one client cannot take every slot.
package connlimit

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Listener wraps a net.Listener; set its ConnState as the http.Server's.
type Listener struct {
	net.Listener
	max, perClient int
	// shared reports a client address that stands for many clients (a
	// trusted proxy): the per-client limit does not apply to it.
	shared func(netip.Addr) bool

	mu       sync.Mutex
	freed    *sync.Cond // signalled when a connection is released or idle, or the listener closes
	conns    map[*conn]struct{}
	byClient map[string]int
	closed   bool
	stats    Stats
}

// Stats count what the limits did.
type Stats struct {
	Evicted int // idle connections closed to make room
	Refused int // new connections closed: their client held perClient busy ones
}

// New limits ln to max open connections, perClient of them from one
// address (perClient <= 0 or > max: max) unless shared(address) (nil:
// none is).
func New(ln net.Listener, max, perClient int, shared func(netip.Addr) bool) *Listener {
	if perClient <= 0 || perClient > max {
		perClient = max
	}
	if shared == nil {
		shared = func(netip.Addr) bool { return false }
	}
	l := &Listener{Listener: ln, max: max, perClient: perClient, shared: shared, conns: map[*conn]struct{}{}, byClient: map[string]int{}}
	l.freed = sync.NewCond(&l.mu)
	return l
}

type conn struct {
	net.Conn
	l         *Listener
	client    string    // "" for a shared address
	busy      bool      // a request is in flight (http.StateActive)
	idleSince time.Time // since when it has been silent
	released  bool
}

// Accept returns the next connection once it fits under both limits,
// closing idle connections to make room, and waiting for a busy one to
// end only when every slot carries a request.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &conn{Conn: nc, l: l, idleSince: time.Now()}
		if a := clientOf(nc.RemoteAddr()); !l.shared(a) {
			c.client = a.String()
		}
		if l.admit(c) {
			return c, nil
		}
		_ = nc.Close()
	}
}

func (l *Listener) admit(c *conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	// perClient == max: one limit, waited on below like any full server.
	for l.perClient < l.max && c.client != "" && l.byClient[c.client] >= l.perClient {
		if !l.evictLocked(c.client) {
			l.stats.Refused++
			return false
		}
	}
	for len(l.conns) >= l.max && !l.closed {
		if !l.evictLocked("") {
			l.freed.Wait()
		}
	}
	if l.closed {
		return false
	}
	l.conns[c] = struct{}{}
	l.byClient[c.client]++
	return true
}

// evictLocked closes the connection of client ("" any) idle longest.
func (l *Listener) evictLocked(client string) bool {
	var oldest *conn
	for c := range l.conns {
		if c.busy || (client != "" && c.client != client) {
			continue
		}
		if oldest == nil || c.idleSince.Before(oldest.idleSince) {
			oldest = c
		}
	}
	if oldest == nil {
		return false
	}
	l.releaseLocked(oldest)
	l.stats.Evicted++
	// Closing makes the server's read fail, which ends its goroutine.
	_ = oldest.Conn.Close()
	return true
}

func (l *Listener) releaseLocked(c *conn) {
	if c.released {
		return
	}
	c.released = true
	delete(l.conns, c)
	if l.byClient[c.client]--; l.byClient[c.client] <= 0 {
		delete(l.byClient, c.client)
	}
	l.freed.Broadcast()
}

// ConnState tracks which connections carry a request; set it as the
// http.Server's ConnState.
func (l *Listener) ConnState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateActive:
		c.busy = true
	case http.StateIdle, http.StateNew:
		c.busy = false
		c.idleSince = time.Now()
		l.freed.Broadcast() // an Accept waiting for room may take this one
	case http.StateHijacked, http.StateClosed:
		l.releaseLocked(c)
	}
}

// Stats returns the counts so far.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close stops accepting and wakes an Accept waiting for room.
func (l *Listener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.freed.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// clientOf is the address a connection comes from, without its port.
func clientOf(a net.Addr) netip.Addr {
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
