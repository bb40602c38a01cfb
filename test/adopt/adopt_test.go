// Package adopt tests `ingot adopt --from-ironic` against the real Ironic:
// nodes deployed by hand as metalsmith deploys them (instance_uuid,
// instance_info, a config drive, deploy to active), adopted by the ingot
// binary — dry run, a kill -9 halfway, reruns — then served by `ingot
// serve` as ordinary servers: shown with the same ids, stopped, started,
// rebooted and deleted, each node released and no port left.
package adopt

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

const (
	rc       = "rc-adopt"
	imageURL = "http://127.0.0.1:1/debian-12.qcow2"
	netID    = "8d4e7c2a-1f3b-4a5c-9d6e-7f8a9b0c1d2e"
)

// handDeployed is one instance deployed by hand.
type handDeployed struct {
	node, id, name, ip string
}

// deployByHand deploys node as metalsmith would: instance_uuid and
// instance_info set, then a deploy to active with a JSON config drive
// whose network_data gives vif id its address ip ("" for none).
func deployByHand(t *testing.T, ir *ironictest.Env, node, id, name, image, project, vif, ip string) {
	t.Helper()
	info := map[string]any{"image_source": image, "root_gb": "10", "display_name": name}
	if project != "" {
		info["project_id"] = project
	}
	patch := []map[string]any{
		{"op": "add", "path": "/instance_uuid", "value": id},
		{"op": "add", "path": "/instance_info", "value": info},
	}
	if r := ir.Request(t, "PATCH", "/v1/nodes/"+node, patch); r.Status != http.StatusOK {
		t.Fatalf("PATCH %s: %d %s", node, r.Status, r.Body)
	}
	cd := map[string]any{"meta_data": map[string]any{"uuid": id, "name": name}}
	if ip != "" {
		cd["network_data"] = map[string]any{
			"links": []any{map[string]any{"id": "port-" + vif, "vif_id": vif, "type": "phy",
				"ethernet_mac_address": "52:54:00:00:00:01"}},
			"networks": []any{map[string]any{"id": "network0", "type": "ipv4", "link": "port-" + vif,
				"ip_address": ip, "netmask": "255.255.255.0", "network_id": netID}},
		}
	}
	body := map[string]any{"target": "active", "configdrive": cd}
	for deadline := time.Now().Add(30 * time.Second); ; {
		r := ir.Request(t, "PUT", "/v1/nodes/"+node+"/states/provision", body)
		if r.Status == http.StatusAccepted {
			break
		}
		if r.Status != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("deploy %s: %d %s", node, r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond) // locked by the conductor: poll until it lets go
	}
	ir.WaitProvisionState(t, node, "active", 60*time.Second)
	// Fake hardware stays off after a deploy; a real machine boots.
	for deadline := time.Now().Add(30 * time.Second); ; {
		r := ir.Request(t, "PUT", "/v1/nodes/"+node+"/states/power", map[string]any{"target": "power on"})
		if r.Status == http.StatusAccepted {
			break
		}
		if r.Status != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("power on %s: %d %s", node, r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for deadline := time.Now().Add(30 * time.Second); ir.GetNode(t, node)["power_state"] != "power on"; {
		if time.Now().After(deadline) {
			t.Fatalf("node %s not powered on", node)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// database is a SQLite file in dir, or with INGOT_TEST_STORE=postgres a
// fresh PostgreSQL database.
func database(t *testing.T, dir string) string {
	if os.Getenv("INGOT_TEST_STORE") == "postgres" {
		return pgtest.DSN(t)
	}
	return filepath.Join(dir, "ingot.db")
}

// writeConfig is the configuration both `ingot adopt` and `ingot serve` read.
func writeConfig(t *testing.T, ironicURL string) string {
	dir := t.TempDir()
	path := filepath.Join(dir, "ingot.yaml")
	cfg := fmt.Sprintf(`database: %s
ironic:
  url: %s
  timeout: 10s
poll_interval: 200ms
drift_interval: 500ms
build_timeout: 2m
delete_timeout: 1m
flavors:
  - {id: bm, name: bm, resource_class: %s, disk_gb: 10}
images:
  - {id: 6b1f0c2e-3d4a-4b5c-8d6e-0f1a2b3c4d5e, name: debian-12, url: %q}
networks:
  - {id: %s, name: provisioning, cidr: 10.0.0.0/24}
`, database(t, dir), ironicURL, rc, imageURL, netID)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runAdopt runs `ingot adopt --from-ironic` with args to its end and
// returns its output and how it ended.
func runAdopt(t *testing.T, bin, config string, env []string, args ...string) (string, *exec.ExitError) {
	t.Helper()
	return runAdoptFrom(t, "--from-ironic", bin, config, env, args...)
}

// runAdoptFrom is runAdopt with the source flag (--from-nova).
func runAdoptFrom(t *testing.T, from, bin, config string, env []string, args ...string) (string, *exec.ExitError) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"adopt", from, "--config", config}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return string(out), nil
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("ingot adopt: %v", err)
	}
	return string(out), ee
}

var summaryRe = regexp.MustCompile(`(\d+) (?:adopted|would adopt), (\d+) already ingot's, (\d+) refused`)

func summary(t *testing.T, out string) (adopted, already, refused int) {
	t.Helper()
	m := summaryRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary in:\n%s", out)
	}
	fmt.Sscan(m[1], &adopted)
	fmt.Sscan(m[2], &already)
	fmt.Sscan(m[3], &refused)
	return adopted, already, refused
}

// serverShow is `openstack server show id -f json` against the API at url
// (Debian's CLI, auth type none, a clean environment).
func serverShow(t *testing.T, url, id string) map[string]any {
	t.Helper()
	const osc = "/usr/bin/openstack"
	if _, err := os.Stat(osc); err != nil {
		if ironictest.RealWanted() {
			t.Fatalf("%s is missing: run .ci/install-osc.sh", osc)
		}
		t.Logf("%s is missing: openstack server show not tried", osc)
		return nil
	}
	cmd := exec.Command(osc, "--os-compute-api-version", "2.90", "server", "show", id, "-f", "json")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"PYTHONDONTWRITEBYTECODE=1", "OS_AUTH_TYPE=none", "OS_ENDPOINT=" + url + "/v2.1"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openstack server show %s: %v\n%s", id, err, out)
	}
	var shown map[string]any
	if err := json.Unmarshal(out, &shown); err != nil {
		t.Fatalf("openstack server show %s: %v\n%s", id, err, out)
	}
	return shown
}

// buildBinary is cmd/ingot with its crash points.
func buildBinary(t *testing.T) string { return ingottest.Binary(t, "crashpoints") }

func vifOf(i int) string { return fmt.Sprintf("b0000000-0000-4000-8000-%012d", i+1) }

func TestAdoptFromIronic(t *testing.T) {
	ir := ironictest.StartReal(t, ironictest.RealOptions{ShowInstanceSecrets: true})
	nodes := ir.EnrollNodes(t, 5, ironictest.NodeSpec{Name: "adopt", ResourceClass: rc, Kind: ironictest.Fast, Ports: 1})
	good := []handDeployed{
		{node: nodes[0], id: "a0000000-0000-4000-8000-000000000001", name: "web-1", ip: "10.0.0.51"},
		{node: nodes[1], id: "a0000000-0000-4000-8000-000000000002", name: "web-2", ip: "10.0.0.52"},
		{node: nodes[2], id: "a0000000-0000-4000-8000-000000000003", name: "db-1"},
	}
	for i, d := range good {
		project := ""
		if i == 0 {
			project = "proj-web"
		}
		deployByHand(t, ir, d.node, d.id, d.name, imageURL, project, vifOf(i), d.ip)
	}
	// Without instance_info.project_id, the node's lessee owns it.
	if r := ir.Request(t, "PATCH", "/v1/nodes/"+good[1].node, []map[string]any{{"op": "add", "path": "/lessee", "value": "proj-lessee"}}); r.Status != http.StatusOK {
		t.Fatalf("PATCH lessee: %d %s", r.Status, r.Body)
	}
	unknownImage := "a0000000-0000-4000-8000-000000000004"
	deployByHand(t, ir, nodes[3], unknownImage, "odd", "http://127.0.0.1:1/unknown.qcow2", "", "", "")
	notActive := "a0000000-0000-4000-8000-000000000005"
	if r := ir.Request(t, "PATCH", "/v1/nodes/"+nodes[4], []map[string]any{{"op": "add", "path": "/instance_uuid", "value": notActive}}); r.Status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	before := map[string]any{}
	for _, d := range good {
		before[d.node] = ir.GetNode(t, d.node)["provision_updated_at"]
	}

	bin := buildBinary(t)
	config := writeConfig(t, ir.URL)

	// The dry run: every instance named, the refusals with their reasons,
	// nothing written (a second dry run says the same).
	start := time.Now()
	out, ee := runAdopt(t, bin, config, nil, "--dry-run")
	if ee != nil {
		t.Fatalf("dry run: %v\n%s", ee, out)
	}
	t.Logf("dry run (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, d := range good {
		if !strings.Contains(out, fmt.Sprintf("would adopt %s %q node %s", d.id, d.name, d.node)) {
			t.Errorf("dry run does not name %s %s", d.id, d.name)
		}
	}
	for id, why := range map[string]string{unknownImage: "image not found", notActive: "node not active"} {
		if !regexp.MustCompile(`cannot adopt ` + id + ` .*: ` + why).MatchString(out) {
			t.Errorf("dry run does not refuse %s with %q", id, why)
		}
	}
	if a, al, r := summary(t, out); a != 3 || al != 0 || r != 2 {
		t.Fatalf("dry run: %d/%d/%d, want 3 would adopt, 0 already, 2 refused", a, al, r)
	}
	out, _ = runAdopt(t, bin, config, nil, "--dry-run")
	if a, al, _ := summary(t, out); a != 3 || al != 0 {
		t.Fatalf("second dry run: %d would adopt, %d already: the first wrote something\n%s", a, al, out)
	}

	// kill -9 after the second instance's commit, then the rerun adopts
	// the third only, and a third run nothing.
	out, ee = runAdopt(t, bin, config, []string{"INGOT_CRASH_AT=adopt:saved:2"})
	if ee == nil || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("crashed run: want SIGKILL, got %v\n%s", ee, out)
	}
	out, ee = runAdopt(t, bin, config, nil)
	if ee != nil {
		t.Fatalf("rerun: %v\n%s", ee, out)
	}
	t.Logf("rerun after kill -9:\n%s", out)
	if a, al, r := summary(t, out); a != 1 || al != 2 || r != 2 {
		t.Fatalf("rerun: %d/%d/%d, want 1 adopted, 2 already, 2 refused", a, al, r)
	}
	out, _ = runAdopt(t, bin, config, nil)
	if a, al, _ := summary(t, out); a != 0 || al != 3 {
		t.Fatalf("third run: %d adopted, %d already, want 0 and 3\n%s", a, al, out)
	}
	for _, d := range good {
		n := ir.GetNode(t, d.node)
		if n["provision_state"] != "active" || n["instance_uuid"] != d.id || n["provision_updated_at"] != before[d.node] {
			t.Fatalf("node %s touched by the adoption: %v %v %v (was %v)", d.node, n["provision_state"],
				n["instance_uuid"], n["provision_updated_at"], before[d.node])
		}
	}

	// Served: the same ids, ACTIVE, the addresses found; the admin API
	// runs the same code (everything already adopted).
	p := ingottest.Serve(t, bin, config, ingottest.Options{})
	c := apitest.New(t, p.API)
	c.Poll = 50 * time.Millisecond
	var rep struct {
		Adopted []json.RawMessage `json:"adopted"`
		Already []json.RawMessage `json:"already"`
		Refused []json.RawMessage `json:"refused"`
	}
	if code := c.Call("POST", "/ingot/v1/adopt", map[string]any{"from": "ironic", "dry_run": true}, &rep); code != http.StatusOK ||
		len(rep.Adopted) != 0 || len(rep.Already) != 3 || len(rep.Refused) != 2 {
		t.Fatalf("POST /ingot/v1/adopt: %d, %d/%d/%d", code, len(rep.Adopted), len(rep.Already), len(rep.Refused))
	}
	// The command does not run beside the serving ingot on its database.
	if out, ee := runAdopt(t, bin, config, nil, "--dry-run"); ee == nil || !strings.Contains(out, "in use by another ingot") {
		t.Errorf("adopt beside ingot serve: %v\n%s", ee, out)
	}
	for _, d := range good {
		var body struct {
			Server struct {
				ID        string                      `json:"id"`
				Name      string                      `json:"name"`
				Status    string                      `json:"status"`
				TenantID  string                      `json:"tenant_id"`
				Node      string                      `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
				Addresses map[string][]map[string]any `json:"addresses"`
			} `json:"server"`
		}
		if code := c.Call("GET", "/v2.1/servers/"+d.id, nil, &body); code != http.StatusOK {
			t.Fatalf("GET %s: %d", d.id, code)
		}
		sv := body.Server
		if sv.ID != d.id || sv.Name != d.name || sv.Status != "ACTIVE" || sv.Node != d.node {
			t.Errorf("server %s: %+v", d.id, sv)
		}
		got := ""
		for _, as := range sv.Addresses {
			for _, a := range as {
				got, _ = a["addr"].(string)
			}
		}
		if got != d.ip {
			t.Errorf("server %s: address %q, want %q (%v)", d.id, got, d.ip, sv.Addresses)
		}
		if want := map[string]string{"web-1": "proj-web", "web-2": "proj-lessee", "db-1": "ingot"}[d.name]; sv.TenantID != want {
			t.Errorf("server %s: project %q, want %s (instance_info.project_id, lessee, the default)", d.id, sv.TenantID, want)
		}
	}

	// The OpenStack CLI shows an adopted server under its old id.
	if shown := serverShow(t, p.API, good[1].id); shown != nil && shown["id"] != good[1].id || shown["name"] != good[1].name ||
		shown["status"] != "ACTIVE" {
		t.Errorf("openstack server show %s: id %v name %v status %v", good[1].id, shown["id"], shown["name"], shown["status"])
	}

	// The addresses found are ingot's ports (Neutron's shape of them).
	vifs := []string{vifOf(0), vifOf(1)}
	for _, vif := range vifs {
		if code := c.Call("GET", "/network/v2.0/ports/"+vif, nil, nil); code != http.StatusOK {
			t.Errorf("port %s: %d, want 200", vif, code)
		}
	}

	// Day-2 operations and the delete, as for a server ingot built.
	d := good[0]
	for _, step := range []struct {
		body any
		want string
	}{
		{map[string]any{"os-stop": nil}, "SHUTOFF"},
		{map[string]any{"os-start": nil}, "ACTIVE"},
		{map[string]any{"reboot": map[string]string{"type": "HARD"}}, "ACTIVE"},
	} {
		if code := c.Call("POST", "/v2.1/servers/"+d.id+"/action", step.body, nil); code != http.StatusAccepted {
			t.Fatalf("action %v: %d", step.body, code)
		}
		c.WaitFor(fmt.Sprintf("%s %s", d.id, step.want), 60*time.Second, func() bool {
			sv, _ := c.Get(d.id)
			return sv.Status == step.want && sv.TaskState == nil
		})
	}
	for _, d := range good {
		c.Delete(d.id)
	}
	for _, d := range good {
		c.WaitGone(d.id, 90*time.Second)
		c.WaitFor("node "+d.node+" released", 60*time.Second, func() bool {
			n := ir.GetNode(t, d.node)
			return n["provision_state"] == "available" && n["instance_uuid"] == nil
		})
		if vifs := ir.ListVIFs(t, d.node); len(vifs) != 0 {
			t.Errorf("VIFs left on %s: %v", d.node, vifs)
		}
	}
	// No port left.
	for _, vif := range vifs {
		if code := c.Call("GET", "/network/v2.0/ports/"+vif, nil, nil); code != http.StatusNotFound {
			t.Errorf("port %s after the deletes: %d, want 404", vif, code)
		}
	}
}
