package realironic

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// holdProxy passes ingot's calls to the real Ironic, except that it can
// hold the next node PATCH (the reservation) until the test lets it go.
type holdProxy struct {
	next    http.Handler
	hold    atomic.Bool
	held    chan string
	release chan struct{}
}

func (p *holdProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/v1/nodes/") && p.hold.CompareAndSwap(true, false) {
		p.held <- strings.TrimPrefix(r.URL.Path, "/v1/nodes/")
		<-p.release
	}
	p.next.ServeHTTP(w, r)
}

// testS21: the node the scheduler chose is put in maintenance between its
// inventory and the reservation. The reservation's answer shows it; ingot
// gives the node back at once and builds on the free one, without spending
// an attempt or waiting maintenance_grace (5 minutes by default).
func testS21(t *testing.T, ir *ironictest.Env) {
	target, err := url.Parse(ir.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{next: httputil.NewSingleHostReverseProxy(target), held: make(chan string, 1), release: make(chan struct{})}
	proxy := httptest.NewServer(p)
	t.Cleanup(proxy.Close)
	s := newStackVia(t, ir, "rc-s21", proxy.URL)
	nodes := ir.EnrollNodes(t, 2, ironictest.NodeSpec{Name: "s21", ResourceClass: "rc-s21", Kind: ironictest.Fast})
	p.hold.Store(true)
	start := time.Now()
	id := s.create("s21", "bm")
	var node string
	select {
	case node = <-p.held:
	case <-time.After(30 * time.Second):
		t.Fatal("no reservation PATCH")
	}
	ir.SetMaintenance(t, node, true)
	close(p.release)
	s.WaitStatus(id, "ACTIVE", 60*time.Second)
	took := time.Since(start)
	r := s.rec(id)
	if r.NodeID == node || (r.NodeID != nodes[0] && r.NodeID != nodes[1]) {
		t.Fatalf("ACTIVE on %s; the node put in maintenance was %s", r.NodeID, node)
	}
	if len(r.Attempts) != 0 {
		t.Errorf("an attempt was spent: %+v", r.Attempts)
	}
	s.WaitFor("node in maintenance given back", 10*time.Second, func() bool { return ir.GetNode(t, node)["instance_uuid"] == nil })
	t.Logf("S21: create to ACTIVE with the first choice put in maintenance: %s", took.Round(time.Millisecond))
	ir.SetMaintenance(t, node, false)
}
