package osc

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/instanceactions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// startApp runs the whole service in process (internal/app, as `ingot
// serve` wires it) with the built-in simulator, every node held in `wait
// call-back` until released; it returns the API's root URL.
func startApp(t *testing.T) (*app.App, string) {
	t.Helper()
	cfg, err := config.Parse([]byte(`
poll_interval: 200ms
max_attempts: 2
ironic:
  url: sim
  sim: {nodes: 6, resource_class: baremetal, deploy_time: 3s, undeploy_time: 300ms}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2"}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
`))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	a, url := apptest.Serve(t, cfg, app.Options{})
	for _, n := range a.Sim.Nodes() {
		if err := a.Sim.HoldDeploy(n.UUID); err != nil {
			t.Fatalf("hold %s: %v", n.UUID, err)
		}
	}
	return a, url
}

// driveSim is stack.drive in process: nodes of building (or rebuilding) servers named
// failPrefix… are deleted out-of-band once they deploy, the others' deploys
// are released; free nodes are held again (the simulator ends a hold on
// release and teardown).
func driveSim(ctx context.Context, a *app.App, c *gophercloud.ServiceClient, failPrefix string) {
	for ctx.Err() == nil {
		nodes := map[string]ironicsim.NodeSnapshot{}
		for _, n := range a.Sim.Nodes() {
			nodes[n.UUID] = n
			switch n.ProvisionState {
			case "available", "deleting", "cleaning", "active":
				if !n.Held {
					_ = a.Sim.HoldDeploy(n.UUID)
				}
			}
		}
		var list []servers.Server
		for _, status := range []string{"BUILD", "REBUILD"} {
			if pages, err := servers.List(c, servers.ListOpts{Status: status}).AllPages(ctx); err == nil {
				l, _ := servers.ExtractServers(pages)
				list = append(list, l...)
			}
		}
		{
			for _, sv := range list {
				n, ok := nodes[sv.HypervisorHostname]
				if !ok {
					continue
				}
				deploying := n.ProvisionState == "deploying" || n.ProvisionState == "wait call-back"
				switch {
				case deploying && strings.HasPrefix(sv.Name, failPrefix):
					_ = a.Sim.DeleteOutOfBand(n.UUID)
				case n.ProvisionState == "wait call-back":
					_ = a.Sim.ReleaseDeploy(n.UUID)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestGophercloud runs the CLI's flows with gophercloud's compute v2 client
// (as Terraform and the ingot CLI use it): create without networks at 2.1
// and with them at 2.90, servers.WaitForStatus to ACTIVE, get, list with a
// name filter, flavors with extra specs, instance actions, a build whose
// nodes are deleted out-of-band (ERROR with the fault, each attempt in the
// events), delete until 404.
func TestGophercloud(t *testing.T) {
	a, url := startApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := func(mv string) *gophercloud.ServiceClient {
		return &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: url + "/v2.1/",
			Type: "compute", Microversion: mv}
	}
	c90, c21 := client("2.90"), client("2.1")
	driveCtx, stopDrive := context.WithCancel(ctx)
	defer stopDrive()
	go driveSim(driveCtx, a, c90, "bad-")
	imageID, netID := a.Config.Images[0].ID, a.Config.Networks[0].ID

	okOld, err := servers.Create(ctx, c21, servers.CreateOpts{Name: "ok-old", ImageRef: imageID, FlavorRef: "1"}, nil).Extract()
	if err != nil {
		t.Fatalf("create at 2.1 without networks: %v", err)
	}
	ok, err := servers.Create(ctx, c90, servers.CreateOpts{Name: "ok-new", ImageRef: imageID, FlavorRef: "1",
		Networks: []servers.Network{{UUID: netID}}, Metadata: map[string]string{"role": "web"}}, nil).Extract()
	if err != nil {
		t.Fatalf("create at 2.90: %v", err)
	}
	bad, err := servers.Create(ctx, c90, servers.CreateOpts{Name: "bad-1", ImageRef: imageID, FlavorRef: "1",
		Networks: "auto"}, nil).Extract()
	if err != nil {
		t.Fatalf("create bad: %v", err)
	}
	for _, id := range []string{okOld.ID, ok.ID} {
		if err := servers.WaitForStatus(ctx, c90, id, "ACTIVE"); err != nil {
			t.Fatalf("wait for %s ACTIVE: %v", id, err)
		}
	}
	if err := servers.WaitForStatus(ctx, c90, bad.ID, "ERROR"); err != nil {
		t.Fatalf("wait for %s ERROR: %v", bad.ID, err)
	}

	old, err := servers.Get(ctx, c21, okOld.ID).Extract()
	if err != nil {
		t.Fatalf("get at 2.1: %v", err)
	}
	if old.Flavor["id"] != "1" || old.Image["id"] != imageID || len(old.Addresses["provisioning"].([]any)) != 1 {
		t.Errorf("get at 2.1: flavor %v image %v addresses %v (omitted networks mean the first network)", old.Flavor, old.Image, old.Addresses)
	}
	got, err := servers.Get(ctx, c90, ok.ID).Extract()
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Status != "ACTIVE" || got.PowerState != servers.RUNNING || got.VmState != "active" || got.Progress != 100 ||
		got.Flavor["original_name"] != "bm.small" || got.Metadata["role"] != "web" || got.HypervisorHostname == "" ||
		got.LaunchedAt.IsZero() || got.Created.IsZero() || got.AvailabilityZone != "nova" {
		t.Errorf("get: %+v", got)
	}
	addr, _ := got.Addresses["provisioning"].([]any)
	if len(addr) != 1 || !strings.HasPrefix(addr[0].(map[string]any)["addr"].(string), "10.0.0.") ||
		addr[0].(map[string]any)["OS-EXT-IPS-MAC:mac_addr"] == "" {
		t.Errorf("addresses %v", got.Addresses)
	}

	failed, err := servers.Get(ctx, c90, bad.ID).Extract()
	if err != nil {
		t.Fatalf("get bad: %v", err)
	}
	if failed.Status != "ERROR" || failed.Fault.Code != 500 ||
		!strings.Contains(failed.Fault.Message, "was deleted while deploying (attempt 2 of 2") ||
		!strings.Contains(failed.Fault.Details, "attempt 1: node") {
		t.Errorf("failed server: status %s fault %+v", failed.Status, failed.Fault)
	}
	checkGophercloudEvents(ctx, t, c90, bad.ID)

	pages, err := servers.List(c90, servers.ListOpts{Name: "ok-"}).AllPages(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	named, err := servers.ExtractServers(pages)
	if err != nil || len(named) != 2 {
		t.Errorf("list name=ok-: %d servers (%v)", len(named), err)
	}
	if _, err := servers.Get(ctx, c90, "ok-new").Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("get by name: want 404, got %v", err)
	}

	fpages, err := flavors.ListDetail(c90, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
	if err != nil {
		t.Fatalf("flavors: %v", err)
	}
	fl, err := flavors.ExtractFlavors(fpages)
	if err != nil || len(fl) != 1 || fl[0].Name != "bm.small" || fl[0].VCPUs != 8 || fl[0].RAM != 16384 ||
		fl[0].ExtraSpecs["resources:CUSTOM_BAREMETAL"] != "1" {
		t.Errorf("flavors: %+v (%v)", fl, err)
	}
	specs, err := flavors.ListExtraSpecs(ctx, c21, "1").Extract()
	if err != nil || specs["resources:VCPU"] != "0" || specs["resources:MEMORY_MB"] != "0" || specs["resources:DISK_GB"] != "0" {
		t.Errorf("extra specs: %v (%v)", specs, err)
	}

	for _, id := range []string{okOld.ID, ok.ID, bad.ID} {
		if err := servers.Delete(ctx, c90, id).ExtractErr(); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	for _, id := range []string{okOld.ID, ok.ID, bad.ID} {
		err := gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
			_, err := servers.Get(ctx, c90, id).Extract()
			if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			t.Fatalf("wait for %s to be gone: %v", id, err)
		}
	}
	apages, err := instanceactions.List(c90, ok.ID, nil).AllPages(ctx)
	if err != nil {
		t.Fatalf("actions of a deleted server: %v", err)
	}
	acts, err := instanceactions.ExtractInstanceActions(apages)
	if err != nil || len(acts) != 2 {
		t.Errorf("actions of a deleted server: %+v (%v), want create and delete", acts, err)
	}
}

// checkGophercloudEvents: the failed build's create action has message
// Error and a finished, failed build event per attempt.
func checkGophercloudEvents(ctx context.Context, t *testing.T, c *gophercloud.ServiceClient, id string) {
	t.Helper()
	pages, err := instanceactions.List(c, id, nil).AllPages(ctx)
	if err != nil {
		t.Fatalf("actions: %v", err)
	}
	acts, err := instanceactions.ExtractInstanceActions(pages)
	if err != nil || len(acts) != 1 || acts[0].Action != "create" || acts[0].Message != "Error" {
		t.Fatalf("actions: %+v (%v)", acts, err)
	}
	detail, err := instanceactions.Get(ctx, c, id, acts[0].RequestID).Extract()
	if err != nil || detail.Events == nil {
		t.Fatalf("action detail: %+v (%v)", detail, err)
	}
	failures := 0
	for _, e := range *detail.Events {
		if e.Event != "compute__do_build_and_run_instance" {
			continue
		}
		if e.Result != "Error" || e.StartTime.IsZero() || e.FinishTime.IsZero() || e.Host == nil || *e.Host == "" {
			t.Errorf("build event not finished as a failure on a node: %+v", e)
			continue
		}
		failures++
	}
	// gophercloud's Event has no details member (2.84): the reasons are
	// checked through the fault and by the CLI test.
	if failures < 2 {
		t.Errorf("%d failed build events, want one per attempt: %+v", failures, *detail.Events)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("ran out of time")
	}
}
