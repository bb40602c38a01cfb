package history

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hist builds a history on a time line of seconds from t0.
type hist struct {
	r  *Recorder
	t0 time.Time
}

func newHist() *hist { return &hist{r: New(), t0: time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)} }

func (h *hist) at(s float64) time.Time { return h.t0.Add(time.Duration(s * float64(time.Second))) }

func (h *hist) op(kind Kind, id string, from, to float64, code int, seen ...Seen) {
	h.r.Add(Op{Kind: kind, Server: id, Name: "n-" + id, Call: h.at(from), Return: h.at(to), Code: code, Seen: seen})
}

func active(id, node string) Seen { return Seen{ID: id, Name: "n-" + id, Status: "ACTIVE", Node: node} }

func build(id string) Seen { return Seen{ID: id, Name: "n-" + id, Status: "BUILD"} }

func del(s Seen) Seen { s.TaskState = "deleting"; return s }

// good is a run that keeps every property: a, built and kept; b, built
// and deleted.
func good() (*hist, Final) {
	h := newHist()
	h.op(Create, "a", 0, 0.1, 202)
	h.op(Create, "b", 0, 0.2, 202)
	h.op(Show, "a", 0.3, 0.35, 200, build("a"))
	h.op(List, "", 5, 5.1, 200, active("a", "n1"), active("b", "n2"))
	h.op(Delete, "b", 6, 6.1, 204)
	h.op(Show, "b", 6.2, 6.25, 200, del(active("b", "n2")))
	h.op(Show, "b", 8, 8.05, 404)
	return h, Final{At: h.at(10), Servers: map[string]Seen{"a": active("a", "n1")},
		Nodes:    []Node{{UUID: "n1", InstanceUUID: "a", ProvisionState: "active", VIFs: []string{"p1"}}, {UUID: "n2", ProvisionState: "available"}},
		Holdings: []Holding{{Kind: "port", ID: "p1", Server: "a", Node: "n1"}}}
}

func TestGoodHistoryPasses(t *testing.T) {
	h, f := good()
	v := h.r.Check(f, Bounds{Build: time.Minute, Delete: time.Minute})
	if !v.OK() || v.Servers != 2 || v.Requests != 7 {
		t.Fatalf("%s\n%s", v, strings.Join(v.Problems, "\n"))
	}
}

// The checker's teeth: each broken property is caught, and counted where
// it belongs.
func TestCheckerCatches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(h *hist, f *Final)
		want   func(v Verdict) int
	}{
		{"a deleted server resurrected", func(h *hist, f *Final) {
			h.op(Show, "b", 7, 7.05, 200, active("b", "n2"))
		}, func(v Verdict) int { return min(v.Resurrected, v.NotLinearizable) }},
		{"seen again after a 404", func(h *hist, f *Final) {
			h.op(List, "", 9, 9.1, 200, active("a", "n1"), del(active("b", "n2")))
		}, func(v Verdict) int { return min(v.Resurrected, v.NotLinearizable) }},
		{"an accepted create lost", func(h *hist, f *Final) {
			delete(f.Servers, "a")
			f.Nodes[0] = Node{UUID: "n1", ProvisionState: "available"}
			f.Holdings = nil
		}, func(v Verdict) int { return min(v.Lost, v.NotLinearizable) }},
		{"an accepted create left in BUILD", func(h *hist, f *Final) {
			f.Servers["a"] = build("a")
		}, func(v Verdict) int { return v.Lost }},
		{"an accepted delete not done", func(h *hist, f *Final) {
			f.Servers["b"] = del(active("b", "n2"))
			f.Nodes[1] = Node{UUID: "n2", InstanceUUID: "b", ProvisionState: "active"}
		}, func(v Verdict) int { return v.Lost }},
		{"two servers on one node", func(h *hist, f *Final) {
			h.op(List, "", 5.5, 5.6, 200, active("a", "n1"), active("b", "n1"))
		}, func(v Verdict) int { return v.DoubleHeld }},
		{"one instance on two nodes in Ironic", func(h *hist, f *Final) {
			f.Nodes[1] = Node{UUID: "n2", InstanceUUID: "a", ProvisionState: "active"}
		}, func(v Verdict) int { return v.DoubleHeld }},
		{"a node left carrying a deleted server", func(h *hist, f *Final) {
			f.Nodes[1] = Node{UUID: "n2", InstanceUUID: "b", ProvisionState: "active", VIFs: []string{"p2"}}
		}, func(v Verdict) int { return v.Leaked }},
		{"a port of a deleted server", func(h *hist, f *Final) {
			f.Holdings = append(f.Holdings, Holding{Kind: "port", ID: "p2", Server: "b"})
		}, func(v Verdict) int { return v.Leaked }},
		{"a target on a free node", func(h *hist, f *Final) {
			f.Holdings = append(f.Holdings, Holding{Kind: "target", ID: "t2", Node: "n2"})
		}, func(v Verdict) int { return v.Leaked }},
		{"in BUILD past the build deadline", func(h *hist, f *Final) {
			h.op(Show, "a", 4, 4.1, 200, build("a"))
		}, func(v Verdict) int { return v.PastDeadline }},
		{"a server nobody created", func(h *hist, f *Final) {
			f.Servers["c"] = active("c", "n3")
			f.Nodes = append(f.Nodes, Node{UUID: "n3", InstanceUUID: "c", ProvisionState: "active"})
		}, func(v Verdict) int { return v.NotLinearizable }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, f := good()
			tc.break_(h, &f)
			v := h.r.Check(f, Bounds{Build: 3 * time.Second, Delete: time.Minute})
			if tc.want(v) == 0 || v.OK() {
				t.Fatalf("not caught: %s\n%s", v, strings.Join(v.Problems, "\n"))
			}
			t.Logf("%s: %s", v, strings.Join(v.Problems, "; "))
		})
	}
}

// An answer that never came is a request that may or may not have taken
// effect: either way the history is explained.
func TestAmbiguousAnswers(t *testing.T) {
	t.Run("a create with no answer that made its server", func(t *testing.T) {
		h, f := good()
		h.r.Add(Op{Kind: Create, Name: "n-c", Call: h.at(1), Return: h.at(11), Code: 0})
		h.op(Show, "c", 12, 12.1, 200, active("c", "n3")) // after the final look: a later run's read, still fine
		f.Servers["c"] = active("c", "n3")
		f.Nodes = append(f.Nodes, Node{UUID: "n3", InstanceUUID: "c", ProvisionState: "active"})
		if v := h.r.Check(f, Bounds{}); !v.OK() || v.Ambiguous != 1 {
			t.Fatalf("%s\n%s", v, strings.Join(v.Problems, "\n"))
		}
	})
	t.Run("a 503 create that made nothing", func(t *testing.T) {
		h, f := good()
		h.r.Add(Op{Kind: Create, Name: "n-d", Call: h.at(1), Return: h.at(1.1), Code: 503})
		if v := h.r.Check(f, Bounds{}); !v.OK() {
			t.Fatalf("%s\n%s", v, strings.Join(v.Problems, "\n"))
		}
	})
	t.Run("a delete timed out, not carried out", func(t *testing.T) {
		h, f := good()
		h.op(Delete, "a", 6, 16, 0)
		if v := h.r.Check(f, Bounds{}); !v.OK() {
			t.Fatalf("%s\n%s", v, strings.Join(v.Problems, "\n"))
		}
	})
	t.Run("a delete timed out, carried out", func(t *testing.T) {
		h, f := good()
		h.op(Delete, "a", 6, 16, 0)
		h.op(Show, "a", 7, 7.1, 200, del(active("a", "n1")))
		delete(f.Servers, "a")
		f.Nodes[0] = Node{UUID: "n1", ProvisionState: "available"}
		f.Holdings = nil
		if v := h.r.Check(f, Bounds{}); !v.OK() {
			t.Fatalf("%s\n%s", v, strings.Join(v.Problems, "\n"))
		}
	})
}

// The transport records what a client asks and is answered.
func TestTransportRecords(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/action"):
			w.WriteHeader(202)
		case r.Method == "POST":
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"web"`) {
				t.Errorf("the create's body did not reach the server: %s", body)
			}
			w.WriteHeader(202)
			_ = json.NewEncoder(w).Encode(map[string]any{"server": map[string]any{"id": "s1"}})
		case r.Method == "GET" && r.URL.Path == "/v2.1/servers/s1":
			_ = json.NewEncoder(w).Encode(map[string]any{"server": map[string]any{"id": "s1", "name": "web", "status": "BUILD", "OS-EXT-STS:task_state": "spawning"}})
		case r.Method == "GET":
			_ = json.NewEncoder(w).Encode(map[string]any{"servers": []any{map[string]any{"id": "s1", "name": "web", "status": "ACTIVE",
				"OS-EXT-SRV-ATTR:hypervisor_hostname": "n1"}}})
		case r.Method == "DELETE":
			w.WriteHeader(204)
		}
	}))
	defer api.Close()
	rec := New()
	c := rec.Client(5 * time.Second)
	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, api.URL+path, strings.NewReader(body))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do("POST", "/v2.1/servers", `{"server": {"name": "web"}}`)
	do("GET", "/v2.1/servers/s1", "")
	do("POST", "/v2.1/servers/s1/action", `{"reboot": {"type": "SOFT"}}`) // not recorded
	do("DELETE", "/v2.1/servers/s1", "")
	if _, err := Servers(c, api.URL, ""); err != nil {
		t.Fatal(err)
	}
	ops := rec.Ops()
	want := []string{"create s1 web 202", "show s1  200 BUILD/spawning", "delete s1  204", "list   200 ACTIVE/@n1"}
	if len(ops) != len(want) {
		t.Fatalf("recorded %d ops, want %d: %+v", len(ops), len(want), ops)
	}
	for i, op := range ops {
		got := op.Kind.String() + " " + op.Server + " " + op.Name + " " + itoa(op.Code)
		for _, s := range op.Seen {
			got += " " + s.Status
			if s.TaskState != "" {
				got += "/" + s.TaskState
			}
			if s.Node != "" {
				got += "/@" + s.Node
			}
		}
		if got != want[i] || op.Return.Before(op.Call) {
			t.Errorf("op %d: %q, want %q", i, got, want[i])
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
