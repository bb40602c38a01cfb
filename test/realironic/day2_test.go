package realironic

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// Day-2 operations against Debian's Ironic (S16–S18, rescue), each timed
// from the request to the server at rest and its Ironic calls counted by a
// proxy in front of Ironic (docs/DESIGN.md §5 "Operations").

// countProxy passes ingot's calls to Ironic and logs each one.
type countProxy struct {
	next  http.Handler
	mu    sync.Mutex
	calls []string // "METHOD path" (a node list keeps its query's first filter)
}

func (p *countProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	what := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" && r.URL.Path == "/v1/nodes" {
		what += "?" + strings.SplitN(r.URL.RawQuery, "&", 2)[0]
	}
	p.mu.Lock()
	p.calls = append(p.calls, what)
	p.mu.Unlock()
	p.next.ServeHTTP(w, r)
}

func (p *countProxy) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

// since counts the calls after mark by kind, with node ids shown as {node}.
func (p *countProxy) since(mark int, node string) (total int, summary string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	by := map[string]int{}
	for _, c := range p.calls[mark:] {
		by[strings.ReplaceAll(c, node, "{node}")]++
	}
	var parts []string
	for k, n := range by {
		parts = append(parts, fmt.Sprintf("%d× %s", n, k))
		total += n
	}
	sort.Strings(parts)
	return total, strings.Join(parts, ", ")
}

// day2View is what these tests read of a server.
type day2View struct {
	Status     string  `json:"status"`
	TaskState  *string `json:"OS-EXT-STS:task_state"`
	PowerState int     `json:"OS-EXT-STS:power_state"`
	IngotFault *struct {
		Reason string `json:"reason"`
		Step   string `json:"step"`
	} `json:"ingot:fault"`
}

func (s *stack) view(id string) day2View {
	s.t.Helper()
	var out struct {
		Server day2View `json:"server"`
	}
	if code := s.Call("GET", "/v2.1/servers/"+id, nil, &out); code != http.StatusOK {
		s.t.Fatalf("GET %s: %d", id, code)
	}
	return out.Server
}

// operate asks for an operation and returns how long the server took to
// be at rest in want, with its Ironic calls.
func (s *stack) operate(p *countProxy, id, node string, body any, want string) (time.Duration, string) {
	s.t.Helper()
	mark := p.mark()
	start := time.Now()
	var out map[string]any
	if code := s.Call("POST", "/v2.1/servers/"+id+"/action", body, &out); code != http.StatusAccepted && code != http.StatusOK {
		s.t.Fatalf("action %v: %d %v", body, code, out)
	}
	s.WaitFor(fmt.Sprintf("%s at rest in %s", id, want), 90*time.Second, func() bool {
		v := s.view(id)
		if v.Status == "ERROR" && want != "ERROR" {
			s.t.Fatalf("server %s is ERROR: %+v", id, v.IngotFault)
		}
		return v.TaskState == nil && v.Status == want
	})
	took := time.Since(start)
	n, summary := p.since(mark, node)
	return took, fmt.Sprintf("%s, %d Ironic calls (%s)", took.Round(time.Millisecond), n, summary)
}

func newDay2Stack(t *testing.T, ir *ironictest.Env, rc string) (*stack, *countProxy) {
	target, err := url.Parse(ir.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &countProxy{next: httputil.NewSingleHostReverseProxy(target)}
	proxy := httptest.NewServer(p)
	t.Cleanup(proxy.Close)
	s := newStackVia(t, ir, rc, proxy.URL, func(c *config.Config) {
		c.Images = append(c.Images, config.Image{Name: "ubuntu-24.04", URL: "http://127.0.0.1:1/ubuntu-24.04.qcow2"})
	})
	return s, p
}

func testDay2(t *testing.T, ir *ironictest.Env) {
	t.Run("S16 reboot soft and hard, stop then start", func(t *testing.T) {
		s, p := newDay2Stack(t, ir, "rc-s16")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s16", ResourceClass: "rc-s16", Kind: ironictest.Fast})
		id := s.create("s16", "bm")
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		if n := ir.GetNode(t, node); n["power_state"] != "power on" {
			t.Fatalf("ACTIVE with the node %v", n["power_state"])
		}
		for _, op := range []struct {
			name  string
			body  any
			want  string
			power string
		}{
			{"reboot SOFT", map[string]any{"reboot": map[string]any{"type": "SOFT"}}, "ACTIVE", "power on"},
			{"reboot HARD", map[string]any{"reboot": map[string]any{"type": "HARD"}}, "ACTIVE", "power on"},
			{"stop", map[string]any{"os-stop": nil}, "SHUTOFF", "power off"},
			{"start", map[string]any{"os-start": nil}, "ACTIVE", "power on"},
		} {
			_, m := s.operate(p, id, node, op.body, op.want)
			t.Logf("S16 %s: %s", op.name, m)
			v := s.view(id)
			n := ir.GetNode(t, node)
			wantPower := map[string]int{"power on": 1, "power off": 4}[op.power]
			if n["power_state"] != op.power || n["target_power_state"] != nil || n["provision_state"] != "active" || v.PowerState != wantPower {
				t.Errorf("after %s: node %v (target %v, %v), power_state %d", op.name, n["power_state"], n["target_power_state"], n["provision_state"], v.PowerState)
			}
		}
		s.Call("DELETE", "/v2.1/servers/"+id, nil, nil)
		s.WaitGone(id, 60*time.Second)
		s.released(node)
		s.noPorts(id)
	})

	t.Run("S17 rebuild to a new image", func(t *testing.T) {
		s, p := newDay2Stack(t, ir, "rc-s17")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s17", ResourceClass: "rc-s17", Kind: ironictest.Fast})
		id := s.create("s17", "bm")
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		ports := ir.Ports(t, node)
		vifsBefore := ir.ListVIFs(t, node)
		before := s.rec(id)
		img2 := s.app.Config.Images[1].ID
		_, m := s.operate(p, id, node, map[string]any{"rebuild": map[string]any{"imageRef": img2, "name": "s17-rebuilt",
			"metadata": map[string]any{"role": "db"}}}, "ACTIVE")
		t.Logf("S17 rebuild: %s", m)
		n := ir.GetNode(t, node)
		info, _ := n["instance_info"].(map[string]any)
		if n["instance_uuid"] != id || n["provision_state"] != "active" || info["image_source"] != "http://127.0.0.1:1/ubuntu-24.04.qcow2" {
			t.Errorf("node after the rebuild: %v %v %v", n["instance_uuid"], n["provision_state"], info["image_source"])
		}
		cd := ir.ConfigDrive(t, node)
		meta, _ := cd["meta_data"].(map[string]any)
		if meta["name"] != "s17-rebuilt" || fmt.Sprint(meta["meta"]) != "map[role:db]" || meta["uuid"] != id {
			t.Errorf("config drive meta_data after the rebuild: %v", meta)
		}
		after := s.rec(id)
		addrs, _ := s.app.Store.Ports(t.Context(), id)
		if after.NodeID != before.NodeID || len(addrs) != 1 || len(ir.Ports(t, node)) != len(ports) {
			t.Errorf("node %s → %s, ports %+v", before.NodeID, after.NodeID, addrs)
		}
		if vifs := ir.ListVIFs(t, node); fmt.Sprint(vifs) != fmt.Sprint(vifsBefore) {
			t.Errorf("VIFs before the rebuild %v, after %v", vifsBefore, vifs)
		}
		s.Call("DELETE", "/v2.1/servers/"+id, nil, nil)
		s.WaitGone(id, 60*time.Second)
		s.released(node)
	})

	t.Run("S18 node deleted during a long rebuild", func(t *testing.T) {
		s, p := newDay2Stack(t, ir, "rc-s18")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "s18", ResourceClass: "rc-s18", Kind: ironictest.Fast})
		id := s.create("s18", "bm")
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		// The rebuild of a custom-agent node sits in wait call-back: Ironic
		// lets an active node change its deploy interface in maintenance.
		ir.SetMaintenance(t, node, true)
		if r := ir.Request(t, "PATCH", "/v1/nodes/"+node, []map[string]any{{"op": "replace", "path": "/deploy_interface", "value": "custom-agent"}}); r.Status != http.StatusOK {
			t.Fatalf("deploy_interface: %d %s", r.Status, r.Body)
		}
		ir.SetMaintenance(t, node, false)
		mark := p.mark()
		if code := s.Call("POST", "/v2.1/servers/"+id+"/action", map[string]any{"rebuild": map[string]any{"imageRef": s.imgID}}, nil); code != http.StatusAccepted {
			t.Fatalf("rebuild: %d", code)
		}
		ir.WaitProvisionState(t, node, "wait call-back", 60*time.Second)
		start := time.Now()
		ir.OutOfBandDelete(t, node)
		s.WaitFor("ERROR", 60*time.Second, func() bool { return s.view(id).Status == "ERROR" })
		v := s.view(id)
		if v.IngotFault == nil || v.IngotFault.Reason != "node_deleted" || v.IngotFault.Step != "rebuild" {
			t.Errorf("fault %+v, want node_deleted at step rebuild", v.IngotFault)
		}
		s.noPorts(id)
		n, summary := p.since(mark, node)
		t.Logf("S18: out-of-band delete during the rebuild to ERROR: %s; %d Ironic calls from the rebuild on (%s)",
			time.Since(start).Round(time.Millisecond), n, summary)
		if r := s.rec(id); r.NodeID != "" || len(r.Attempts) != 1 {
			t.Errorf("record holds node %q, attempts %+v", r.NodeID, r.Attempts)
		}
	})

	t.Run("rescue and unrescue", func(t *testing.T) {
		s, p := newDay2Stack(t, ir, "rc-resc")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "resc", ResourceClass: "rc-resc", Kind: ironictest.Fast, Rescue: true})
		id := s.create("resc", "bm")
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		_, m := s.operate(p, id, node, map[string]any{"rescue": map[string]any{"adminPass": "pw"}}, "RESCUE")
		t.Logf("rescue: %s", m)
		if n := ir.GetNode(t, node); n["provision_state"] != "rescue" || n["instance_uuid"] != id {
			t.Errorf("node %v %v", n["provision_state"], n["instance_uuid"])
		}
		_, m = s.operate(p, id, node, map[string]any{"unrescue": nil}, "ACTIVE")
		t.Logf("unrescue: %s", m)
		if n := ir.GetNode(t, node); n["provision_state"] != "active" {
			t.Errorf("node %v after unrescue", n["provision_state"])
		}
		// A no-rescue node: 409 before Ironic is asked (Ironic answers 500).
		plain := ir.EnrollNode(t, ironictest.NodeSpec{Name: "resc-plain", ResourceClass: "rc-resc", Kind: ironictest.Fast})
		other := s.create("resc-plain", "bm")
		s.WaitStatus(other, "ACTIVE", 60*time.Second)
		if s.rec(other).NodeID != plain {
			t.Fatalf("second server on %s", s.rec(other).NodeID)
		}
		if code := s.Call("POST", "/v2.1/servers/"+other+"/action", map[string]any{"rescue": nil}, nil); code != http.StatusConflict {
			t.Errorf("rescue on a no-rescue node: %d", code)
		}
		for _, sv := range []string{id, other} {
			s.Call("DELETE", "/v2.1/servers/"+sv, nil, nil)
			s.WaitGone(sv, 60*time.Second)
		}
		s.released(node)
		s.released(plain)
	})
}
