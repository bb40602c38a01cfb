package dst

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// transport carries ingot's Ironic calls straight into the simulator's
// handler, in the calling goroutine: no sockets, no scheduling, so a seed
// always replays the same way. It also injects the network's faults and
// watches every call for I2 and I7.
type transport struct {
	w *world
	h http.Handler

	down      int // ticks left of an outage: connection refused
	lost      int // next mutating calls reach Ironic but their answer is lost (timeout)
	crashNext int // kill ingot right after this many more mutating calls (answer lost)
}

var (
	errRefused = errors.New("dial tcp ironic.dst:6385: connect: connection refused")
	errTimeout = errors.New("net/http: timeout awaiting response headers")
)

// replicaTransport is one replica's way to the simulator: nothing goes out
// once the replica is killed, and every change it asks of Ironic is checked
// against the shard leases first.
type replicaTransport struct {
	t *transport
	r *replica
}

func (rt replicaTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if rt.r.dead || req.Context().Err() != nil {
		return nil, errKilled
	}
	return rt.t.roundTrip(req, rt.r)
}

func (t *transport) roundTrip(req *http.Request, r *replica) (*http.Response, error) {
	if t.down > 0 {
		return nil, errRefused
	}
	mutating := req.Method != http.MethodGet && req.Method != http.MethodHead
	node := nodeOf(req.URL.Path)
	var before string
	if mutating && node != "" {
		if n, ok := t.w.sim.Node(node); ok {
			before = n.InstanceUUID
		}
	}
	if mutating {
		t.w.checkActor(req, r, before)
	}
	rec := httptest.NewRecorder()
	if !serve(t.h, rec, req) {
		return nil, io.ErrUnexpectedEOF // the simulator dropped the connection
	}
	resp := rec.Result()
	resp.Request = req
	if !mutating && req.URL.Path == "/v1/nodes" && req.URL.Query().Get("associated") == "True" {
		t.w.itemsAfterList(req, r)
	}
	if mutating && node != "" && resp.StatusCode < 300 {
		t.w.checkTouch(req, node, before)
	}
	if mutating {
		if t.crashNext > 0 && !t.w.nested {
			t.crashNext--
			if t.crashNext == 0 {
				t.w.trace.add(fmt.Sprintf("%s crash after %s %s", r.name, req.Method, req.URL.Path))
				t.w.kill(r)
				return nil, errKilled
			}
		}
		if t.lost > 0 {
			t.lost--
			return nil, errTimeout
		}
	}
	return resp, nil
}

// itemsDuringList: the percentage of a tick's bulk lists after which
// work items run before the tick's steps (the list is answered; what the
// items change is not in it).
const itemsDuringList = 20

// itemsAfterList wakes some servers and runs replica r's due work items,
// now that a tick of r has its bulk list: under Run an item (woken by the
// API or a notification) runs beside the tick, and the tick's steps that
// follow must not take the list for what the items changed since.
func (w *world) itemsAfterList(req *http.Request, r *replica) {
	if w.nested || w.cur != r || r.dead || w.rng.IntN(100) >= itemsDuringList {
		return
	}
	for _, id := range w.servers {
		if w.rng.IntN(2) == 0 {
			r.rec.Wake(id)
		}
	}
	w.midItems += r.rec.RunDue(req.Context())
}

// serve runs the handler, turning its deliberate connection abort (the
// simulator's "drop" fault) into false.
func serve(h http.Handler, w http.ResponseWriter, r *http.Request) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			ok = false
		}
	}()
	if r.RequestURI == "" {
		r.RequestURI = r.URL.RequestURI()
	}
	h.ServeHTTP(w, r)
	return true
}

// nodeOf returns the node of a /v1/nodes/{node}/... path ("" otherwise).
func nodeOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/v1/nodes/")
	if !ok {
		return ""
	}
	node, _, _ := strings.Cut(rest, "/")
	return node
}

// checkTouch checks one successful change ingot made to a node, given the
// node's instance_uuid just before it.
//   - I7: a node carrying another tenant's instance_uuid is never changed.
//   - I7: only a node carrying one of our servers is deployed or undeployed.
//   - I2: nothing is reserved or deployed for a server whose delete was accepted.
func (w *world) checkTouch(req *http.Request, node, before string) {
	_, ours := w.ours[before]
	what := req.Method + " " + req.URL.Path
	if req.Method == http.MethodPatch && before == "" {
		body := bodyOf(req)
		for id := range w.deleted {
			if strings.Contains(body, id) {
				w.violate("I2: ingot reserved node %s for server %s after its delete was accepted", w.nname(node), w.sname(id))
			}
		}
	}
	if before != "" && !ours {
		w.violate("I7: ingot changed node %s reserved by another tenant: %s", w.nname(node), what)
		return
	}
	if strings.HasSuffix(req.URL.Path, "/states/provision") && !ours {
		w.violate("I7: ingot changed the provision state of node %s, which carries no instance_uuid of ours: %s", w.nname(node), what)
	}
	if !ours {
		return
	}
	if w.deleted[before] && req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/states/provision") {
		if body := bodyOf(req); strings.Contains(body, `"active"`) {
			w.violate("I2: ingot asked Ironic to deploy node %s for server %s after its delete was accepted", w.nname(node), w.sname(before))
		}
	}
}

func bodyOf(req *http.Request) string {
	if req.GetBody == nil {
		return ""
	}
	rc, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}
