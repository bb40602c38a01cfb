package neutron

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// world is Keystone, neutron-server with one shared flat network and its
// subnet, a real Ironic whose nodes use the flat network interface, and
// ingot on all three.
type world struct {
	ks      *keystonetest.Env
	neutron *neutrontest.Env
	ironic  *ironictest.Env
	app     *app.App
	url     string
	net     string
	subnet  string
	project string // member-a's
	member  string // member-a's token
	hc      *http.Client
}

func startWorld(t *testing.T, nodes int, edit ...func(*ironictest.RealOptions)) *world {
	t.Helper()
	return startWorldOn(t, nodes, ironictest.NodeSpec{Name: "flat", ResourceClass: "baremetal", Ports: 1,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "flat"}, edit...)
}

// startWorldOn is startWorld with nodes of spec.
func startWorldOn(t *testing.T, nodes int, spec ironictest.NodeSpec, edit ...func(*ironictest.RealOptions)) *world {
	t.Helper()
	return startWorldWith(t, nodes, spec, nil, edit...)
}

// startWorldWith is startWorldOn with ingot's configuration changed by
// ingot once Keystone and Neutron run (a Neutron endpoint of its own).
func startWorldWith(t *testing.T, nodes int, spec ironictest.NodeSpec, ingot func(*config.Config, *keystonetest.Env, *neutrontest.Env),
	edit ...func(*ironictest.RealOptions)) *world {
	t.Helper()
	if !ironictest.RealWanted() && !ironictest.RealInstalled() {
		t.Skip("the real Ironic is not installed (.ci/install-ironic.sh)")
	}
	ks := keystonetest.Start(t)
	n := neutrontest.Start(t, ks)
	tenant := n.CreateNetwork(t, neutrontest.NetworkOptions{Name: "tenant", Shared: true})
	subnet := n.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: tenant.ID, CIDR: "192.0.2.0/24", Gateway: "192.0.2.1",
		DNS: []string{"192.0.2.53"}, HostRoutes: []neutrontest.Route{{Destination: "198.51.100.0/24", NextHop: "192.0.2.254"}}})
	ro := ironictest.RealOptions{
		Keystone: &ironictest.Keystone{AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"},
		Neutron:  &ironictest.Neutron{Username: n.ServiceUser, Password: keystonetest.Password, Network: tenant.ID},
	}
	for _, e := range edit {
		e(&ro)
	}
	ir := ironictest.StartReal(t, ro)
	ir.AuthToken = ks.Token(t, "ingot")
	ks.RegisterService(t, "baremetal", "ironic", ir.URL)
	ir.EnrollNodes(t, nodes, spec)

	cfg, err := config.Parse([]byte(ingotConfig))
	if err != nil {
		t.Fatal(err)
	}
	ingotSettings(&cfg, ks, t.TempDir())
	if ingot != nil {
		ingot(&cfg, ks, n)
	}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		cancel()
		t.Fatalf("app: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		a.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		a.Close()
	})
	return &world{ks: ks, neutron: n, ironic: ir, app: a, url: "http://" + ln.Addr().String(), net: tenant.ID, subnet: subnet,
		project: ks.Users["member-a"].ProjectID, member: ks.Token(t, "member-a"), hc: &http.Client{Timeout: 60 * time.Second}}
}

// call is one API call as member-a that must succeed.
func (w *world) call(t *testing.T, method, path string, body, out any) {
	t.Helper()
	err := testproc.CallWith(w.hc, w.member, method, w.url+path, body, out,
		map[string]string{"X-OpenStack-Nova-API-Version": "2.90"})
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

// refused asks for a server that must be refused with status; it returns
// the answer's text.
func (w *world) refused(t *testing.T, status int, networks []map[string]string) string {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"server": map[string]any{"name": "refused", "flavorRef": "1",
		"imageRef": w.app.Config.Images[0].ID, "networks": networks}})
	req, err := http.NewRequest("POST", w.url+"/v2.1/servers", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", w.member)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Errorf("create with networks %v: %d %s, want %d", networks, resp.StatusCode, body, status)
	}
	return string(body)
}

// create asks for a server and returns its id.
func (w *world) create(t *testing.T, name string, networks []map[string]string) string {
	t.Helper()
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	w.call(t, "POST", "/v2.1/servers", map[string]any{"server": map[string]any{"name": name, "flavorRef": "1",
		"imageRef": w.app.Config.Images[0].ID, "networks": networks}}, &out)
	return out.Server.ID
}

// rec is the server's record.
func (w *world) rec(t *testing.T, id string) *lifecycle.Server {
	t.Helper()
	s, err := w.app.Store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (w *world) waitStatus(t *testing.T, id, status string, timeout time.Duration) {
	t.Helper()
	poll.Until(t, timeout, id+" "+status, func() (bool, string) {
		var out struct {
			Server struct {
				Status string         `json:"status"`
				Fault  map[string]any `json:"fault"`
			} `json:"server"`
		}
		w.call(t, "GET", "/v2.1/servers/"+id, nil, &out)
		if out.Server.Status == "ERROR" && status != "ERROR" {
			t.Fatalf("%s: ERROR %v", id, out.Server.Fault)
		}
		return out.Server.Status == status, out.Server.Status
	})
}

func (w *world) waitPhase(t *testing.T, id, phase string, timeout time.Duration) {
	t.Helper()
	poll.Until(t, timeout, id+" in phase "+phase, func() (bool, string) {
		s := w.rec(t, id)
		return string(s.Phase) == phase, string(s.Phase)
	})
}

// waitGone waits for the 404 and for ingot to hold nothing of the server.
func (w *world) waitGone(t *testing.T, id string, timeout time.Duration) {
	t.Helper()
	poll.Until(t, timeout, id+" gone", func() (bool, string) {
		err := testproc.Call(w.hc, w.member, "GET", w.url+"/v2.1/servers/"+id, nil, nil)
		s := w.rec(t, id)
		return err != nil && strings.Contains(err.Error(), "404") && !s.Holds(), fmt.Sprintf("%v %s", err, s.Phase)
	})
}

// memberPort makes a port on the network as member-a (a user's own port).
func (w *world) memberPort(t *testing.T, fixedIP string) string {
	t.Helper()
	body := map[string]any{"network_id": w.net, "name": "mine"}
	if fixedIP != "" {
		body["fixed_ips"] = []map[string]string{{"ip_address": fixedIP}}
	}
	var out struct {
		Port struct{ ID string } `json:"port"`
	}
	if err := testproc.Call(w.hc, w.member, "POST", w.neutron.URL+"/v2.0/ports", map[string]any{"port": body}, &out); err != nil {
		t.Fatal(err)
	}
	return out.Port.ID
}

// adminPort reads a port as the admin (binding:* shown).
func (w *world) adminPort(t *testing.T, id string) map[string]any {
	t.Helper()
	var out struct {
		Port map[string]any `json:"port"`
	}
	if err := testproc.Call(w.hc, w.neutron.AdminToken(t), "GET", w.neutron.URL+"/v2.0/ports/"+id, nil, &out); err != nil {
		t.Fatal(err)
	}
	return out.Port
}

// wsgiLine is one request in neutron-server's log: who (the user id of
// the request context) and what.
var wsgiLine = regexp.MustCompile(`neutron\.wsgi \[\S+ req-\S+ (\S+) \S+ .*?"(GET|POST|PUT|DELETE) (/v2\.0/[a-z-]+)`)

// neutronCalls counts the API calls in neutron-server's log by caller
// (ingot, the Ironic's service user, others) and by "METHOD /v2.0/kind".
func (w *world) neutronCalls(t *testing.T) map[string]map[string]int {
	t.Helper()
	raw, err := os.ReadFile(w.neutron.Proc.Log)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{w.ks.Users["ingot"].ID: "ingot", w.ks.Users[w.neutron.ServiceUser].ID: "ironic"}
	out := map[string]map[string]int{}
	for _, m := range wsgiLine.FindAllStringSubmatch(string(raw), -1) {
		who := names[m[1]]
		if who == "" {
			who = "other"
		}
		if out[who] == nil {
			out[who] = map[string]int{}
		}
		out[who][m[2]+" "+m[3]]++
	}
	return out
}
