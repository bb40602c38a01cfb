package neutron

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// attached is an os-interface attach's answer.
type attached struct {
	InterfaceAttachment struct {
		PortID   string `json:"port_id"`
		NetID    string `json:"net_id"`
		MACAddr  string `json:"mac_addr"`
		FixedIPs []struct {
			IPAddress string `json:"ip_address"`
		} `json:"fixed_ips"`
	} `json:"interfaceAttachment"`
}

// attach asks for an interface as member-a; it returns the HTTP status
// (an error's text in msg).
func (w *world) attach(t *testing.T, id string, att map[string]any, out any) (int, string) {
	t.Helper()
	err := testproc.CallWith(w.hc, w.member, "POST", w.url+"/v2.1/servers/"+id+"/os-interface",
		map[string]any{"interfaceAttachment": att}, out, map[string]string{"X-OpenStack-Nova-API-Version": "2.90"})
	if err == nil {
		return http.StatusOK, ""
	}
	// The error reads "METHOD url: 500 Internal Server Error {body}".
	for _, code := range []int{400, 404, 409, 500} {
		if strings.Contains(err.Error(), ": "+strconv.Itoa(code)+" ") {
			return code, err.Error()
		}
	}
	return 0, err.Error()
}

// portGone waits for Neutron to no longer have the port.
func (w *world) portGone(t *testing.T, id string) {
	t.Helper()
	poll.Until(t, 60*time.Second, "port "+id+" deleted", func() (bool, string) {
		err := testproc.Call(w.hc, w.neutron.AdminToken(t), "GET", w.neutron.URL+"/v2.0/ports/"+id, nil, nil)
		return err != nil && strings.Contains(err.Error(), "404"), "present"
	})
}

// TestInterfaceAttachOnRealNeutron: a server ACTIVE on a node with two
// Ironic ports gets a second interface on its network: the Neutron port has
// the server as device_id and the free Ironic port's MAC, Ironic lists its
// VIF, os-interface and addresses show it. Another network finds no free
// Ironic port: Nova's 500, and no port left. A detach deletes the port; a
// user's own port attached and detached is unbound and kept; a server
// deleted with an attached interface leaves Neutron's port count as it was.
func TestInterfaceAttachOnRealNeutron(t *testing.T) {
	w := startWorldOn(t, 1, ironictest.NodeSpec{Name: "two", ResourceClass: "baremetal", Ports: 2,
		PhysicalNetwork: neutrontest.PhysicalNetwork, NetworkInterface: "flat"})
	second := w.neutron.CreateNetwork(t, neutrontest.NetworkOptions{Name: "second", VLAN: 101, Shared: true})
	w.neutron.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: second.ID, CIDR: "203.0.113.0/24", Gateway: "203.0.113.1"})
	third := w.neutron.CreateNetwork(t, neutrontest.NetworkOptions{Name: "third", VLAN: 102, Shared: true})
	w.neutron.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: third.ID, CIDR: "198.18.0.0/24", Gateway: "198.18.0.1"})
	before := w.neutron.PortCount(t, "")

	id := w.create(t, "attach", []map[string]string{{"uuid": w.net}})
	w.waitStatus(t, id, "ACTIVE", 180*time.Second)
	node := w.rec(t, id).NodeID
	built := w.ironic.ListVIFs(t, node)

	callsBefore := w.neutronCalls(t)
	start := time.Now()
	var att attached
	// On the build's own network, as Tempest and gophercloud attach.
	if code, msg := w.attach(t, id, map[string]any{"net_id": w.net}, &att); code != http.StatusOK {
		t.Fatalf("attach: %d %s", code, msg)
	}
	t.Logf("attach answered in %s; Neutron calls for it, with ingot's token: %v; with Ironic's: %v", time.Since(start).Round(time.Millisecond),
		callsDiff(callsBefore["ingot"], w.neutronCalls(t)["ingot"]), callsDiff(callsBefore["ironic"], w.neutronCalls(t)["ironic"]))
	a := att.InterfaceAttachment
	p := w.adminPort(t, a.PortID)
	macs := map[string]bool{}
	for _, ip := range w.ironic.Ports(t, node) {
		macs[ip.Address] = true
	}
	if a.NetID != w.net || p["device_id"] != id || p["device_owner"] != "compute:nova" || !macs[p["mac_address"].(string)] || a.MACAddr != p["mac_address"] {
		t.Errorf("attached port %+v, in Neutron device_id %v owner %v mac %v; want on %s, %s, compute:nova, one of the Ironic MACs %v",
			a, p["device_id"], p["device_owner"], p["mac_address"], w.net, id, macs)
	}
	if vifs := w.ironic.ListVIFs(t, node); len(vifs) != 2 || !strings.Contains(strings.Join(vifs, " "), a.PortID) {
		t.Errorf("VIFs on node %s: %v, want the build's %v and %s", node, vifs, built, a.PortID)
	}
	var ifaces struct {
		Interfaces []map[string]any `json:"interfaceAttachments"`
	}
	w.call(t, "GET", "/v2.1/servers/"+id+"/os-interface", nil, &ifaces)
	if len(ifaces.Interfaces) != 2 {
		t.Errorf("os-interface: %v, want 2", ifaces.Interfaces)
	}
	var body struct {
		Server struct {
			Addresses map[string][]map[string]any `json:"addresses"`
		} `json:"server"`
	}
	w.call(t, "GET", "/v2.1/servers/"+id, nil, &body)
	if len(body.Server.Addresses["tenant"]) != 2 {
		t.Errorf("addresses %v: want two on the tenant network", body.Server.Addresses)
	}

	// Both Ironic ports carry a VIF now: another attach fails.
	count := w.neutron.PortCount(t, "")
	code, msg := w.attach(t, id, map[string]any{"net_id": third.ID}, nil)
	if code != http.StatusInternalServerError || !strings.Contains(msg, "Failed to attach network adapter device to "+id) {
		t.Errorf("attach on a node with no free port: %d %s, want 500 Failed to attach…", code, msg)
	}
	if got := w.neutron.PortCount(t, ""); got != count {
		t.Errorf("ports after the failed attach: %d, want %d", got, count)
	}

	w.call(t, "DELETE", "/v2.1/servers/"+id+"/os-interface/"+a.PortID, nil, nil)
	w.portGone(t, a.PortID)
	poll.Until(t, 60*time.Second, "VIF detached", func() (bool, string) {
		v := w.ironic.ListVIFs(t, node)
		return len(v) == 1, strings.Join(v, " ")
	})

	// A user's own port: attached, then detached unbound and kept.
	var mine struct {
		Port struct{ ID string } `json:"port"`
	}
	if err := testproc.Call(w.hc, w.member, "POST", w.neutron.URL+"/v2.0/ports",
		map[string]any{"port": map[string]any{"network_id": second.ID, "name": "mine"}}, &mine); err != nil {
		t.Fatal(err)
	}
	if code, msg := w.attach(t, id, map[string]any{"port_id": mine.Port.ID}, &att); code != http.StatusOK || att.InterfaceAttachment.PortID != mine.Port.ID {
		t.Fatalf("attach of the user's port: %d %s %+v", code, msg, att)
	}
	if p := w.adminPort(t, mine.Port.ID); p["device_id"] != id {
		t.Errorf("user's port device_id %v, want %s", p["device_id"], id)
	}
	w.call(t, "DELETE", "/v2.1/servers/"+id+"/os-interface/"+mine.Port.ID, nil, nil)
	poll.Until(t, 60*time.Second, "user's port released", func() (bool, string) {
		p := w.adminPort(t, mine.Port.ID)
		return p["device_id"] == "" && len(w.ironic.ListVIFs(t, node)) == 1, p["device_id"].(string)
	})
	if p := w.adminPort(t, mine.Port.ID); p["device_owner"] != "" || p["binding:host_id"] != "" {
		t.Errorf("user's port after detach: owner %v host %v, want unbound", p["device_owner"], p["binding:host_id"])
	}

	// Attach again, then delete the server: no port of it left.
	if code, msg := w.attach(t, id, map[string]any{"net_id": second.ID}, &att); code != http.StatusOK {
		t.Fatalf("second attach: %d %s", code, msg)
	}
	w.call(t, "DELETE", "/v2.1/servers/"+id, nil, nil)
	w.waitGone(t, id, 120*time.Second)
	after := w.neutron.PortCount(t, "")
	t.Logf("Neutron ports: %d before, %d after (the user's port kept)", before, after)
	if after != before+1 {
		t.Errorf("ports after the delete: %d, want %d (before, and the user's port)", after, before+1)
	}
}

// callsDiff is the calls of after that before does not count.
func callsDiff(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range after {
		if d := n - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
