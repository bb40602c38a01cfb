package ironictest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
)

// Kind says how a node deploys.
type Kind int

const (
	// Fast nodes use the fake deploy interface: "deploying" (locked, about
	// 2×Env.DeployDelay) then "active".
	Fast Kind = iota
	// LongDeploy nodes use the custom-agent deploy interface: "deploying",
	// then "wait call-back", unlocked, until Env.CallbackTimeout, so an
	// out-of-band undeploy, maintenance or delete can happen "during the
	// deploy" (docs/ironic.md §7B). Use an Env with a long CallbackTimeout.
	LongDeploy
	// Failing nodes are LongDeploy nodes in an Env with a short
	// CallbackTimeout: they end "deploy failed", target "active", last_error
	// "Timeout reached while waiting for callback for node <uuid>" (§8).
	Failing
)

// deployInterface is the Ironic deploy_interface of a kind.
func (k Kind) deployInterface() string {
	if k == Fast {
		return "fake"
	}
	return "custom-agent"
}

// NodeSpec describes a node to enrol.
type NodeSpec struct {
	Name          string // optional; EnrollNodes appends "-<i>"
	ResourceClass string // default "baremetal"
	Kind          Kind
	Traits        []string // optional, e.g. CUSTOM_GOLD
	// Rescue gives the node the fake rescue interface (default: no-rescue,
	// which refuses a rescue).
	Rescue bool
	// Properties are merged over the defaults (cpus, memory_mb, local_gb,
	// cpu_arch), e.g. {"capabilities": "boot_mode:uefi"}.
	Properties map[string]any
	// Ports PXE-enabled Ironic ports, then BondPorts more in one portgroup
	// of mode BondMode (Ironic's default active-backup), all on
	// PhysicalNetwork when set; MACs derived from the node's UUID.
	Ports           int
	BondPorts       int
	BondMode        string
	PhysicalNetwork string
	// NetworkInterface, e.g. "flat" (default: the Ironic's, noop).
	NetworkInterface string
	// StorageInterface, e.g. "cinder" (default: the Ironic's, noop).
	StorageInterface string
	// LocalLink gives the (non-bonded) ports a local_link_connection, which
	// Ironic's neutron network interface sends as local_link_information.
	LocalLink bool
}

// enrollVersion creates nodes directly in "available" (docs/ironic.md §2:
// ≤1.10 skips enroll; resource_class then needs a PATCH at ≥1.21).
const enrollVersion = "1.10"

// EnrollNode creates a fake-hardware node and leaves it "available", not in
// maintenance, with power_state "power off" (so the Allocation API and
// volume target deletes work), and returns its UUID.
func (e *Env) EnrollNode(t testing.TB, spec NodeSpec) string {
	t.Helper()
	id, err := e.enroll(spec)
	if err != nil {
		t.Fatalf("ironictest: enrol node %q: %v", spec.Name, err)
	}
	return id
}

// EnrollNodes enrols n nodes like EnrollNode, four at a time, and returns
// their UUIDs in order.
func (e *Env) EnrollNodes(t testing.TB, n int, spec NodeSpec) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(4, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := spec
				if s.Name != "" {
					s.Name = fmt.Sprintf("%s-%d", spec.Name, i)
				}
				ids[i], errs[i] = e.enroll(s)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("ironictest: enrol node %d of %d: %v", i, n, err)
		}
	}
	return ids
}

func (e *Env) enroll(spec NodeSpec) (string, error) {
	props := map[string]any{"cpus": 8, "memory_mb": 16384, "local_gb": 100, "cpu_arch": "x86_64"}
	for k, v := range spec.Properties {
		props[k] = v
	}
	body := map[string]any{"driver": "fake-hardware", "properties": props}
	if spec.Name != "" {
		body["name"] = spec.Name
	}
	r, err := e.callVersion(enrollVersion, "POST", "/v1/nodes", body)
	if err != nil {
		return "", err
	}
	if r.Status != 201 {
		return "", fmt.Errorf("POST /v1/nodes at %s: %d %s", enrollVersion, r.Status, r.Fault())
	}
	id, _ := r.JSON()["uuid"].(string)
	if id == "" {
		return "", fmt.Errorf("POST /v1/nodes: no uuid in %s", r.Body)
	}
	node := "/v1/nodes/" + id
	rc := spec.ResourceClass
	if rc == "" {
		rc = "baremetal"
	}
	patch := []map[string]any{{"op": "add", "path": "/resource_class", "value": rc}}
	if di := spec.Kind.deployInterface(); di != "fake" {
		patch = append(patch, map[string]any{"op": "add", "path": "/deploy_interface", "value": di})
	}
	if spec.Rescue {
		patch = append(patch, map[string]any{"op": "add", "path": "/rescue_interface", "value": "fake"})
	}
	if spec.NetworkInterface != "" {
		patch = append(patch, map[string]any{"op": "add", "path": "/network_interface", "value": spec.NetworkInterface})
	}
	if spec.StorageInterface != "" {
		patch = append(patch, map[string]any{"op": "add", "path": "/storage_interface", "value": spec.StorageInterface})
	}
	if _, err := e.expectErr("PATCH", node, patch, 200); err != nil {
		return "", err
	}
	if len(spec.Traits) > 0 {
		if _, err := e.expectErr("PUT", node+"/traits", map[string]any{"traits": spec.Traits}, 204); err != nil {
			return "", err
		}
	}
	// NOTE: fake-hardware nodes start with power_state null, which the
	// Allocation API and volume target deletes treat as "not off" (§3, §5).
	if _, err := e.expectErr("PUT", node+"/states/power", map[string]any{"target": "power off"}, 202); err != nil {
		return "", err
	}
	var n map[string]any
	err = poll.WaitPaced(context.Background(), 10*time.Second, e.pollInterval(), func() (bool, string, error) {
		r, err := e.call("GET", node+"?fields=uuid,provision_state,power_state", nil)
		if err != nil {
			return false, "", err
		}
		n = r.JSON()
		return r.Status == 200 && n["power_state"] == "power off", fmt.Sprintf("%d %s", r.Status, r.Body), nil
	})
	if err != nil {
		return "", fmt.Errorf("node %s: power_state not \"power off\": %w", id, err)
	}
	if n["provision_state"] != "available" {
		return "", fmt.Errorf("node %s is %v, want available", id, n["provision_state"])
	}
	return id, e.addPorts(id, spec)
}

// pollInterval is how often the helpers read a node they wait on.
func (e *Env) pollInterval() time.Duration {
	if e.Real {
		return 50 * time.Millisecond
	}
	return 10 * time.Millisecond
}

// GetNode returns the node (UUID or name) as Ironic shows it at 1.78.
func (e *Env) GetNode(t testing.TB, node string) map[string]any {
	t.Helper()
	return e.expect(t, "GET", "/v1/nodes/"+url.PathEscape(node), nil, 200).JSON()
}

// WaitProvisionState polls the node (every 50 ms on the real Ironic) until its
// provision_state is state and returns it; fails the test after timeout with
// the last view. For a resting state (not "deploying", "deleting", …) it also
// waits until the conductor has let go of the node (reservation null).
// NOTE: the real Ironic shows a new state while its conductor still holds
// the node's lock for a moment, and a call made then gets 409 NodeLocked
// (docs/ironic.md §11); "deploy failed" keeps target_provision_state
// "active" (§8).
func (e *Env) WaitProvisionState(t testing.TB, node, state string, timeout time.Duration) map[string]any {
	t.Helper()
	var n map[string]any
	err := poll.WaitPaced(context.Background(), timeout, e.pollInterval(), func() (bool, string, error) {
		n = e.GetNode(t, node)
		return n["provision_state"] == state && (transitional[state] || n["reservation"] == nil),
			fmt.Sprintf("provision_state %v (target %v, reservation %v, last_error %v)",
				n["provision_state"], n["target_provision_state"], n["reservation"], n["last_error"]), nil
	})
	if err != nil {
		t.Fatalf("ironictest: node %s: want provision_state %q: %v", node, state, err)
	}
	return n
}

// transitional are the states in which the conductor holds the node's lock
// throughout.
var transitional = map[string]bool{
	"deploying": true, "deleting": true, "cleaning": true, "verifying": true,
	"inspecting": true, "rescuing": true, "unrescuing": true, "adopting": true,
}

// SetMaintenance turns maintenance on or off (idempotent), retrying while the
// node is locked.
func (e *Env) SetMaintenance(t testing.TB, node string, on bool) {
	t.Helper()
	path := "/v1/nodes/" + url.PathEscape(node) + "/maintenance"
	if on {
		e.expect(t, "PUT", path, map[string]any{"reason": "ironictest"}, 202)
		return
	}
	e.expect(t, "DELETE", path, nil, 202)
}

// OutOfBandDelete deletes the node as an operator would: maintenance on,
// then DELETE (204), each retried while the node is locked. Works in any
// state, with or without an instance_uuid (§7B, §7C).
func (e *Env) OutOfBandDelete(t testing.TB, node string) {
	t.Helper()
	e.SetMaintenance(t, node, true)
	e.expect(t, "DELETE", "/v1/nodes/"+url.PathEscape(node), nil, 204)
}

// OutOfBandTeardown undeploys the node (provision target "deleted", 202),
// retried while the node is locked. It does not wait: the node goes
// "deleting" then "available", and Ironic clears instance_uuid and
// instance_info at the end (§7C, §7D).
func (e *Env) OutOfBandTeardown(t testing.TB, node string) {
	t.Helper()
	e.expect(t, "PUT", "/v1/nodes/"+url.PathEscape(node)+"/states/provision",
		map[string]any{"target": "deleted"}, 202)
}

// RemoveInstanceUUID clears the node's instance_uuid out of band and leaves
// the deploy state alone. It sets maintenance around the PATCH (unless the
// node is already in maintenance), because in maintenance a PATCH that is
// exactly "remove /instance_uuid" is allowed even during a state transition
// such as "wait call-back" (§7B).
func (e *Env) RemoveInstanceUUID(t testing.TB, node string) {
	t.Helper()
	wasOn, _ := e.GetNode(t, node)["maintenance"].(bool)
	if !wasOn {
		e.SetMaintenance(t, node, true)
	}
	e.expect(t, "PATCH", "/v1/nodes/"+url.PathEscape(node),
		[]map[string]any{{"op": "remove", "path": "/instance_uuid"}}, 200)
	if !wasOn {
		e.SetMaintenance(t, node, false)
	}
}

// ListVIFs returns the ids of the VIFs attached to the node. NOTE: with
// network_interface=noop (the harness's default) this is always empty (§4).
func (e *Env) ListVIFs(t testing.TB, node string) []string {
	t.Helper()
	var body struct {
		VIFs []struct {
			ID string `json:"id"`
		} `json:"vifs"`
	}
	e.decode(t, e.expect(t, "GET", "/v1/nodes/"+url.PathEscape(node)+"/vifs", nil, 200), &body)
	ids := make([]string, 0, len(body.VIFs))
	for _, v := range body.VIFs {
		ids = append(ids, v.ID)
	}
	return ids
}

// ListVolumeTargets returns the node's volume targets, with all fields.
func (e *Env) ListVolumeTargets(t testing.TB, node string) []map[string]any {
	t.Helper()
	var body struct {
		Targets []map[string]any `json:"targets"`
	}
	q := url.Values{"node": {node}, "detail": {"True"}}
	e.decode(t, e.expect(t, "GET", "/v1/volume/targets?"+q.Encode(), nil, 200), &body)
	return body.Targets
}

func (e *Env) decode(t testing.TB, r *Response, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("ironictest: decode %s: %v", r.Body, err)
	}
}
