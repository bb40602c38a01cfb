package neutron

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/faulttest"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// neutronTimeout is ingot's bound on one Neutron call in the fault test;
// the blackhole outlasts it. (With 2 s, the slowed link alone timed out
// port creates that Neutron went on to make.)
const neutronTimeout = 5 * time.Second

// faultyNeutron is the world with ingot's Neutron link (and only ingot's:
// Ironic keeps its own) through a fault proxy, and a recording client.
type faultyNeutron struct {
	*world
	link *faulttest.Link
	hist *history.Recorder
	rhc  *http.Client
}

func startFaultyNeutron(t *testing.T, nodes int) *faultyNeutron {
	t.Helper()
	f := &faultyNeutron{hist: history.New()}
	spec := ironictest.NodeSpec{Name: "flt", ResourceClass: "baremetal", Ports: 2,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "flat"}
	f.world = startWorldWith(t, nodes, spec, func(c *config.Config, ks *keystonetest.Env, n *neutrontest.Env) {
		u, err := url.Parse(n.URL)
		if err != nil {
			t.Fatal(err)
		}
		f.link = faulttest.New(t, "neutron", u.Host)
		// ingot reads Neutron's endpoint from the catalog: the proxied one
		// is registered in a region of its own, which only ingot asks for.
		ks.RegisterServiceIn(t, "network", "neutron-faulty", f.link.Rewrite(n.URL), "RegionFault")
		c.Network.Region = "RegionFault"
		c.Network.Timeout = neutronTimeout
		c.BuildTimeout, c.DeleteTimeout, c.InterfaceTimeout = 3*time.Minute, 2*time.Minute, 2*time.Minute
	})
	f.rhc = f.hist.Client(30 * time.Second)
	return f
}

// do is one recorded call as member-a; it returns the status (any 2xx as
// 200; 0: no answer) and the error's text.
func (f *faultyNeutron) do(method, path string, body, out any) (int, string) {
	err := testproc.CallWith(f.rhc, f.member, method, f.url+path, body, out, map[string]string{"X-OpenStack-Nova-API-Version": "2.90"})
	if err == nil {
		return http.StatusOK, ""
	}
	// The error reads "METHOD url: 503 Service Unavailable {body}".
	msg := err.Error()
	var code int
	if i := strings.Index(msg, ": "); i >= 0 {
		_, _ = fmt.Sscanf(msg[i+2:], "%d", &code)
	}
	return code, msg
}

func (f *faultyNeutron) createOn(name string) (string, int, string) {
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	code, msg := f.do("POST", "/v2.1/servers", map[string]any{"server": map[string]any{"name": name, "flavorRef": "1",
		"imageRef": f.app.Config.Images[0].ID, "networks": []map[string]string{{"uuid": f.net}}}}, &out)
	return out.Server.ID, code, msg
}

// status is the server's status through the recording client ("gone"
// after a 404).
func (f *faultyNeutron) status(id string) string {
	var out struct {
		Server struct {
			Status    string  `json:"status"`
			TaskState *string `json:"OS-EXT-STS:task_state"`
		} `json:"server"`
	}
	code, _ := f.do("GET", "/v2.1/servers/"+id, nil, &out)
	switch {
	case code == http.StatusNotFound:
		return "gone"
	case code != http.StatusOK:
		return fmt.Sprint(code)
	case out.Server.TaskState != nil && *out.Server.TaskState != "":
		return out.Server.Status + "/" + *out.Server.TaskState
	}
	return out.Server.Status
}

// stable waits until every id is ACTIVE, ERROR or gone, with no task.
func (f *faultyNeutron) stable(t *testing.T, ids []string, timeout time.Duration) map[string]string {
	t.Helper()
	out := map[string]string{}
	poll.Until(t, timeout, "servers stable", func() (bool, string) {
		for _, id := range ids {
			out[id] = f.status(id)
		}
		for _, st := range out {
			if st != "ACTIVE" && st != "ERROR" && st != "gone" {
				return false, fmt.Sprint(out)
			}
		}
		return true, ""
	})
	return out
}

// TestNeutronLinkFaults: ingot's link to the real neutron-server slowed
// (300 ± 100 ms a chunk), reset, then blackholed for longer than
// network.timeout, each time during a burst of creates with a port, a
// delete of a server with its port, and an interface attach; then healed.
// Every server converges (ACTIVE, or gone once deleted), no request is
// answered 500, and the history check finds nothing lost, resurrected,
// double-held, leaked, past its deadline or not linearizable — the leaks
// counted against Neutron itself: no port with ingot's device_owner whose
// device_id is a server that is gone or ERROR, and none at all once every
// server is deleted (a live server's unrecorded extra port, the create
// whose answer the fault lost, is counted and must go with the server).
func TestNeutronLinkFaults(t *testing.T) {
	f := startFaultyNeutron(t, 4)
	var all []string
	began := time.Now()
	for _, p := range faulttest.Standard(neutronTimeout) {
		var answers []string
		start := time.Now()
		var before []string
		for _, n := range []string{"-a", "-b"} {
			id, code, msg := f.createOn(p.Name + n)
			if code != http.StatusOK {
				t.Fatalf("create before the fault: %s", msg)
			}
			before = append(before, id)
		}
		for _, id := range before {
			f.waitStatus(t, id, "ACTIVE", 3*time.Minute)
		}
		p.Apply(f.link)
		cut := time.Now()
		ids := append([]string(nil), before...)
		for i := range 2 {
			id, code, msg := f.createOn(fmt.Sprintf("%s-during-%d", p.Name, i))
			answers = append(answers, fmt.Sprintf("create %d", code))
			if code >= 500 && code != http.StatusServiceUnavailable {
				t.Errorf("%s: a create answered %s", p.Name, msg)
			}
			if id != "" {
				ids = append(ids, id)
			}
		}
		code, msg := f.do("DELETE", "/v2.1/servers/"+before[0], nil, nil)
		answers = append(answers, fmt.Sprintf("delete %d", code))
		if code != http.StatusOK {
			t.Errorf("%s: the delete answered %s", p.Name, msg)
		}
		// The attach waits for its operation (Nova's does, for its RPC):
		// through the fault and after, on a client of its own.
		attachDone := make(chan string, 1)
		go func() {
			began := time.Now()
			err := testproc.CallWith(&http.Client{Timeout: 5 * time.Minute}, f.member, "POST", f.url+"/v2.1/servers/"+before[1]+"/os-interface",
				map[string]any{"interfaceAttachment": map[string]any{"net_id": f.net}}, nil, map[string]string{"X-OpenStack-Nova-API-Version": "2.90"})
			code := "200"
			if err != nil {
				code = err.Error()
				if i := strings.Index(code, "os-interface: "); i >= 0 && len(code) >= i+17 {
					code = code[i+14 : i+17]
				}
			}
			attachDone <- fmt.Sprintf("%s in %s", code, time.Since(began).Round(100*time.Millisecond))
		}()
		if d := p.Hold - time.Since(cut); d > 0 {
			time.Sleep(d) // the fault lasts as long as the scenario says, whatever the requests took
		}
		f.link.Heal()
		healed := time.Now()
		end := f.stable(t, ids, 3*time.Minute)
		converged := time.Since(healed)
		if end[before[0]] != "gone" {
			t.Errorf("%s: the server deleted during the fault is %s", p.Name, end[before[0]])
		}
		for _, id := range ids[1:] {
			if end[id] != "ACTIVE" {
				t.Errorf("%s: %s is %s after the heal, want ACTIVE (fault %+v)", p.Name, id, end[id], f.rec(t, id).Fault)
			}
		}
		att := <-attachDone
		// Done, Nova's InterfaceAttachFailed, or Nova's 503 when the API's
		// own look at the network found Neutron away.
		if code := att[:3]; code != "200" && code != "500" && code != "503" {
			t.Errorf("%s: the interface attach answered %s", p.Name, att)
		}
		answers = append(answers, "attach "+att)
		f.waitGone(t, before[0], time.Minute)
		extra := f.checkPorts(t, p.Name)
		// The phase's servers are deleted through the healed link, freeing
		// the nodes for the next phase.
		for _, id := range ids[1:] {
			if code, msg := f.do("DELETE", "/v2.1/servers/"+id, nil, nil); code != http.StatusOK {
				t.Errorf("%s: delete after the heal: %s", p.Name, msg)
			}
		}
		f.stable(t, ids, 3*time.Minute)
		for _, id := range ids {
			f.waitGone(t, id, time.Minute)
		}
		all = append(all, ids...)
		t.Logf("neutron %s for %s (network.timeout %s): %s; converged %s after the heal, %d unrecorded ports of live servers (phase %s)", p.Name,
			healed.Sub(cut).Round(100*time.Millisecond), neutronTimeout, strings.Join(answers, ", "),
			converged.Round(100*time.Millisecond), extra, time.Since(start).Round(time.Second))
	}
	if n := len(f.ownedPorts(t)); n != 0 {
		t.Errorf("%d Neutron ports of ingot's left with every server deleted", n)
	}
	v := f.checkHistory(t)
	t.Logf("Neutron link faults, %d servers in %s: %s", len(all), time.Since(began).Round(time.Second), v)
}

// checkPorts counts Neutron's ports of ingot's device_owner against
// ingot's records: one of a server that is not live (gone, ERROR) is a
// leak; one of a live server that ingot did not record is an extra port (a
// create whose answer was lost), deleted with the server — counted, not
// failed.
func (f *faultyNeutron) checkPorts(t *testing.T, when string) (extra int) {
	t.Helper()
	for _, p := range f.ownedPorts(t) {
		st := f.status(p.Server)
		if st != "ACTIVE" && !strings.HasPrefix(st, "ACTIVE/") {
			t.Errorf("%s: Neutron port %s of server %s, which is %s: leaked", when, p.ID, p.Server, st)
			continue
		}
		rows, err := f.app.Store.Ports(context.Background(), p.Server)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range rows {
			found = found || r.NeutronID == p.ID
		}
		if !found {
			extra++
		}
	}
	return extra
}

// ownedPorts are Neutron's ports with ingot's device_owner, as holdings.
func (f *faultyNeutron) ownedPorts(t *testing.T) []history.Holding {
	t.Helper()
	var out struct {
		Ports []struct {
			ID       string `json:"id"`
			DeviceID string `json:"device_id"`
		} `json:"ports"`
	}
	if err := testproc.Call(f.hc, f.neutron.AdminToken(t), http.MethodGet, f.neutron.URL+"/v2.0/ports?device_owner=compute:nova", nil, &out); err != nil {
		t.Fatal(err)
	}
	hs := make([]history.Holding, 0, len(out.Ports))
	for _, p := range out.Ports {
		hs = append(hs, history.Holding{Kind: "port", ID: p.ID, Server: p.DeviceID})
	}
	return hs
}

// checkHistory reads the final state — ingot's servers, Ironic's nodes
// with their VIFs, Neutron's ports — and checks the run.
func (f *faultyNeutron) checkHistory(t *testing.T) history.Verdict {
	t.Helper()
	servers, err := history.Servers(f.rhc, f.url, f.member)
	if err != nil {
		t.Fatal(err)
	}
	fin := history.Final{At: time.Now(), Servers: servers, Nodes: f.ironic.HistoryNodes(t), Holdings: f.ownedPorts(t)}
	return f.hist.Require(t, fin, history.Bounds{Build: f.app.Config.BuildTimeout + 10*time.Second, Delete: f.app.Config.DeleteTimeout + 10*time.Second})
}
