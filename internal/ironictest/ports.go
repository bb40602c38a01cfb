package ironictest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the real Ironic's database, read by ConfigDrive
)

// Port is one Ironic port of a node, as the helpers read it back.
type Port struct {
	UUID      string `json:"uuid"`
	Address   string `json:"address"`
	Portgroup string `json:"portgroup_uuid"`
	PXE       bool   `json:"pxe_enabled"`
	Physnet   string `json:"physical_network"`
}

// addPorts gives a freshly enrolled node its NICs: spec.Ports ports
// (PXE-enabled), then spec.BondPorts ports in one portgroup of mode
// spec.BondMode. MACs are derived from the node's UUID. POST /v1/ports
// goes through the conductor, so right after the power action the node may
// be locked and the POST answer 409 NodeLocked: expectErr retries.
func (e *Env) addPorts(id string, spec NodeSpec) error {
	for j := range spec.Ports {
		body := map[string]any{"node_uuid": id, "address": nodeMAC(id, j), "pxe_enabled": true}
		if spec.PhysicalNetwork != "" {
			body["physical_network"] = spec.PhysicalNetwork
		}
		if spec.LocalLink {
			body["local_link_connection"] = map[string]string{"switch_id": "0a:1b:2c:3d:4e:5f",
				"port_id": fmt.Sprintf("Ethernet1/%d", j+1), "switch_info": "switch1"}
		}
		if _, err := e.expectErr("POST", "/v1/ports", body, 201); err != nil {
			return err
		}
	}
	if spec.BondPorts == 0 {
		return nil
	}
	pgBody := map[string]any{"node_uuid": id}
	if spec.BondMode != "" {
		pgBody["mode"] = spec.BondMode
	}
	r, err := e.expectErr("POST", "/v1/portgroups", pgBody, 201)
	if err != nil {
		return err
	}
	pg, _ := r.JSON()["uuid"].(string)
	for j := range spec.BondPorts {
		body := map[string]any{"node_uuid": id, "address": nodeMAC(id, spec.Ports+j), "portgroup_uuid": pg}
		if spec.PhysicalNetwork != "" {
			body["physical_network"] = spec.PhysicalNetwork
		}
		if _, err := e.expectErr("POST", "/v1/ports", body, 201); err != nil {
			return err
		}
	}
	return nil
}

// nodeMAC is a locally administered MAC unique to the node and index.
func nodeMAC(node string, j int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", node, j)))
	return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", h[0], h[1], h[2], h[3])
}

// Ports returns the node's Ironic ports in Ironic's order.
func (e *Env) Ports(t testing.TB, node string) []Port {
	t.Helper()
	var body struct {
		Ports []Port `json:"ports"`
	}
	q := url.Values{"node": {node}, "fields": {"uuid,address,portgroup_uuid,pxe_enabled,physical_network"}}
	e.decode(t, e.expect(t, "GET", "/v1/ports?"+q.Encode(), nil, 200), &body)
	return body.Ports
}

// ConfigDrive returns the config drive Ironic received for the node's
// deploy (the JSON form: meta_data, network_data, user_data). The API masks
// it ("******"); the simulator's Go API shows it, and the real Ironic's
// database (nodes.instance_info, JSON) holds what was sent — this harness
// owns that database. Nil when there is none.
func (e *Env) ConfigDrive(t testing.TB, node string) map[string]any {
	t.Helper()
	if e.Sim != nil {
		n, ok := e.Sim.Node(node)
		if !ok {
			t.Fatalf("ironictest: node %s not found", node)
		}
		cd, _ := n.InstanceInfo["configdrive"].(map[string]any)
		return cd
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.proc.dir, "ironic.sqlite")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatalf("ironictest: open Ironic's database: %v", err)
	}
	defer db.Close()
	var raw sql.NullString
	if err := db.QueryRowContext(context.Background(), "SELECT instance_info FROM nodes WHERE uuid = ?", node).Scan(&raw); err != nil {
		t.Fatalf("ironictest: instance_info of %s: %v", node, err)
	}
	var info map[string]any
	if raw.Valid && raw.String != "" {
		if err := json.Unmarshal([]byte(raw.String), &info); err != nil {
			t.Fatalf("ironictest: instance_info of %s: %v (%.200s)", node, err, raw.String)
		}
	}
	cd, _ := info["configdrive"].(map[string]any)
	return cd
}
