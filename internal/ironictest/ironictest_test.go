package ironictest

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"

	"github.com/google/uuid"
)

// TestHelpersSim and TestHelpersReal run the same helper walk-through on
// both Ironics.
func TestHelpersSim(t *testing.T) {
	t.Parallel()
	walkHelpers(t, StartSim(t, SimOptions{DeployTime: 2 * time.Second, UndeployTime: 2 * time.Second}))
}

func TestHelpersReal(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	env := StartReal(t, RealOptions{CallbackTimeout: time.Hour, DeployDelay: time.Second})
	t.Logf("real Ironic up in %s at %s", time.Since(begin).Round(time.Millisecond), env.URL)
	if !env.Real || env.Sim != nil || env.DeployDelay != time.Second || env.CallbackTimeout != time.Hour {
		t.Fatalf("env %+v", env)
	}
	walkHelpers(t, env)
}

func walkHelpers(t *testing.T, env *Env) {
	// Enrolment: available, powered off, resource class, traits, interface.
	ids := env.EnrollNodes(t, 3, NodeSpec{Name: "walk", ResourceClass: "gold", Traits: []string{"CUSTOM_X"}})
	for i, id := range ids {
		n := env.GetNode(t, id)
		for k, want := range map[string]any{
			"name": "walk-" + strconv.Itoa(i), "provision_state": "available", "power_state": "power off",
			"resource_class": "gold", "deploy_interface": "fake", "maintenance": false,
		} {
			if n[k] != want {
				t.Errorf("node %d %s = %v, want %v", i, k, n[k], want)
			}
		}
		if tr, _ := n["traits"].([]any); len(tr) != 1 || tr[0] != "CUSTOM_X" {
			t.Errorf("node %d traits %v", i, n["traits"])
		}
	}
	// Ports: PXE-enabled NICs, then a portgroup of two; MACs from the node.
	nic := env.EnrollNode(t, NodeSpec{Name: "nics", Ports: 1, BondPorts: 2, BondMode: "802.3ad", PhysicalNetwork: "physnet1",
		Properties: map[string]any{"capabilities": "boot_mode:uefi"}})
	ports := env.Ports(t, nic)
	if len(ports) != 3 || ports[0].Portgroup != "" || ports[1].Portgroup == "" || ports[2].Portgroup != ports[1].Portgroup ||
		!ports[0].PXE || ports[0].Physnet != "physnet1" || ports[0].Address != nodeMAC(nic, 0) {
		t.Errorf("ports of %s: %+v", nic, ports)
	}
	if pg := env.Request(t, "GET", "/v1/portgroups/"+ports[1].Portgroup, nil).JSON(); pg["mode"] != "802.3ad" || pg["node_uuid"] != nic {
		t.Errorf("portgroup %v", pg)
	}
	if props, _ := env.GetNode(t, nic)["properties"].(map[string]any); props["capabilities"] != "boot_mode:uefi" || props["cpus"] == nil {
		t.Errorf("properties %v", props)
	}
	// The config drive a deploy received, which the API masks.
	if cd := env.ConfigDrive(t, nic); cd != nil {
		t.Errorf("config drive before any deploy: %v", cd)
	}
	r0 := env.Request(t, "PATCH", "/v1/nodes/"+nic, []map[string]any{{"op": "add", "path": "/instance_uuid", "value": uuid.NewString()}})
	if r0.Status != 200 {
		t.Fatalf("reserve %s: %d %s", nic, r0.Status, r0.Fault())
	}
	cdSent := map[string]any{"meta_data": map[string]any{"uuid": "u-1", "hostname": "h"}, "network_data": map[string]any{"links": []any{}}}
	env.expect(t, "PUT", "/v1/nodes/"+nic+"/states/provision", map[string]any{"target": "active", "configdrive": cdSent}, 202)
	info := env.WaitProvisionState(t, nic, "active", 30*time.Second)["instance_info"].(map[string]any)
	if info["configdrive"] != "******" {
		t.Errorf("the API shows configdrive %v", info["configdrive"])
	}
	if cd := env.ConfigDrive(t, nic); cd == nil || cd["meta_data"].(map[string]any)["uuid"] != "u-1" || cd["network_data"] == nil {
		t.Errorf("ConfigDrive = %v, want what was sent", cd)
	}

	long := env.EnrollNode(t, NodeSpec{Kind: LongDeploy})
	if n := env.GetNode(t, long); n["deploy_interface"] != "custom-agent" || n["resource_class"] != "baremetal" {
		t.Errorf("LongDeploy node: deploy_interface %v resource_class %v", n["deploy_interface"], n["resource_class"])
	}

	// A Fast deploy, torn down out of band.
	deploy(t, env, ids[0])
	n := env.WaitProvisionState(t, ids[0], "deploying", 5*time.Second)
	if n["reservation"] == nil {
		t.Errorf("Fast node not locked while deploying (DeployDelay %s)", env.DeployDelay)
	}
	env.WaitProvisionState(t, ids[0], "active", 30*time.Second)
	if vifs := env.ListVIFs(t, ids[0]); len(vifs) != 0 {
		t.Errorf("noop VIFs listed: %v", vifs)
	}
	env.OutOfBandTeardown(t, ids[0]) // may meet the lock right after "active": retried
	if n := env.WaitProvisionState(t, ids[0], "available", 30*time.Second); n["instance_uuid"] != nil {
		t.Errorf("instance_uuid after teardown: %v", n["instance_uuid"])
	}

	// A long deploy: instance_uuid removed under it, then deleted out of band.
	deploy(t, env, long)
	env.WaitProvisionState(t, long, "wait call-back", 10*time.Second)
	env.RemoveInstanceUUID(t, long)
	n = env.GetNode(t, long)
	if n["instance_uuid"] != nil || n["provision_state"] != "wait call-back" || n["maintenance"] != false {
		t.Errorf("after RemoveInstanceUUID: instance_uuid %v, state %v, maintenance %v", n["instance_uuid"], n["provision_state"], n["maintenance"])
	}
	env.OutOfBandDelete(t, long)
	if r := env.Request(t, "GET", "/v1/nodes/"+long, nil); r.Status != 404 || r.Fault() != "Node "+long+" could not be found." {
		t.Errorf("GET after OutOfBandDelete: %d %q", r.Status, r.Fault())
	}

	// Maintenance, volume targets.
	env.SetMaintenance(t, ids[1], true)
	env.SetMaintenance(t, ids[1], true)
	if n := env.GetNode(t, ids[1]); n["maintenance"] != true {
		t.Errorf("maintenance not set")
	}
	env.SetMaintenance(t, ids[1], false)
	r := env.Request(t, "POST", "/v1/volume/targets", map[string]any{
		"node_uuid": ids[2], "volume_type": "iscsi", "boot_index": 0, "volume_id": "v1",
	})
	if r.Status != 201 {
		t.Fatalf("create volume target: %d %s", r.Status, r.Body)
	}
	if tg := env.ListVolumeTargets(t, ids[2]); len(tg) != 1 || tg[0]["volume_id"] != "v1" {
		t.Errorf("volume targets: %v", tg)
	}

	// Restart: a node caught deploying fails; the Env answers again.
	deploy(t, env, ids[1])
	env.WaitProvisionState(t, ids[1], "deploying", 5*time.Second)
	begin := time.Now()
	env.Restart(t)
	t.Logf("restart took %s", time.Since(begin).Round(time.Millisecond))
	n = env.GetNode(t, ids[1])
	if n["provision_state"] != "deploy failed" ||
		n["last_error"] != "The deploying state can't be resumed by conductor localhost. Moving to fail state." {
		t.Errorf("after restart: %v %v", n["provision_state"], n["last_error"])
	}
}

// deploy reserves the node for a fresh instance and asks for "active".
func deploy(t *testing.T, env *Env, id string) {
	t.Helper()
	r := env.Request(t, "PATCH", "/v1/nodes/"+id, []map[string]any{{"op": "add", "path": "/instance_uuid", "value": uuid.NewString()}})
	if r.Status != 200 {
		t.Fatalf("reserve %s: %d %s", id, r.Status, r.Fault())
	}
	env.expect(t, "PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "active"}, 202)
}

// TestStartChooses: without INGOT_TEST_IRONIC, Start gives the real Ironic
// exactly when it is installed, else the simulator.
func TestStartChooses(t *testing.T) {
	t.Setenv(EnvVar, "")
	env := Start(t, Options{DeployDelay: time.Second})
	if env.Real != RealInstalled() || env.DeployDelay != time.Second {
		t.Fatalf("Start without %s (Ironic installed: %v): %+v", EnvVar, RealInstalled(), env)
	}
	if !env.Real && (env.Sim == nil || env.CallbackTimeout != DefaultCallbackTimeout) {
		t.Fatalf("Start without %s and without Ironic: %+v", EnvVar, env)
	}
}

// TestPortChecks: a listener with SO_REUSEPORT (as eventlet binds) makes the
// port not free, and is counted.
func TestPortChecks(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if err := portFree(port); err == nil {
		t.Errorf("portFree(%d) = nil with a SO_REUSEPORT listener on it", port)
	}
	if n, err := listeners(port); err != nil || n != 1 {
		t.Errorf("listeners(%d) = %d, %v; want 1", port, n, err)
	}
	l2, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if n, _ := listeners(port); n != 2 {
		t.Errorf("listeners(%d) = %d with two SO_REUSEPORT listeners; want 2", port, n)
	}
	p1, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := portFree(p1); err != nil {
		t.Errorf("freePort gave %d, not free: %v", p1, err)
	}
}
