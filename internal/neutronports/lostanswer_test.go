package neutronports_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// lateCreate answers the first port create 504 without making the port,
// and makes it once ingot has looked again and found none: a create whose
// answer was lost while Neutron still worked on it.
type lateCreate struct {
	h    http.Handler
	mu   sync.Mutex
	held []byte // the create's body, until it is made
	done bool
}

func (l *lateCreate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Method == http.MethodPost && r.URL.Path == "/v2.0/ports" && !l.done && l.held == nil {
		l.held, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusGatewayTimeout)
		return
	}
	l.h.ServeHTTP(w, r)
	if r.Method == http.MethodGet && r.URL.Path == "/v2.0/ports" && l.held != nil && !l.done {
		late, _ := http.NewRequest(http.MethodPost, r.URL.Scheme+"://"+r.URL.Host+"/v2.0/ports", bytes.NewReader(l.held))
		late.Header = r.Header.Clone()
		l.h.ServeHTTP(httptest.NewRecorder(), late)
		l.done = true
	}
}

// TestLostCreateAnswerMadeASecondPort: a port create answered 504 that
// Neutron made anyway after the retry's look found nothing leaves the
// server with two ports of one row's name; the delete removes both, not
// only the one recorded (before: the other was left, device_id a server
// that is gone — as the slowed-link fault test found on the real Neutron).
func TestLostCreateAnswerMadeASecondPort(t *testing.T) {
	lc := &lateCreate{}
	r := newRig(t, rigOptions{nodes: 1, neutron: func(h http.Handler) http.Handler { lc.h = h; return lc }})
	before := r.ports()
	id := r.create(nil)
	r.until("active", r.settled(id))
	if !lc.done || r.phase(id) != lifecycle.PhaseActive {
		t.Fatalf("late create made %v, phase %s", lc.done, r.phase(id))
	}
	if n := r.neutron.PortCount(id); n != 2 {
		t.Fatalf("%d Neutron ports of the server, want 2 (the late one and the retry's)", n)
	}
	r.requestDelete(id)
	r.until("deleted", r.settled(id))
	r.noLeft(id, before)
}
