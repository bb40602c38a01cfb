package ironic_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// adapterDeployUndeploy is TestAdapter's DeployUndeploy subtest.
func adapterDeployUndeploy(ctx context.Context, t *testing.T, h *ironictest.Env) {
	c, cnt := newClient(t, h.URL, 0)
	id := enroll(t, h, "dp-a", "dp")
	inst := uuid.NewString()
	if _, err := c.Reserve(ctx, id, inst, nil); err != nil {
		t.Fatal(err)
	}
	for _, vif := range []string{"vif-1", "vif-1"} { // noop network: a no-op, repeatable
		if err := c.AttachVIF(ctx, id, vif); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ListVIFs(ctx, id); err != nil {
		t.Fatal(err)
	}
	cnt.take()
	req := ironic.DeployRequest{
		InstanceInfo: map[string]any{
			"image_source": "http://127.0.0.1:1/img.qcow2", "root_gb": "10",
			"capabilities": map[string]any{"boot_mode": "uefi"},
		},
		ConfigDrive: &ironic.ConfigDrive{
			MetaData: map[string]any{"uuid": inst, "hostname": "dp-a"},
			UserData: "#cloud-config\n",
		},
	}
	start := time.Now()
	if err := c.Deploy(ctx, id, req); err != nil {
		t.Fatal(err)
	}
	// Nothing to remove: no GET of instance_info, one PATCH, one PUT.
	if got := cnt.take(); got["node.get"] != 0 || got["node.patch"] != 1 || got["node.provision"] != 1 {
		t.Errorf("Deploy calls: %v, want one PATCH, one PUT", got)
	}
	n := waitNode(t, c, id, 30*time.Second, "active", func(n ironic.Node) bool {
		return n.ProvisionState == ironic.StateActive && n.TargetProvisionState == ""
	})
	t.Logf("deploy to active in %v", time.Since(start))
	if n.InstanceUUID != inst {
		t.Fatalf("active node %+v", n)
	}
	ii := instanceInfo(t, h, id)
	if ii["image_source"] != "http://127.0.0.1:1/img.qcow2" || ii["configdrive"] != "******" {
		t.Fatalf("instance_info = %v", ii)
	}
	// A second deploy of an active node is refused as invalid state.
	if err := c.Deploy(ctx, id, req); !errors.Is(err, ironic.ErrInvalidState) {
		t.Fatalf("Deploy on active = %v, want ErrInvalidState", err)
	}
	// …after setting the same instance_info again (a repeated deploy
	// sends the same PATCH).
	cnt.take()
	if again := instanceInfo(t, h, id); !reflect.DeepEqual(again, ii) {
		t.Errorf("instance_info after the repeated deploy: %v, want %v", again, ii)
	}
	// A key to remove reads instance_info first: removed when present,
	// nothing sent when absent.
	for _, want := range []int{1, 0} {
		rm := ironic.DeployRequest{InstanceInfo: map[string]any{"image_source": "http://127.0.0.1:1/img.qcow2", "root_gb": nil}}
		if err := c.Deploy(ctx, id, rm); !errors.Is(err, ironic.ErrInvalidState) {
			t.Fatalf("Deploy on active = %v, want ErrInvalidState", err)
		}
		if got := cnt.take(); got["node.get"] != 1 || got["node.patch"] != want {
			t.Errorf("deploy removing root_gb: %v, want one GET and %d PATCH", got, want)
		}
	}
	if _, ok := instanceInfo(t, h, id)["root_gb"]; ok {
		t.Errorf("root_gb kept: %v", instanceInfo(t, h, id))
	}

	if err := c.Undeploy(ctx, id); err != nil {
		t.Fatal(err)
	}
	// NOTE: "available" with no target can be seen while the conductor
	// still holds the node's lock for a few ms; an action sent then gets
	// ErrNodeLocked (measured). Wait for the lock to go too.
	n = waitNode(t, c, id, 30*time.Second, "available and unlocked", func(n ironic.Node) bool {
		return n.ProvisionState == ironic.StateAvailable && n.TargetProvisionState == "" && n.Reservation == ""
	})
	if n.InstanceUUID != "" {
		t.Fatalf("instance_uuid kept after undeploy: %+v", n)
	}
	if err := c.Undeploy(ctx, id); !errors.Is(err, ironic.ErrInvalidState) {
		t.Fatalf("Undeploy available = %v, want ErrInvalidState", err)
	}
}

// adapterDeployRefused is TestAdapter's DeployRefused subtest.
func adapterDeployRefused(ctx context.Context, t *testing.T, h *ironictest.Env) {
	c, _ := newClient(t, h.URL, 0)
	id := enroll(t, h, "dr-a", "dr")
	h.SetMaintenance(t, id, true)
	if err := c.Deploy(ctx, id, ironic.DeployRequest{}); !errors.Is(err, ironic.ErrInvalidState) {
		t.Fatalf("Deploy in maintenance = %v, want ErrInvalidState", err)
	}
	id2 := enroll(t, h, "dr-b", "dr")
	err := c.Deploy(ctx, id2, ironic.DeployRequest{InstanceInfo: map[string]any{"image_source": "x"}})
	if !errors.Is(err, ironic.ErrInvalid) {
		t.Fatalf("Deploy with a bad image href = %v, want ErrInvalid", err)
	}
}

// TestNodeLocked: while a slow fake deploy holds the node (deploy_delay), a
// PATCH is refused with "state transition is in progress" and an undeploy
// with NodeLocked; both are ErrNodeLocked and transient.
func TestNodeLocked(t *testing.T) {
	h := ironictest.Start(t, ironictest.Options{DeployDelay: 3 * time.Second})
	ctx := context.Background()
	c, _ := newClient(t, h.URL, 0)
	id := enroll(t, h, "lk-a", "lk")
	inst := uuid.NewString()
	if _, err := c.Reserve(ctx, id, inst, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Deploy(ctx, id, ironic.DeployRequest{}); err != nil {
		t.Fatal(err)
	}
	// DeployDelay 3 s keeps the node in "deploying" with a reservation for
	// about 6 s; the checks below take well under a second.
	n := waitNode(t, c, id, 10*time.Second, "deploying and locked", func(n ironic.Node) bool {
		return n.ProvisionState == ironic.StateDeploying && n.Reservation != ""
	})
	if _, err := c.Reserve(ctx, id, inst, nil); !errors.Is(err, ironic.ErrNodeLocked) || !ironic.IsTransient(err) {
		t.Fatalf("PATCH while deploying = %v, want ErrNodeLocked", err)
	}
	if err := c.Unreserve(ctx, id); !errors.Is(err, ironic.ErrNodeLocked) {
		t.Fatalf("Unreserve while deploying = %v, want ErrNodeLocked", err)
	}
	if err := c.Undeploy(ctx, id); !errors.Is(err, ironic.ErrNodeLocked) {
		t.Fatalf("Undeploy while deploying = %v, want ErrNodeLocked", err)
	}
	if now, err := c.GetNode(ctx, id); err != nil || now.ProvisionState != ironic.StateDeploying {
		t.Fatalf("node left deploying during the checks (%+v, %v): the test raced; raise DeployDelay", now, err)
	}
	t.Logf("locked node: %+v", n)
	waitNode(t, c, id, 30*time.Second, "active", func(n ironic.Node) bool { return n.ProvisionState == ironic.StateActive })
}

// adapterReserveWithInfo is TestAdapter's ReserveWithInstanceInfo subtest:
// the reservation's one PATCH writes instance_info too, and a deploy told
// so sends only its PUT.
func adapterReserveWithInfo(ctx context.Context, t *testing.T, h *ironictest.Env) {
	c, cnt := newClient(t, h.URL, 0)
	id := enroll(t, h, "dp-info", "dp")
	inst := uuid.NewString()
	info := map[string]any{"image_source": "http://127.0.0.1:1/img.qcow2", "root_gb": 10, "display_name": "dp-info",
		"capabilities": map[string]any{"boot_mode": "uefi"}}
	cnt.take()
	n, err := c.Reserve(ctx, id, inst, info)
	if err != nil || n.InstanceUUID != inst {
		t.Fatalf("Reserve = %+v, %v", n, err)
	}
	if got := cnt.take(); got["node.patch"] != 1 || len(got) != 1 {
		t.Errorf("Reserve calls: %v, want one PATCH", got)
	}
	ii := instanceInfo(t, h, id)
	if ii["image_source"] != "http://127.0.0.1:1/img.qcow2" || ii["display_name"] != "dp-info" {
		t.Fatalf("instance_info after the reservation = %v", ii)
	}
	req := ironic.DeployRequest{InstanceInfo: info, InstanceInfoSet: true,
		ConfigDrive: &ironic.ConfigDrive{MetaData: map[string]any{"uuid": inst}}}
	if err := c.Deploy(ctx, id, req); err != nil {
		t.Fatal(err)
	}
	if got := cnt.take(); got["node.patch"] != 0 || got["node.get"] != 0 || got["node.provision"] != 1 {
		t.Errorf("Deploy calls: %v, want the PUT alone", got)
	}
	waitNode(t, c, id, 30*time.Second, "active", func(n ironic.Node) bool {
		return n.ProvisionState == ironic.StateActive && n.TargetProvisionState == ""
	})
	if err := c.Undeploy(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitNode(t, c, id, 60*time.Second, "available", func(n ironic.Node) bool {
		return n.ProvisionState == ironic.StateAvailable && n.TargetProvisionState == ""
	})
}
