package adopt

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/novatest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// novaWorld is one real Nova on the real Ironic with Neutron and Glance
// behind one Keystone, shared by the subtests of TestAdoptFromNova (a
// start costs minutes).
type novaWorld struct {
	ks     *keystonetest.Env
	nt     *neutrontest.Env
	ir     *ironictest.Env
	cin    *cindertest.Env // nil without Cinder
	nv     *novatest.Env
	net    string // the shared tenant network
	nodes  []string
	flavor string
	image  string
	member string // member-a's token
	hc     *http.Client
}

func startNova(t *testing.T) *novaWorld {
	t.Helper()
	return startNovaWith(t, 5, nil)
}

// startNovaWith is startNova with n nodes like spec (each with one port);
// withCinder (nil: none) starts a Cinder first, so every service finds it
// in the catalog, and gives Ironic and Nova their [cinder] sections.
func startNovaWith(t *testing.T, n int, withCinder func(*keystonetest.Env) *cindertest.Env) *novaWorld {
	t.Helper()
	if !ironictest.RealWanted() && !ironictest.RealInstalled() {
		t.Skip("the real Ironic is not installed (.ci/install-ironic.sh)")
	}
	ks := keystonetest.Start(t)
	var cin *cindertest.Env
	if withCinder != nil {
		cin = withCinder(ks)
	}
	nt := neutrontest.Start(t, ks)
	tenant := nt.CreateNetwork(t, neutrontest.NetworkOptions{Name: "tenant", Shared: true})
	nt.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: tenant.ID, CIDR: "192.0.2.0/24", Gateway: "192.0.2.1"})
	gl := glancetest.Start(t, ks)
	ir := ironictest.StartReal(t, ironictest.RealOptions{
		Keystone: &ironictest.Keystone{AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"},
		Neutron:  &ironictest.Neutron{Username: nt.ServiceUser, Password: keystonetest.Password, Network: tenant.ID},
		Cinder:   cin != nil,
	})
	ir.AuthToken = ks.Token(t, "ingot")
	w := &novaWorld{ks: ks, nt: nt, ir: ir, cin: cin, net: tenant.ID, hc: &http.Client{Timeout: 60 * time.Second}}
	spec := ironictest.NodeSpec{Name: "nova", ResourceClass: "baremetal", Ports: 1,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "flat"}
	if cin != nil {
		// Ironic's cinder storage interface boots iSCSI volumes.
		spec.StorageInterface = "cinder"
		spec.Properties = map[string]any{"capabilities": "iscsi_boot:true"}
	}
	w.nodes = ir.EnrollNodes(t, n, spec)
	// Nova must see a node powered on soon (sync_power_state_interval):
	// the servers it shows are compared with ingot's.
	w.nv = novatest.StartWith(t, ks, ir.URL, novatest.Options{IronicAuth: true, PowerSync: 5, Cinder: cin != nil})
	w.flavor = w.nv.CreateFlavor(t, "bm.nova", "baremetal", 1024, 1, 10)
	w.image = gl.UploadImage(t, "admin", glancetest.ImageOptions{Name: "cirros", Visibility: "public"})
	w.nv.WaitCapacity(t, "baremetal", len(w.nodes), 3*time.Minute)
	w.member = ks.Token(t, "member-a")
	return w
}

// novaServer is one server booted in Nova and what the test expects of it.
type novaServer struct {
	id, name string
	// novaPort is the Neutron port Nova made, userPort the one the user
	// gave (kept, unbound, whatever the timestamps).
	novaPort, userPort string
	// novaPortCreated is novaPort's created_at (whole seconds).
	novaPortCreated string
	// nova is GET /servers/{id} from Nova before the switch.
	nova map[string]any
}

// TestAdoptFromNova: five servers a real Nova built on the real Ironic —
// a Neutron port Nova made, a port the user gave, a key pair with
// metadata and tags, one in a server group, one without networks and off — are
// refused while nova-compute runs, adopted once it is disabled and
// stopped (a second run adopts none), shown by ingot as Nova showed them
// (GET /servers/{id} at 2.90 compared member by member, the differences
// allowed listed in novaDiffAllowed), rebooted by ingot, and deleted by
// ingot: nodes available, Nova's ports deleted, the user's port unbound.
func TestAdoptFromNova(t *testing.T) {
	begin := time.Now()
	w := startNova(t)
	stackUp := time.Since(begin)
	t.Logf("stack up in %s (Nova %s of it, %s schema syncs)", stackUp.Round(time.Second),
		w.nv.SetupTime.Round(time.Second), w.nv.SyncTime.Round(time.Second))

	servers := w.bootAll(t)
	bin := buildBinary(t)
	config := novaConfig(t, w.ks, w.ir.URL)

	t.Run("refused while nova-compute runs", func(t *testing.T) {
		out, ee := runAdoptFrom(t, "--from-nova", bin, config, nil, "--dry-run")
		if ee != nil {
			t.Fatalf("dry run: %v\n%s", ee, out)
		}
		if a, _, r := summary(t, out); a != 0 || r != len(servers) || !strings.Contains(out, "compute service set --disable "+novatest.Host+" nova-compute") {
			t.Fatalf("with nova-compute up: %d would adopt, %d refused, want 0 and %d with the command to disable it:\n%s", a, r, len(servers), out)
		}
	})

	w.nv.RetireCompute(t, 2*time.Minute)
	for i := range servers {
		servers[i].nova = w.showRaw(t, w.nv.URL, servers[i].id)
		w.truePower(t, &servers[i])
	}

	t.Run("dry run lists ports", func(t *testing.T) {
		out, ee := runAdoptFrom(t, "--from-nova", bin, config, nil, "--dry-run")
		if ee != nil {
			t.Fatalf("dry run: %v\n%s", ee, out)
		}
		t.Logf("dry run:\n%s", out)
		for _, s := range servers {
			if !strings.Contains(out, fmt.Sprintf("would adopt %s %q", s.id, s.name)) {
				t.Errorf("the dry run does not name %s %s", s.id, s.name)
			}
			if s.novaPort != "" && !strings.Contains(out, fmt.Sprintf("port %s network %s ip 192.0.2.", s.novaPort, w.net)) {
				t.Errorf("the dry run does not list Nova's port %s of %s", s.novaPort, s.name)
			}
			if s.novaPort != "" && !strings.Contains(out, s.novaPort+" network") {
				continue
			}
			if s.novaPort != "" {
				line := out[strings.Index(out, s.novaPort+" network"):]
				line = line[:strings.Index(line, "\n")]
				if want := fate(s); !strings.HasSuffix(line, "("+want+")") {
					t.Errorf("Nova's port of %s: %q, want (%s) (port created %s, server %v)", s.name, line, want, s.novaPortCreated, s.nova["created"])
				}
			}
			if s.userPort != "" && !strings.Contains(out, s.userPort+" network "+w.net) ||
				s.userPort != "" && !strings.Contains(out[strings.Index(out, s.userPort+" network"):], "(the user's: unbound, kept, when the server goes)\n") {
				t.Errorf("the dry run does not list %s's port %s as the user's", s.name, s.userPort)
			}
		}
	})

	t.Run("adopt, then again", func(t *testing.T) {
		start := time.Now()
		out, ee := runAdoptFrom(t, "--from-nova", bin, config, nil)
		took := time.Since(start)
		if a, al, r := summary(t, out); ee != nil || a != len(servers) || al != 0 || r != 0 {
			t.Fatalf("adopt: %v, %d/%d/%d, want %d adopted\n%s", ee, a, al, r, len(servers), out)
		}
		t.Logf("adopted %d of Nova's servers in %s (%s per server, the process's start included):\n%s", len(servers),
			took.Round(time.Millisecond), (took / time.Duration(len(servers))).Round(time.Millisecond), out)
		out, _ = runAdoptFrom(t, "--from-nova", bin, config, nil)
		if !strings.Contains(out, fmt.Sprintf("0 adopted, %d already ingot's", len(servers))) {
			t.Errorf("a second run:\n%s", out)
		}
	})
	if t.Failed() {
		return
	}

	p := ingottest.Serve(t, bin, config, ingottest.Options{})
	t.Run("shown as Nova showed them", func(t *testing.T) {
		for _, s := range servers {
			ingot := w.showRaw(t, p.API+"/v2.1", s.id)
			for _, d := range diffServer(s.nova, ingot) {
				t.Errorf("%s: %s", s.name, d)
			}
		}
	})
	t.Run("reboot", func(t *testing.T) {
		web := servers[0]
		w.call(t, p.API+"/v2.1", "POST", "/servers/"+web.id+"/action", map[string]any{"reboot": map[string]any{"type": "HARD"}}, nil)
		poll.Until(t, 2*time.Minute, web.name+" rebooted", func() (bool, string) {
			var acts struct {
				Actions []struct {
					Action    string `json:"action"`
					RequestID string `json:"request_id"`
				} `json:"instanceActions"`
			}
			w.call(t, p.API+"/v2.1", "GET", "/servers/"+web.id+"/os-instance-actions", nil, &acts)
			if len(acts.Actions) == 0 || acts.Actions[0].Action != "reboot" {
				return false, fmt.Sprintf("actions %+v", acts.Actions)
			}
			var act struct {
				Action struct {
					Events []struct {
						Event  string  `json:"event"`
						Finish *string `json:"finish_time"`
						Result *string `json:"result"`
					} `json:"events"`
				} `json:"instanceAction"`
			}
			w.call(t, p.API+"/v2.1", "GET", "/servers/"+web.id+"/os-instance-actions/"+acts.Actions[0].RequestID, nil, &act)
			// Done: an event of it finished with Success (the reconciler's,
			// after Ironic's power reboot), none failed, the server ACTIVE.
			var done, failed bool
			var evs []string
			for _, e := range act.Action.Events {
				res := "<none>"
				if e.Result != nil {
					res = *e.Result
				}
				evs = append(evs, e.Event+"="+res)
				done = done || e.Finish != nil && res == "Success"
				failed = failed || res == "Error"
			}
			if failed {
				t.Fatalf("the reboot failed: %v", evs)
			}
			got := w.showRaw(t, p.API+"/v2.1", web.id)
			return done && got["status"] == "ACTIVE" && got["OS-EXT-STS:task_state"] == nil,
				fmt.Sprintf("status %v task %v events %v", got["status"], got["OS-EXT-STS:task_state"], evs)
		})
	})
	t.Run("delete", func(t *testing.T) { w.deleteAll(t, p.API+"/v2.1", servers) })
	t.Logf("TestAdoptFromNova took %s", time.Since(begin).Round(time.Second))
}

// bootAll boots the five servers in Nova at once, waits until each is
// built, lets Nova stop it and starts all but the last through Nova.
func (w *novaWorld) bootAll(t *testing.T) []novaServer {
	t.Helper()
	nv := w.nv
	const pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHbSBvCj0wK3pVz6r1B9v7m0oV5kWQ4c2w1lJmQpYb1E nova@test"
	nv.Do(t, w.member, "POST", "/os-keypairs", map[string]any{"keypair": map[string]any{"name": "k1", "public_key": pub}}, nil)
	var grp struct {
		Group struct{ ID string } `json:"server_group"`
	}
	nv.Do(t, w.member, "POST", "/os-server-groups", map[string]any{"server_group": map[string]any{"name": "g1", "policy": "anti-affinity"}}, &grp)
	var port struct {
		Port struct {
			ID      string `json:"id"`
			Created string `json:"created_at"`
		} `json:"port"`
	}
	if err := testproc.Call(w.hc, w.member, "POST", w.nt.URL+"/v2.0/ports", map[string]any{"port": map[string]any{
		"network_id": w.net, "name": "mine"}}, &port); err != nil {
		t.Fatalf("the user's port: %v", err)
	}
	// Nova's created time has whole seconds: the server must be created in
	// a later second than the user's port for the rule to tell.
	made, err := time.Parse(time.RFC3339, port.Port.Created)
	if err != nil {
		t.Fatalf("the user's port's created_at %q: %v", port.Port.Created, err)
	}
	poll.Until(t, 5*time.Second, "a second later than the user's port", func() (bool, string) {
		return time.Now().UTC().Truncate(time.Second).After(made), ""
	})
	onNet := []map[string]string{{"uuid": w.net}}
	bodies := []struct {
		server map[string]any
		hints  map[string]any
	}{
		{server: map[string]any{"name": "web", "key_name": "k1", "networks": onNet,
			"metadata": map[string]string{"role": "web"}, "tags": []string{"prod", "blue"}}},
		{server: map[string]any{"name": "byo", "networks": []map[string]string{{"port": port.Port.ID}}}},
		{server: map[string]any{"name": "db-1", "networks": onNet}, hints: map[string]any{"group": grp.Group.ID}},
		// One member only: Nova's anti-affinity is per compute host, and one
		// nova-compute holds every node.
		{server: map[string]any{"name": "db-2", "networks": "none", "metadata": map[string]string{"tier": "db"}}},
		{server: map[string]any{"name": "bare", "networks": "none"}},
	}
	out := make([]novaServer, len(bodies))
	start := time.Now()
	for i, b := range bodies {
		b.server["flavorRef"], b.server["imageRef"] = w.flavor, w.image
		req := map[string]any{"server": b.server}
		if b.hints != nil {
			req["os:scheduler_hints"] = b.hints
		}
		var created struct {
			Server struct{ ID string } `json:"server"`
		}
		nv.Do(t, w.member, "POST", "/servers", req, &created)
		out[i] = novaServer{id: created.Server.ID, name: b.server["name"].(string)}
		// One build at a time: concurrent builds made Nova's Ironic client
		// fail a node validate (406, "negotiated API version") on this Nova.
		poll.Until(t, 5*time.Minute, out[i].name+" built by Nova", func() (bool, string) {
			st := w.showRaw(t, nv.URL, out[i].id)["status"]
			if st == "ERROR" {
				t.Fatalf("Nova's build of %s failed:\n%s", out[i].name, nv.LogTail(30))
			}
			return st == "ACTIVE" || st == "SHUTOFF", fmt.Sprint(st)
		})
	}
	out[1].userPort = port.Port.ID
	// Fake hardware stays off after a deploy: Nova's power sync stops each
	// server (SHUTOFF); Nova's own start then powers the node on, as a
	// machine that boots. "bare" stays SHUTOFF.
	for i := range out {
		nv.WaitStatus(t, w.member, out[i].id, "SHUTOFF", 5*time.Minute)
	}
	t.Logf("%d servers built one after the other and stopped by Nova's power sync in %s", len(out), time.Since(start).Round(time.Second))
	for _, s := range out[:len(out)-1] {
		nv.Do(t, w.member, "POST", "/servers/"+s.id+"/action", map[string]any{"os-start": nil}, nil)
	}
	for _, s := range out[:len(out)-1] {
		nv.WaitStatus(t, w.member, s.id, "ACTIVE", 3*time.Minute)
		// The power state Nova shows is its power sync's (every 5 s).
		poll.Until(t, time.Minute, s.name+" running in Nova", func() (bool, string) {
			st := w.showRaw(t, nv.URL, s.id)["OS-EXT-STS:power_state"]
			return st == float64(1), fmt.Sprint(st)
		})
	}
	for _, i := range []int{0, 2} {
		var ports struct {
			Ports []struct {
				ID      string `json:"id"`
				Created string `json:"created_at"`
			} `json:"ports"`
		}
		if err := testproc.Call(w.hc, w.nt.AdminToken(t), "GET", w.nt.URL+"/v2.0/ports?device_id="+out[i].id, nil, &ports); err != nil || len(ports.Ports) != 1 {
			t.Fatalf("Nova's port of %s: %+v %v", out[i].name, ports, err)
		}
		out[i].novaPort, out[i].novaPortCreated = ports.Ports[0].ID, ports.Ports[0].Created
	}
	return out
}

const (
	fateDeleted = "deleted with the server"
	fateKept    = "the user's: unbound, kept, when the server goes"
)

// fate is what ingot's rule must decide for the port Nova made for s: Nova's
// (deleted) when Neutron's created_at is a later second than the server's
// created; kept as a user's port when they share the second (the rule
// cannot tell then, and keeps it).
func fate(s novaServer) string {
	port, err1 := time.Parse(time.RFC3339, s.novaPortCreated)
	created, _ := s.nova["created"].(string)
	server, err2 := time.Parse(time.RFC3339, created)
	if err1 == nil && err2 == nil && port.After(server) {
		return fateDeleted
	}
	return fateKept
}

// showRaw is GET /servers/{id} at 2.90 as member-a from the compute API
// at base, as JSON.
func (w *novaWorld) showRaw(t *testing.T, base, id string) map[string]any {
	t.Helper()
	var got struct {
		Server map[string]any `json:"server"`
	}
	w.call(t, base, "GET", "/servers/"+id, nil, &got)
	return got.Server
}

// call is one call as member-a at 2.90 that must succeed.
func (w *novaWorld) call(t *testing.T, base, method, path string, body, out any) {
	t.Helper()
	if err := testproc.CallWith(w.hc, w.member, method, base+path, body, out,
		map[string]string{"OpenStack-API-Version": "compute 2.90"}); err != nil {
		t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
}

// deleteAll deletes the servers through ingot and checks what is left:
// every node available without an instance, Nova's ports gone, the
// user's port there and unbound.
func (w *novaWorld) deleteAll(t *testing.T, base string, servers []novaServer) {
	t.Helper()
	for _, s := range servers {
		w.call(t, base, "DELETE", "/servers/"+s.id, nil, nil)
	}
	for _, n := range w.nodes {
		poll.Until(t, 3*time.Minute, "node "+n+" available", func() (bool, string) {
			got := w.ir.GetNode(t, n)
			st, _ := got["provision_state"].(string)
			return st == "available" && got["instance_uuid"] == nil, st
		})
	}
	admin := w.nt.AdminToken(t)
	for _, s := range servers {
		if s.novaPort != "" && fate(s) == fateDeleted {
			poll.Until(t, time.Minute, "Nova's port "+s.novaPort+" deleted", func() (bool, string) {
				return w.nt.PortCount(t, "id="+s.novaPort) == 0, ""
			})
		}
		if s.novaPort != "" && fate(s) == fateKept {
			// Made in the server's second: kept as a user's would be.
			s.userPort = s.novaPort
		}
		if s.userPort != "" {
			poll.Until(t, time.Minute, "the user's port "+s.userPort+" unbound", func() (bool, string) {
				var got struct {
					Port map[string]any `json:"port"`
				}
				if err := testproc.Call(w.hc, admin, "GET", w.nt.URL+"/v2.0/ports/"+s.userPort, nil, &got); err != nil {
					return false, err.Error()
				}
				p := got.Port
				return p["device_id"] == "" && p["binding:host_id"] == "", fmt.Sprintf("device %v owner %v host %v", p["device_id"], p["device_owner"], p["binding:host_id"])
			})
		}
	}
}

// novaConfig is ingot behind the Keystone, its images in Glance, its
// ports in Neutron, Nova found in the catalog, and the Ironic Nova uses.
func novaConfig(t *testing.T, ks *keystonetest.Env, ironicURL string) string {
	dir := t.TempDir()
	path := filepath.Join(dir, "ingot.yaml")
	cfg := novatest.IngotYAML(database(t, dir), "ingot-adopt-nova", ks.URL, ironicURL)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// truePower sets the power state expected of s to the node's when Nova's
// frozen record says otherwise: Nova's power sync reads a node cache its
// resource update refreshes only every 10 s, so it can record a node it
// has just started as off (4) for good once nova-compute stops; ingot
// shows the node as Ironic does.
func (w *novaWorld) truePower(t *testing.T, s *novaServer) {
	t.Helper()
	for _, n := range w.nodes {
		node := w.ir.GetNode(t, n)
		if node["instance_uuid"] != s.id {
			continue
		}
		want := map[any]float64{"power on": 1, "power off": 4}[node["power_state"]]
		if got := s.nova["OS-EXT-STS:power_state"]; want != 0 && got != want {
			t.Logf("%s: Nova's record shows power_state %v, the node is %v: ingot must show %v", s.name, got, node["power_state"], want)
			s.nova["OS-EXT-STS:power_state"] = want
		}
		return
	}
}
