// Package faulttest routes a test's TCP links through fault proxies
// (Toxiproxy, in process) so that a test can slow, blackhole or reset the
// link between one ingot and one of its services — PostgreSQL, Ironic,
// Keystone, RabbitMQ, Neutron, Cinder — while the others keep theirs: a
// partition of one replica, a slow Ironic, a bus that goes silent.
package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Link is one proxied TCP link: clients dial Addr instead of the upstream.
type Link struct {
	t     testing.TB
	p     *toxiproxy.Proxy
	Addr  string // host:port to dial
	toxic int
}

// New starts a proxy from a free loopback port to upstream (host:port),
// stopped when the test ends.
func New(t testing.TB, name, upstream string) *Link {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatalf("faulttest: proxy %s → %s: %v", name, upstream, err)
	}
	t.Cleanup(p.Stop)
	return &Link{t: t, p: p, Addr: p.Listen}
}

// Rewrite returns url with upstream (host:port) replaced by the link's
// address: a DSN or an endpoint that goes through the link.
func (l *Link) Rewrite(url string) string {
	l.t.Helper()
	if !strings.Contains(url, l.p.Upstream) {
		l.t.Fatalf("faulttest: %s does not name the link's upstream %s", url, l.p.Upstream)
	}
	return strings.Replace(url, l.p.Upstream, l.Addr, 1)
}

// Blackhole drops every byte in both directions, on the open connections
// and on new ones, without closing anything: the peer sees a silent link
// (timeouts), as a network partition shows it. Heal ends it; the
// connections open meanwhile are closed then (their data was lost).
func (l *Link) Blackhole() {
	l.t.Helper()
	for _, stream := range []string{"upstream", "downstream"} {
		l.add(stream, "timeout", map[string]any{"timeout": 0})
	}
}

// Latency delays each chunk of data by d (± jitter) in both directions.
func (l *Link) Latency(d, jitter time.Duration) {
	l.t.Helper()
	for _, stream := range []string{"upstream", "downstream"} {
		l.add(stream, "latency", map[string]any{"latency": d.Milliseconds(), "jitter": jitter.Milliseconds()})
	}
}

// Reset closes the connections with a TCP reset (at once, then on each new
// one) until Heal.
func (l *Link) Reset() {
	l.t.Helper()
	l.add("downstream", "reset_peer", map[string]any{"timeout": 0})
}

// Heal removes every fault: data flows again.
func (l *Link) Heal() {
	l.t.Helper()
	l.p.Toxics.ResetToxics(context.Background())
}

func (l *Link) add(stream, kind string, attrs map[string]any) {
	l.toxic++
	raw, err := json.Marshal(map[string]any{"name": fmt.Sprintf("%s-%d", kind, l.toxic), "type": kind, "stream": stream,
		"toxicity": 1.0, "attributes": attrs})
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := l.p.Toxics.AddToxicJson(strings.NewReader(string(raw))); err != nil {
		l.t.Fatalf("faulttest: %s on %s: %v", kind, l.p.Name, err)
	}
}

// Fault is one of the standard link faults a test runs in turn, held for
// Hold once the requests made during it are sent.
type Fault struct {
	Name  string
	Apply func(*Link)
	Hold  time.Duration
}

// Standard is the slowed link (300 ± 100 ms a chunk), the reset one, and
// the one blackholed for three times callTimeout (the client's bound on
// one call), in that order.
func Standard(callTimeout time.Duration) []Fault {
	return []Fault{
		{Name: "slowed 300±100ms", Apply: func(l *Link) { l.Latency(300*time.Millisecond, 100*time.Millisecond) }, Hold: 3 * time.Second},
		{Name: "reset", Apply: (*Link).Reset, Hold: 5 * time.Second},
		{Name: "blackholed", Apply: (*Link).Blackhole, Hold: 3 * callTimeout},
	}
}
