package neutron

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// simConfig is ingot on its simulated Ironic with Neutron as the network
// backend: security groups are Neutron's, whatever Ironic is.
const simConfig = `
poll_interval: 100ms
ironic:
  url: sim
  sim: {nodes: 2, resource_class: baremetal, deploy_time: 200ms, undeploy_time: 100ms}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2"}
`

type sgView struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	TenantID string `json:"tenant_id"`
	Rules    []struct {
		ID         string            `json:"id"`
		IPProtocol *string           `json:"ip_protocol"`
		FromPort   *int              `json:"from_port"`
		ToPort     *int              `json:"to_port"`
		IPRange    map[string]string `json:"ip_range"`
	} `json:"rules"`
}

// TestSecurityGroupsWithNeutron: with network.backend neutron, Nova's
// security group proxy (≤ 2.35) makes and lists groups and rules in
// Neutron with the caller's token; a create's security_groups land on the
// port ingot makes; add/removeSecurityGroup change the port in Neutron and
// the names the server shows; another project neither sees nor uses them.
// simWorld is Keystone, neutron-server with one shared network and its
// subnet, and ingot with Neutron on its simulated Ironic.
type simWorld struct {
	ks     *keystonetest.Env
	n      *neutrontest.Env
	tenant neutrontest.Network
	cfg    config.Config
	url    string
	hc     *http.Client
	toks   map[string]string
}

func startSimWorld(t *testing.T) *simWorld {
	t.Helper()
	ks := keystonetest.Start(t)
	n := neutrontest.Start(t, ks)
	tenant := n.CreateNetwork(t, neutrontest.NetworkOptions{Name: "tenant", Shared: true})
	n.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: tenant.ID, CIDR: "192.0.2.0/24", Gateway: "192.0.2.1"})
	cfg, err := config.Parse([]byte(simConfig))
	if err != nil {
		t.Fatal(err)
	}
	ingotSettings(&cfg, ks, t.TempDir())
	cfg.Ironic.URL, cfg.Ironic.Auth = "sim", ""
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	_, url := apptest.Serve(t, cfg, app.Options{})
	return &simWorld{ks: ks, n: n, tenant: tenant, cfg: cfg, url: url, hc: &http.Client{Timeout: 60 * time.Second},
		toks: map[string]string{"a": ks.Token(t, "member-a"), "b": ks.Token(t, "member-b"), "admin": ks.Token(t, "admin")}}
}

// call is one API call as who ("a", "b" or "admin") at microversion mv.
func (w *simWorld) call(who, mv, method, path string, body, out any) error {
	return testproc.CallWith(w.hc, w.toks[who], method, w.url+path, body, out, map[string]string{"X-OpenStack-Nova-API-Version": mv})
}

func (w *simWorld) must(t *testing.T, who, mv, method, path string, body, out any) {
	t.Helper()
	if err := w.call(who, mv, method, path, body, out); err != nil {
		t.Fatalf("%s %s as %s: %v", method, path, who, err)
	}
}

func TestSecurityGroupsWithNeutron(t *testing.T) {
	w := startSimWorld(t)
	n, tenant, cfg, hc := w.n, w.tenant, w.cfg, w.hc
	call := w.call
	must := func(who, mv, method, path string, body, out any) {
		t.Helper()
		w.must(t, who, mv, method, path, body, out)
	}

	var made struct {
		Group sgView `json:"security_group"`
	}
	must("a", "2.35", "POST", "/v2.1/os-security-groups",
		map[string]any{"security_group": map[string]string{"name": "web", "description": "http"}}, &made)
	web := made.Group.ID
	var rule struct {
		Rule struct {
			ID      string            `json:"id"`
			IPRange map[string]string `json:"ip_range"`
		} `json:"security_group_rule"`
	}
	must("a", "2.35", "POST", "/v2.1/os-security-group-rules", map[string]any{"security_group_rule": map[string]any{
		"parent_group_id": web, "ip_protocol": "tcp", "from_port": 80, "to_port": 80, "cidr": "0.0.0.0/0"}}, &rule)
	if rule.Rule.IPRange["cidr"] != "0.0.0.0/0" {
		t.Errorf("rule %+v", rule.Rule)
	}
	if err := call("a", "2.35", "POST", "/v2.1/os-security-group-rules", map[string]any{"security_group_rule": map[string]any{
		"parent_group_id": web, "ip_protocol": "tcp", "from_port": 80, "to_port": 80, "cidr": "0.0.0.0/0"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "This rule already exists") {
		t.Errorf("the same rule again: %v", err)
	}
	var list struct {
		Groups []sgView `json:"security_groups"`
	}
	must("a", "2.35", "GET", "/v2.1/os-security-groups", nil, &list)
	var names []string
	for _, g := range list.Groups {
		names = append(names, g.Name)
		if g.Name == "web" && (len(g.Rules) != 1 || *g.Rules[0].FromPort != 80 || *g.Rules[0].IPProtocol != "tcp") {
			t.Errorf("web's rules %+v", g.Rules)
		}
	}
	if !slices.Contains(names, "web") || !slices.Contains(names, "default") {
		t.Errorf("A lists %v", names)
	}
	if err := call("a", "2.36", "GET", "/v2.1/os-security-groups", nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("the proxy at 2.36: %v", err)
	}
	// B sees none of A's groups and cannot use them.
	list.Groups = nil
	must("b", "2.35", "GET", "/v2.1/os-security-groups", nil, &list)
	for _, g := range list.Groups {
		if g.Name == "web" {
			t.Errorf("B lists A's group %+v", g)
		}
	}
	if err := call("b", "2.35", "GET", "/v2.1/os-security-groups/"+web, nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("B shows A's group: %v", err)
	}
	server := func(name, group string) map[string]any {
		return map[string]any{"server": map[string]any{"name": name, "flavorRef": "1", "imageRef": cfg.Images[0].ID,
			"networks": []map[string]string{{"uuid": tenant.ID}}, "security_groups": []map[string]string{{"name": group}}}}
	}
	if err := call("b", "2.90", "POST", "/v2.1/servers", server("b1", "web"), nil); err == nil ||
		!strings.Contains(err.Error(), "Unable to find security_group with name or id 'web'") {
		t.Errorf("B's create with A's group: %v", err)
	}

	var created struct {
		Server struct {
			ID             string              `json:"id"`
			SecurityGroups []map[string]string `json:"security_groups"`
		} `json:"server"`
	}
	must("a", "2.90", "POST", "/v2.1/servers", server("a1", "web"), &created)
	id := created.Server.ID
	if len(created.Server.SecurityGroups) != 1 || created.Server.SecurityGroups[0]["name"] != "web" {
		t.Errorf("create answered security_groups %v", created.Server.SecurityGroups)
	}
	status := func() (string, []map[string]string) {
		var out struct {
			Server struct {
				Status         string              `json:"status"`
				SecurityGroups []map[string]string `json:"security_groups"`
			} `json:"server"`
		}
		must("a", "2.90", "GET", "/v2.1/servers/"+id, nil, &out)
		return out.Server.Status, out.Server.SecurityGroups
	}
	poll.Until(t, 60*time.Second, "server "+id+" ACTIVE", func() (bool, string) { st, _ := status(); return st == "ACTIVE", st })
	portGroups := func() []string {
		t.Helper()
		var out struct {
			Ports []struct {
				SecurityGroups []string `json:"security_groups"`
			} `json:"ports"`
		}
		if err := testproc.Call(hc, n.AdminToken(t), "GET", n.URL+"/v2.0/ports?device_id="+id, nil, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Ports) != 1 {
			t.Fatalf("server %s has %d ports in Neutron", id, len(out.Ports))
		}
		g := out.Ports[0].SecurityGroups
		slices.Sort(g)
		return g
	}
	if g := portGroups(); !slices.Equal(g, []string{web}) {
		t.Errorf("the port's groups %v, want [%s]", g, web)
	}
	var onServer struct {
		Groups []sgView `json:"security_groups"`
	}
	must("a", "2.90", "GET", "/v2.1/servers/"+id+"/os-security-groups", nil, &onServer)
	if len(onServer.Groups) != 1 || onServer.Groups[0].Name != "web" || len(onServer.Groups[0].Rules) != 1 {
		t.Errorf("os-security-groups of the server: %+v", onServer.Groups)
	}

	must("a", "2.90", "POST", "/v2.1/servers/"+id+"/action", map[string]any{"addSecurityGroup": map[string]string{"name": "default"}}, nil)
	must("a", "2.90", "POST", "/v2.1/servers/"+id+"/action", map[string]any{"removeSecurityGroup": map[string]string{"name": "web"}}, nil)
	if g := portGroups(); len(g) != 1 || g[0] == web {
		t.Errorf("after add default, remove web: the port's groups %v", g)
	}
	if _, shown := status(); len(shown) != 1 || shown[0]["name"] != "default" {
		t.Errorf("the server shows %v", shown)
	}
	if err := call("a", "2.90", "POST", "/v2.1/servers/"+id+"/action", map[string]any{"removeSecurityGroup": map[string]string{"name": "web"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "not associated with the instance") {
		t.Errorf("removing web twice: %v", err)
	}
	if err := call("b", "2.90", "POST", "/v2.1/servers/"+id+"/action", map[string]any{"addSecurityGroup": map[string]string{"name": "default"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Errorf("B adding a group to A's server: %v", err)
	}
	// A port made after the change (an attached interface) gets the
	// server's groups now, not the create's.
	var att struct {
		Attachment struct {
			PortID string `json:"port_id"`
		} `json:"interfaceAttachment"`
	}
	must("a", "2.90", "POST", "/v2.1/servers/"+id+"/os-interface", map[string]any{"interfaceAttachment": map[string]string{"net_id": tenant.ID}}, &att)
	var attached struct {
		Port struct {
			SecurityGroups []string `json:"security_groups"`
		} `json:"port"`
	}
	if err := testproc.Call(hc, n.AdminToken(t), "GET", n.URL+"/v2.0/ports/"+att.Attachment.PortID, nil, &attached); err != nil {
		t.Fatal(err)
	}
	if g := attached.Port.SecurityGroups; slices.Contains(g, web) || len(g) != 1 {
		t.Errorf("the attached port's groups %v: want the server's one group now (default), not web", g)
	}
	must("a", "2.90", "DELETE", "/v2.1/servers/"+id+"/os-interface/"+att.Attachment.PortID, nil, nil)
	poll.Until(t, 60*time.Second, "the attached port detached", func() (bool, string) {
		var v struct {
			Server map[string]any `json:"server"`
		}
		must("a", "2.90", "GET", "/v2.1/servers/"+id, nil, &v)
		phase, _ := v.Server["ingot:phase"].(string)
		return len(portsOf(t, hc, n, id)) == 1 && (phase == "" || phase == "active"), phase
	})

	// Every group removed: Nova leaves the member out.
	must("a", "2.90", "POST", "/v2.1/servers/"+id+"/action", map[string]any{"removeSecurityGroup": map[string]string{"name": "default"}}, nil)
	var bare struct {
		Server map[string]any `json:"server"`
	}
	must("a", "2.90", "GET", "/v2.1/servers/"+id, nil, &bare)
	if g, ok := bare.Server["security_groups"]; ok {
		t.Errorf("with no group left the server shows security_groups %v", g)
	}
	if g := portGroups(); len(g) != 0 {
		t.Errorf("with no group left the port has %v", g)
	}
	must("a", "2.35", "DELETE", "/v2.1/os-security-group-rules/"+rule.Rule.ID, nil, nil)
	must("a", "2.35", "DELETE", "/v2.1/os-security-groups/"+web, nil, nil)
	if err := call("a", "2.35", "GET", "/v2.1/os-security-groups/"+web, nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("web after its delete: %v", err)
	}
}

// TestNovaNetworksWithNeutron: Nova's os-networks proxy (≤ 2.35) shows the
// Neutron networks the caller's project may use — shared ones and its own,
// not another project's — with id and label, and 404 from 2.36.
func TestNovaNetworksWithNeutron(t *testing.T) {
	w := startSimWorld(t)
	own := w.n.CreateNetwork(t, neutrontest.NetworkOptions{Name: "b-only", ProjectID: w.ks.Users["member-b"].ProjectID, VLAN: 150})
	labels := func(who string) map[string]string {
		var out struct {
			Networks []map[string]any `json:"networks"`
		}
		w.must(t, who, "2.35", "GET", "/v2.1/os-networks", nil, &out)
		got := map[string]string{}
		for _, n := range out.Networks {
			got[n["id"].(string)], _ = n["label"].(string)
		}
		return got
	}
	if got := labels("a"); got[w.tenant.ID] != "tenant" || got[own.ID] != "" {
		t.Errorf("A sees %v", got)
	}
	if got := labels("b"); got[w.tenant.ID] != "tenant" || got[own.ID] != "b-only" {
		t.Errorf("B sees %v", got)
	}
	var one struct {
		Network map[string]any `json:"network"`
	}
	w.must(t, "b", "2.35", "GET", "/v2.1/os-networks/"+own.ID, nil, &one)
	if one.Network["label"] != "b-only" || one.Network["cidr"] != nil {
		t.Errorf("B's network %v", one.Network)
	}
	if err := w.call("a", "2.35", "GET", "/v2.1/os-networks/"+own.ID, nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("A shows B's network: %v", err)
	}
	if err := w.call("a", "2.36", "GET", "/v2.1/os-networks", nil, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("at 2.36: %v", err)
	}
}

// portsOf are the Neutron ports whose device is server id.
func portsOf(t *testing.T, hc *http.Client, n *neutrontest.Env, id string) []map[string]any {
	t.Helper()
	var out struct {
		Ports []map[string]any `json:"ports"`
	}
	if err := testproc.Call(hc, n.AdminToken(t), "GET", n.URL+"/v2.0/ports?device_id="+id, nil, &out); err != nil {
		t.Fatal(err)
	}
	return out.Ports
}
