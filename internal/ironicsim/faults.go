package ironicsim

import (
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
)

// FaultKind is what an injected API fault does.
type FaultKind string

const (
	// FaultServerError answers 500 with an Ironic-shaped "Server" fault.
	FaultServerError FaultKind = "500"
	// FaultUnavailable answers 503 NoFreeConductorWorker.
	FaultUnavailable FaultKind = "503"
	// FaultNodeLocked answers 409 NodeLocked for the node in the path.
	FaultNodeLocked FaultKind = "locked"
	// FaultDrop closes the connection in the middle of the answer's status
	// line. NOTE: a bare close would be invisible for idempotent requests on a
	// reused connection: Go's HTTP client retries those transparently.
	FaultDrop FaultKind = "drop"
	// FaultLatency only delays the call by Latency; it then proceeds.
	FaultLatency FaultKind = "latency"
)

// Short names for the kinds.
const (
	Fault500    = FaultServerError
	Fault503    = FaultUnavailable
	FaultLocked = FaultNodeLocked
)

// Fault injects a failure into the Ironic API calls it matches.
type Fault struct {
	// Method to match ("GET", "PATCH", …); empty matches any.
	Method string
	// Path to match: a route template exactly as in Counts
	// ("/v1/nodes/{node}/states/provision"), or a glob on the request path
	// where * matches within one segment ("/v1/nodes/*/vifs") and a trailing
	// "/**" matches any depth ("/v1/nodes/**"). Empty matches any.
	Path string
	// Kind of failure.
	Kind FaultKind
	// Count limits the fault to the next Count matching calls that fire
	// (0: no limit, until ClearFaults).
	Count int
	// Fraction fires on this fraction of matching calls, drawn from the
	// simulator's seeded generator (0 or ≥1: every matching call).
	Fraction float64
	// Latency delays the answer (for every kind; required for FaultLatency).
	Latency time.Duration
}

type faultRule struct {
	Fault
	remaining int // for Count > 0
}

// InjectFault adds a fault rule. Rules are tried in the order they were
// added; the first that fires decides the call.
func (s *Sim) InjectFault(f Fault) error {
	switch f.Kind {
	case FaultServerError, FaultUnavailable, FaultNodeLocked, FaultDrop:
	case FaultLatency:
		if f.Latency <= 0 {
			return fmt.Errorf("ironicsim: latency fault needs a positive Latency")
		}
	default:
		return fmt.Errorf("ironicsim: unknown fault kind %q", f.Kind)
	}
	if f.Count < 0 || f.Fraction < 0 {
		return fmt.Errorf("ironicsim: negative Count or Fraction")
	}
	f.Method = strings.ToUpper(f.Method)
	s.mu.Lock()
	s.faults = append(s.faults, &faultRule{Fault: f, remaining: f.Count})
	s.mu.Unlock()
	return nil
}

// ClearFaults removes every fault rule.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

func (f *Fault) matches(method, tmpl, reqPath string) bool {
	if f.Method != "" && f.Method != method {
		return false
	}
	if f.Path == "" || f.Path == tmpl {
		return true
	}
	p := strings.TrimRight(reqPath, "/")
	if strings.HasSuffix(f.Path, "/**") {
		prefix := strings.TrimSuffix(f.Path, "/**")
		if ok, _ := path.Match(prefix, p); ok {
			return true
		}
		segs := strings.Split(p, "/")
		for i := len(segs); i > 0; i-- {
			if ok, _ := path.Match(prefix, strings.Join(segs[:i], "/")); ok {
				return true
			}
		}
		return false
	}
	ok, _ := path.Match(f.Path, p)
	return ok
}

// pickFault returns the rule that fires for this call, consuming one of its
// Count. Caller holds s.mu.
func (s *Sim) pickFault(method, tmpl, reqPath string) *Fault {
	for i, r := range s.faults {
		if !r.matches(method, tmpl, reqPath) {
			continue
		}
		if r.Fraction > 0 && r.Fraction < 1 && s.rng.Float64() >= r.Fraction {
			continue
		}
		f := r.Fault
		if r.Count > 0 {
			r.remaining--
			if r.remaining <= 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return &f
	}
	return nil
}

// applyFault runs the fault that fires for this call, if any, and reports
// whether the call was answered (or dropped) by it.
func (s *Sim) applyFault(w http.ResponseWriter, r *http.Request, tmpl string, params map[string]string) bool {
	s.mu.Lock()
	f := s.pickFault(r.Method, tmpl, r.URL.Path)
	nodeID := ""
	if f != nil && f.Kind == FaultNodeLocked {
		nodeID = params["node"]
		if n := s.nodes[canonicalUUID(nodeID)]; n != nil {
			nodeID = n.UUID
		} else if n := s.byName[nodeID]; n != nil {
			nodeID = n.UUID
		}
	}
	s.mu.Unlock()
	if f == nil {
		return false
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return true
		}
	}
	switch f.Kind {
	case FaultLatency:
		return false
	case FaultServerError:
		writeErr(w, serverErr(http.StatusInternalServerError, "Simulated server error injected by ironicsim."))
	case FaultUnavailable:
		writeErr(w, serverErr(http.StatusServiceUnavailable, "Requested action cannot be performed due to lack of free conductor workers."))
	case FaultNodeLocked:
		if nodeID == "" {
			nodeID = "None"
		}
		writeErr(w, errNodeLocked(nodeID, s.opts.Host))
	case FaultDrop:
		dropConnection(w)
	}
	return true
}

// dropConnection hijacks the connection, writes a truncated status line and
// closes it, so the client sees an unexpected EOF.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, buf, err := hj.Hijack(); err == nil {
			_, _ = buf.WriteString("HTTP/1.1 5")
			_ = buf.Flush()
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
