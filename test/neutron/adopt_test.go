package neutron

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// TestAdoptNeutronPort: an instance deployed by hand as Nova's Ironic
// driver leaves it (its Neutron port with device_id = the instance and
// device_owner compute:nova, attached as the node's VIF) is adopted with
// that port as ingot's own, shown with its address, and the delete
// through ingot removes the port, detaches the VIF and frees the node.
func TestAdoptNeutronPort(t *testing.T) {
	w := startWorld(t, 1)
	ctx := context.Background()
	ir := w.ironic
	nodes, err := w.app.Ironic.ListNodes(ctx)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	node := nodes[0].UUID
	const id = "e0000000-0000-4000-8000-000000000001"
	var port struct {
		Port struct {
			ID       string `json:"id"`
			FixedIPs []struct {
				IP string `json:"ip_address"`
			} `json:"fixed_ips"`
		} `json:"port"`
	}
	if err := testproc.Call(w.hc, w.neutron.AdminToken(t), "POST", w.neutron.URL+"/v2.0/ports", map[string]any{"port": map[string]any{
		"network_id": w.net, "device_id": id, "device_owner": "compute:nova", "project_id": w.project, "name": "nova-made",
	}}, &port); err != nil {
		t.Fatal(err)
	}
	before := w.neutron.PortCount(t, "")
	ironicOK(t, w, "POST", "/v1/nodes/"+node+"/vifs", map[string]any{"id": port.Port.ID}, http.StatusNoContent)
	ironicOK(t, w, "PATCH", "/v1/nodes/"+node, []map[string]any{
		{"op": "add", "path": "/instance_uuid", "value": id},
		{"op": "add", "path": "/instance_info", "value": map[string]any{"image_source": w.app.Config.Images[0].URL,
			"root_gb": "10", "display_name": "from-nova", "project_id": w.project}},
	}, http.StatusOK)
	ironicOK(t, w, "PUT", "/v1/nodes/"+node+"/states/provision", map[string]any{"target": "active"}, http.StatusAccepted)
	ir.WaitProvisionState(t, node, "active", 90*time.Second)
	ironicOK(t, w, "PUT", "/v1/nodes/"+node+"/states/power", map[string]any{"target": "power on"}, http.StatusAccepted)
	poll.Until(t, 30*time.Second, "node "+node+" on and unlocked", func() (bool, string) {
		n := ir.GetNode(t, node)
		return n["power_state"] == "power on" && n["reservation"] == nil, fmt.Sprint(n["power_state"], n["reservation"])
	})

	rep, err := w.app.Adopter.FromIronic(ctx, adopt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s=%s", w.net, port.Port.FixedIPs[0].IP)
	if len(rep.Adopted) != 1 || rep.Adopted[0].ID != id || len(rep.Adopted[0].Addresses) != 1 || rep.Adopted[0].Addresses[0] != want {
		t.Fatalf("report %+v, want %s adopted with %s", rep, id, want)
	}
	ports, err := w.app.Store.Ports(ctx, id)
	if err != nil || len(ports) != 1 || ports[0].NeutronID != port.Port.ID || ports[0].UserPort || ports[0].VIFNode != node {
		t.Fatalf("ports of %s: %+v %v", id, ports, err)
	}
	w.waitStatus(t, id, "ACTIVE", 30*time.Second)

	w.call(t, "DELETE", "/v2.1/servers/"+id, nil, nil)
	w.waitGone(t, id, 120*time.Second)
	if err := testproc.Call(w.hc, w.neutron.AdminToken(t), "GET", w.neutron.URL+"/v2.0/ports/"+port.Port.ID, nil, nil); err == nil {
		t.Errorf("Neutron port %s left after the delete", port.Port.ID)
	}
	if after := w.neutron.PortCount(t, ""); after != before-1 {
		t.Errorf("Neutron ports: %d before the delete, %d after, want %d", before, after, before-1)
	}
	poll.Until(t, 60*time.Second, "node "+node+" released", func() (bool, string) {
		n := ir.GetNode(t, node)
		return n["provision_state"] == "available" && n["instance_uuid"] == nil, fmt.Sprint(n["provision_state"])
	})
	if vifs := ir.ListVIFs(t, node); len(vifs) != 0 {
		t.Errorf("VIFs left on %s: %v", node, vifs)
	}
}

// ironicOK sends one call to Ironic that must answer want, retrying while
// its conductor holds the node (409).
func ironicOK(t *testing.T, w *world, method, path string, body any, want int) {
	t.Helper()
	poll.Until(t, 30*time.Second, method+" "+path, func() (bool, string) {
		r := w.ironic.Request(t, method, path, body)
		if r.Status != want && r.Status != http.StatusConflict {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r.Status == want, string(r.Body)
	})
}
