package crash

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/neutronports"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// TestKill9DuringInterfaceAttach: ingot (network.backend neutron, the real
// neutron-server, the simulated Ironic) is killed with SIGKILL during an
// os-interface attach on an ACTIVE server built with no network — right
// after Neutron made the attach's port and before ingot recorded it, and
// after the port was recorded on the node but before Ironic's VIF attach.
// Restarted, the attach goes on: one Neutron port of the server, attached
// (found again by device_id, network and name, never made twice); or the
// server is deleted at once and its port found and deleted. Neutron's port
// count is the same before and after.
func TestKill9DuringInterfaceAttach(t *testing.T) {
	ks, n, tenant, ir, nodes, member := neutronCrashWorld(t)
	before := n.PortCount(t, "")

	for _, point := range []string{neutronports.PointCreated + ":1", reconciler.PointInterfaceBound + ":1"} {
		for _, deleteFirst := range []bool{false, true} {
			in := newNeutronIngot(t, ks, ir, nodes, tenant.ID)
			p := in.run("INGOT_CRASH_AT=" + point)
			var out struct {
				Server struct{ ID string } `json:"server"`
			}
			neutronCall(t, in, member, "POST", "/v2.1/servers", map[string]any{"server": map[string]any{"name": "crash-iface",
				"flavorRef": "bm", "imageRef": imageID, "networks": "none"}}, &out, http.StatusAccepted)
			id := out.Server.ID
			waitStatus(t, in, member, id, "ACTIVE")
			// The attach's answer never comes: ingot dies under it.
			neutronCall(t, in, member, "POST", "/v2.1/servers/"+id+"/os-interface",
				map[string]any{"interfaceAttachment": map[string]any{"net_id": tenant.ID}}, nil, 0)
			if !killedBy9(t, p, time.Minute) {
				t.Fatalf("ingot was not killed at %s:\n%s", point, p.Tail(30))
			}
			if got := n.PortCount(t, "device_id="+id); got != 1 {
				t.Fatalf("after the kill at %s: %d Neutron ports of %s, want the one made before the kill", point, got, id)
			}
			in.run()
			if deleteFirst {
				neutronCall(t, in, member, "DELETE", "/v2.1/servers/"+id, nil, nil, http.StatusNoContent)
			} else {
				poll.Until(t, time.Minute, "attach carried out after the restart", func() (bool, string) {
					var ifs struct {
						Interfaces []map[string]any `json:"interfaceAttachments"`
					}
					neutronCall(t, in, member, "GET", "/v2.1/servers/"+id+"/os-interface", nil, &ifs, 0)
					var vifs []string // the server's node is one of these
					for _, node := range nodes {
						vifs = append(vifs, ir.vifs(t, node)...)
					}
					return len(ifs.Interfaces) == 1 && len(vifs) == 1, fmt.Sprintf("%d interfaces, VIFs %v", len(ifs.Interfaces), vifs)
				})
				waitStatus(t, in, member, id, "ACTIVE")
				if got := n.PortCount(t, "device_id="+id); got != 1 {
					t.Errorf("attach done after the restart at %s with %d Neutron ports, want 1", point, got)
				}
				neutronCall(t, in, member, "DELETE", "/v2.1/servers/"+id, nil, nil, http.StatusNoContent)
			}
			waitNeutronGone(t, in, n, member, id)
			in.checkReleased(id)
		}
	}
	after := n.PortCount(t, "")
	t.Logf("Neutron ports: %d before, %d after four kills during attaches", before, after)
	if after != before {
		t.Errorf("Neutron ports %d after, want %d", after, before)
	}
}
