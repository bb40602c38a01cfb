package crash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutronports"
	"github.com/ingot-dev/ingot/internal/neutrontest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestKill9AfterNeutronCreate: ingot (network.backend neutron, behind the
// real Keystone, on a real neutron-server; the simulated Ironic) is killed
// with SIGKILL right after Neutron made a build's port and before ingot
// recorded it. Restarted, it finds that port again by device_id, network
// and name: the build ends ACTIVE with one port; and a build killed there
// and deleted at once has its port found and deleted. Neutron's port count
// is the same before and after.
func TestKill9AfterNeutronCreate(t *testing.T) {
	ks, n, tenant, ir, nodes, member := neutronCrashWorld(t)
	before := n.PortCount(t, "")
	point := neutronports.PointCreated + ":1"

	for _, deleteFirst := range []bool{false, true} {
		in := newNeutronIngot(t, ks, ir, nodes, tenant.ID)
		p := in.run("INGOT_CRASH_AT=" + point)
		id := neutronCreate(t, in, member, tenant.ID)
		if !killedBy9(t, p, time.Minute) {
			t.Fatalf("ingot was not killed at %s:\n%s", point, p.Tail(30))
		}
		if got := n.PortCount(t, "device_id="+id); got != 1 {
			t.Fatalf("after the kill: %d Neutron ports of %s, want the one made before the kill", got, id)
		}
		in.run()
		if deleteFirst {
			neutronCall(t, in, member, "DELETE", "/v2.1/servers/"+id, nil, nil, http.StatusNoContent)
		} else {
			waitStatus(t, in, member, id, "ACTIVE")
			if got := n.PortCount(t, "device_id="+id); got != 1 {
				t.Errorf("ACTIVE after the restart with %d Neutron ports, want 1 (found again, not made twice)", got)
			}
			neutronCall(t, in, member, "DELETE", "/v2.1/servers/"+id, nil, nil, http.StatusNoContent)
		}
		waitNeutronGone(t, in, n, member, id)
		in.checkReleased(id)
	}
	after := n.PortCount(t, "")
	t.Logf("Neutron ports: %d before, %d after two kills at %s", before, after, point)
	if after != before {
		t.Errorf("Neutron ports %d after, want %d", after, before)
	}
}

// waitNeutronGone waits for the server's 404 and for Neutron to hold no
// port of it.
func waitNeutronGone(t *testing.T, in *ingot, n *neutrontest.Env, member, id string) {
	t.Helper()
	poll.Until(t, time.Minute, id+" gone", func() (bool, string) {
		code := neutronCall(t, in, member, "GET", "/v2.1/servers/"+id, nil, nil, 0)
		return code == http.StatusNotFound && n.PortCount(t, "device_id="+id) == 0, fmt.Sprint(code)
	})
}

// neutronCrashWorld is Keystone, a real neutron-server with one shared
// network and its subnet, and two simulated nodes; member is member-a's
// token.
func neutronCrashWorld(t *testing.T) (ks *keystonetest.Env, n *neutrontest.Env, tenant neutrontest.Network, ir *ironicSide, nodes []string, member string) {
	t.Helper()
	ks = keystonetest.Start(t)
	n = neutrontest.Start(t, ks)
	tenant = n.CreateNetwork(t, neutrontest.NetworkOptions{Name: "tenant", Shared: true})
	n.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: tenant.ID, CIDR: "192.0.2.0/24"})
	ir, nodes = simSide(t, 2, "bm")
	return ks, n, tenant, ir, nodes, ks.Token(t, "member-a")
}

// newNeutronIngot is newIngot's service with its ports in Neutron.
func newNeutronIngot(t *testing.T, ks *keystonetest.Env, ir *ironicSide, nodes []string, netID string) *ingot {
	t.Helper()
	in := newIngot(t, ir, "bm", nodes)
	raw, err := os.ReadFile(in.config)
	if err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf(`auth:
  strategy: keystone
  keystone: {auth_url: %q, username: ingot, password: %q, project_name: service}
network:
  backend: neutron
`, ks.URL, keystonetest.Password)
	if err := os.WriteFile(in.config, append(raw, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	return in
}

func neutronCreate(t *testing.T, in *ingot, token, netID string) string {
	t.Helper()
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	neutronCall(t, in, token, "POST", "/v2.1/servers", map[string]any{"server": map[string]any{"name": "crash-neutron",
		"flavorRef": "bm", "imageRef": imageID, "networks": []map[string]string{{"uuid": netID}}}}, &out, http.StatusAccepted)
	return out.Server.ID
}

// neutronCall is one API call with a token; want 0 accepts any answer.
func neutronCall(t *testing.T, in *ingot, token, method, path string, body, out any, want int) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, in.p.API+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
	resp, err := hc.Do(req)
	if err != nil {
		if want == 0 {
			return 0
		}
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if want != 0 && resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil && len(raw) > 0 {
		_ = json.Unmarshal(raw, out)
	}
	return resp.StatusCode
}

func waitStatus(t *testing.T, in *ingot, token, id, status string) {
	t.Helper()
	poll.Until(t, time.Minute, id+" "+status, func() (bool, string) {
		var out struct {
			Server struct{ Status string } `json:"server"`
		}
		neutronCall(t, in, token, "GET", "/v2.1/servers/"+id, nil, &out, 0)
		if out.Server.Status == "ERROR" {
			t.Fatalf("%s went to ERROR after the crash", id)
		}
		return out.Server.Status == status, out.Server.Status
	})
}
