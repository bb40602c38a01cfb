// Package history records what a test's clients asked of ingot's compute
// API and what they were answered, with the instants each request began
// and ended, and checks the run as Jepsen checks one: as properties of the
// recorded history and of the final state of ingot and Ironic (and
// Neutron, Cinder when used), not as "the test passed". The properties
// are those of docs/DESIGN.md §3.1: no accepted request lost, a deleted
// server never seen again, no node held by two servers, no server past its
// deadline, nothing leaked, and each server's existence linearizable
// (Porcupine) — with an answer that never came or a 5xx counted as a
// request that may or may not have taken effect.
package history

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Kind is what a request asked.
type Kind uint8

// The requests recorded.
const (
	Create Kind = iota
	Show
	List
	Delete
)

func (k Kind) String() string {
	return [...]string{"create", "show", "list", "delete"}[k]
}

// Seen is a server as one answer showed it.
type Seen struct {
	ID        string
	Name      string
	Status    string
	TaskState string
	Node      string // OS-EXT-SRV-ATTR:hypervisor_hostname, when shown
}

// Deleting reports whether the answer shows an accepted delete: task_state
// deleting (Nova keeps the status) or DELETED.
func (s Seen) Deleting() bool { return s.Status == "DELETED" || s.TaskState == "deleting" }

// Op is one request and its answer.
type Op struct {
	Kind   Kind
	Server string // the server's id (a create's: from its answer, "" when none came)
	Name   string // a create's name
	Call   time.Time
	Return time.Time
	Code   int    // HTTP status; 0 when no answer came (a timeout, a reset)
	Seen   []Seen // what a show (one) or a list (its page) showed
}

// Ambiguous reports whether the request may or may not have taken effect:
// no answer, or a 5xx (a 503 while the database is away, a 500).
func (o Op) Ambiguous() bool { return o.Code == 0 || o.Code >= 500 }

// Recorder keeps a run's history. Safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	ops   []Op
	snaps []Snapshot
}

// New returns an empty recorder.
func New() *Recorder { return &Recorder{} }

// Add records one operation (for requests made without Transport).
func (r *Recorder) Add(op Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// Ops returns a copy of what was recorded so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Client is an HTTP client whose server requests are recorded; timeout
// bounds each request (its expiry is an ambiguous answer).
func (r *Recorder) Client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: r.Transport(nil)}
}

// Transport wraps base (nil: http.DefaultTransport) so that every create,
// show, list and delete of servers through it is recorded; other requests
// pass through untouched.
func (r *Recorder) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{r: r, base: base}
}

type transport struct {
	r    *Recorder
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	kind, id, ok := classify(req.Method, req.URL.Path)
	if !ok {
		return t.base.RoundTrip(req)
	}
	op := Op{Kind: kind, Server: id}
	if kind == Create && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		op.Name = createName(body)
	}
	op.Call = time.Now()
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		op.Return = time.Now()
		t.r.Add(op)
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	op.Return = time.Now()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil { // the answer broke off: nobody knows what happened
		t.r.Add(op)
		return resp, nil
	}
	op.Code = resp.StatusCode
	op.read(body)
	t.r.Add(op)
	return resp, nil
}

// classify names the server request a method and path make, if any.
func classify(method, path string) (Kind, string, bool) {
	i := strings.Index(path, "/servers")
	if i < 0 {
		return 0, "", false
	}
	rest := strings.Trim(path[i+len("/servers"):], "/")
	switch {
	case method == http.MethodPost && rest == "":
		return Create, "", true
	case method == http.MethodGet && (rest == "" || rest == "detail"):
		return List, "", true
	case strings.Contains(rest, "/"):
		return 0, "", false // an action, an interface, a sub-resource
	case method == http.MethodGet:
		return Show, rest, true
	case method == http.MethodDelete:
		return Delete, rest, true
	}
	return 0, "", false
}

func createName(body []byte) string {
	var in struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
	}
	_ = json.Unmarshal(body, &in)
	return in.Server.Name
}

// wire is a server as the API spells it.
type wire struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Status    string  `json:"status"`
	TaskState *string `json:"OS-EXT-STS:task_state"`
	Node      *string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
}

func (w wire) seen() Seen {
	s := Seen{ID: w.ID, Name: w.Name, Status: w.Status}
	if w.TaskState != nil {
		s.TaskState = *w.TaskState
	}
	if w.Node != nil {
		s.Node = *w.Node
	}
	return s
}

// read takes what the answer's body shows.
func (o *Op) read(body []byte) {
	var out struct {
		Server  *wire  `json:"server"`
		Servers []wire `json:"servers"`
	}
	if json.Unmarshal(body, &out) != nil {
		return
	}
	switch o.Kind {
	case Create:
		if o.Code == http.StatusAccepted && out.Server != nil {
			o.Server = out.Server.ID
		}
	case Show:
		if o.Code == http.StatusOK && out.Server != nil {
			o.Seen = []Seen{out.Server.seen()}
		}
	case List:
		if o.Code == http.StatusOK {
			for _, w := range out.Servers {
				o.Seen = append(o.Seen, w.seen())
			}
		}
	}
}
