package scenario

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Interface attach and detach (os-interface POST and DELETE) on the
// embedded IPAM and the simulator, as Nova's Ironic driver does them: a
// port on the network, its VIF attached to a free Ironic port of the node.

// twoNetworks adds a second configured network.
func twoNetworks(c *config.Config) {
	c.Networks = append(c.Networks, config.Network{Name: "tenant", CIDR: "10.1.0.0/24"})
}

type ifaceBody struct {
	InterfaceAttachment struct {
		PortID   string `json:"port_id"`
		NetID    string `json:"net_id"`
		MACAddr  string `json:"mac_addr"`
		State    string `json:"port_state"`
		FixedIPs []struct {
			IPAddress string `json:"ip_address"`
		} `json:"fixed_ips"`
	} `json:"interfaceAttachment"`
}

func (e *env) interfaces(id string) []map[string]any {
	e.t.Helper()
	var out struct {
		InterfaceAttachments []map[string]any `json:"interfaceAttachments"`
	}
	if code := e.Call("GET", "/v2.1/servers/"+id+"/os-interface", nil, &out); code != http.StatusOK {
		e.t.Fatalf("os-interface of %s: HTTP %d", id, code)
	}
	return out.InterfaceAttachments
}

func (e *env) tenantNet() string {
	e.t.Helper()
	for _, n := range e.app.Config.Networks {
		if n.Name == "tenant" {
			return n.ID
		}
	}
	e.t.Fatal("no tenant network")
	return ""
}

// TestInterfaceAttachDetach: an attach on an ACTIVE server answers 200
// with the port, bound to a free Ironic port (its MAC) and listed by
// os-interface and addresses; a detach answers 202 and takes the VIF and
// the port away; the server stays ACTIVE throughout.
func TestInterfaceAttachDetach(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, configure: twoNetworks})
	id, node := e.activeOn("iface")
	tenant := e.tenantNet()
	var att ifaceBody
	if code := e.Call("POST", "/v2.1/servers/"+id+"/os-interface", map[string]any{"interfaceAttachment": map[string]any{"net_id": tenant}}, &att); code != http.StatusOK {
		t.Fatalf("attach: HTTP %d (%+v)", code, att)
	}
	a := att.InterfaceAttachment
	if a.NetID != tenant || a.PortID == "" || len(a.FixedIPs) != 1 || !strings.HasPrefix(a.FixedIPs[0].IPAddress, "10.1.0.") || a.State != "ACTIVE" {
		t.Fatalf("attach answered %+v", a)
	}
	if vifs := e.sim.VIFs(node); len(vifs) != 2 {
		t.Fatalf("node %s has VIFs %v, want 2", node, vifs)
	}
	n, _ := e.sim.Node(node)
	macs := map[string]bool{}
	for _, p := range n.Ports {
		macs[strings.ToLower(p.Address)] = true
	}
	if !macs[strings.ToLower(a.MACAddr)] {
		t.Errorf("attached port's MAC %s is none of node %s's Ironic ports %v", a.MACAddr, node, macs)
	}
	if ifs := e.interfaces(id); len(ifs) != 2 {
		t.Fatalf("os-interface lists %d, want 2: %v", len(ifs), ifs)
	}
	var show ifaceBody
	if code := e.Call("GET", "/v2.1/servers/"+id+"/os-interface/"+a.PortID, nil, &show); code != http.StatusOK || show.InterfaceAttachment.PortID != a.PortID {
		t.Fatalf("show: HTTP %d %+v", code, show)
	}
	var addrs struct {
		Addresses map[string][]map[string]any `json:"addresses"`
	}
	e.Call("GET", "/v2.1/servers/"+id+"/ips", nil, &addrs)
	if len(addrs.Addresses["tenant"]) != 1 {
		t.Errorf("addresses %v: no tenant address", addrs.Addresses)
	}
	if v := e.waitRest(id, "ACTIVE", 5*time.Second); v.TaskState != nil {
		t.Errorf("task_state %v after the attach", *v.TaskState)
	}
	// As with Nova's Ironic driver the config drive is written at deploy:
	// a rebuild's network_data.json has a link for the attached port, with
	// its MAC and address.
	e.act(id, map[string]any{"rebuild": map[string]any{"imageRef": e.imgID}}, http.StatusAccepted)
	e.waitRest(id, "ACTIVE", 10*time.Second)
	n, _ = e.sim.Node(node)
	cd, _ := n.InstanceInfo["configdrive"].(map[string]any)
	nd, _ := cd["network_data"].(map[string]any)
	links, _ := nd["links"].([]any)
	found := false
	for _, l := range links {
		found = found || strings.EqualFold(fmt.Sprint(l.(map[string]any)["ethernet_mac_address"]), a.MACAddr)
	}
	if len(links) != 2 || !found || !strings.Contains(fmt.Sprint(nd["networks"]), a.FixedIPs[0].IPAddress) {
		t.Errorf("network_data.json after a rebuild: %v; want a link with %s and the address %s", nd, a.MACAddr, a.FixedIPs[0].IPAddress)
	}
	// A second port on the build's own network (as Tempest and
	// gophercloud attach), then detached.
	var again ifaceBody
	if code := e.Call("POST", "/v2.1/servers/"+id+"/os-interface", map[string]any{"interfaceAttachment": map[string]any{"net_id": e.netID}}, &again); code != http.StatusOK {
		t.Fatalf("attach on the build's network: HTTP %d", code)
	}
	if vifs, ifs := e.sim.VIFs(node), e.interfaces(id); len(vifs) != 3 || len(ifs) != 3 || again.InterfaceAttachment.NetID != e.netID {
		t.Fatalf("after a second port on %s: VIFs %v, interfaces %d (%+v)", e.netID, vifs, len(ifs), again)
	}
	if code := e.Call("DELETE", "/v2.1/servers/"+id+"/os-interface/"+again.InterfaceAttachment.PortID, nil, nil); code != http.StatusAccepted {
		t.Fatalf("detach of the second port: HTTP %d", code)
	}
	e.WaitFor("second port detached", 10*time.Second, func() bool { return len(e.sim.VIFs(node)) == 2 && len(e.interfaces(id)) == 2 })
	e.waitRest(id, "ACTIVE", 5*time.Second)

	if code := e.Call("DELETE", "/v2.1/servers/"+id+"/os-interface/"+a.PortID, nil, nil); code != http.StatusAccepted {
		t.Fatalf("detach: HTTP %d", code)
	}
	e.WaitFor("VIF detached", 10*time.Second, func() bool { return len(e.sim.VIFs(node)) == 1 && len(e.interfaces(id)) == 1 })
	e.waitRest(id, "ACTIVE", 5*time.Second)
	if code := e.Call("GET", "/v2.1/servers/"+id+"/os-interface/"+a.PortID, nil, nil); code != http.StatusNotFound {
		t.Errorf("show after detach: HTTP %d, want 404", code)
	}
	if code := e.Call("DELETE", "/v2.1/servers/"+id+"/os-interface/"+a.PortID, nil, nil); code != http.StatusNotFound {
		t.Errorf("second detach: HTTP %d, want 404", code)
	}
	evs := e.opEvents(id, "attach_interface")
	if len(evs) == 0 || evs[len(evs)-1]["event"] != "compute_attach_interface" {
		t.Errorf("attach_interface events %v", evs)
	}
	e.checkInvariants(id)
}

// TestInterfaceAttachNoFreePort: a node whose only Ironic port carries the
// build's VIF cannot take another: Nova's 500, and no port is left.
func TestInterfaceAttachNoFreePort(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, ports: 1, configure: twoNetworks})
	id, node := e.activeOn("full")
	var out map[string]any
	code := e.Call("POST", "/v2.1/servers/"+id+"/os-interface", map[string]any{"interfaceAttachment": map[string]any{"net_id": e.tenantNet()}}, &out)
	if code != http.StatusInternalServerError {
		t.Fatalf("attach on a full node: HTTP %d (%v), want 500", code, out)
	}
	if msg, _ := out["computeFault"].(map[string]any)["message"].(string); msg != "Failed to attach network adapter device to "+id {
		t.Errorf("message %q", msg)
	}
	if vifs := e.sim.VIFs(node); len(vifs) != 1 {
		t.Errorf("node %s has VIFs %v, want the build's one", node, vifs)
	}
	if ifs := e.interfaces(id); len(ifs) != 1 {
		t.Errorf("os-interface lists %d, want 1", len(ifs))
	}
	s := e.record(id)
	if s.Phase != lifecycle.PhaseActive || s.OpFault == nil {
		t.Errorf("after the failed attach: phase %s op fault %+v", s.Phase, s.OpFault)
	}
	e.checkInvariants(id)
}

// TestInterfaceAttachThenDelete: deleting the server after an attach
// frees every port and VIF.
func TestInterfaceAttachThenDelete(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1, configure: twoNetworks})
	id, _ := e.activeOn("gone")
	if code := e.Call("POST", "/v2.1/servers/"+id+"/os-interface", map[string]any{"interfaceAttachment": map[string]any{"net_id": e.tenantNet()}}, nil); code != http.StatusOK {
		t.Fatalf("attach: HTTP %d", code)
	}
	e.Delete(id)
	e.WaitGone(id, 20*time.Second)
	e.checkInvariants(id)
}
