package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/instanceactions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// TestGophercloudRoundTrip drives the API with gophercloud's compute client,
// as Terraform and the ingot CLI do.
func TestGophercloudRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: f.url + "/v2.1/",
		Type: "compute", Microversion: "2.90"}

	created, err := servers.Create(ctx, c, servers.CreateOpts{
		Name: "gc1", ImageRef: imageID, FlavorRef: "1",
		Networks: []servers.Network{{UUID: netID}}, Metadata: map[string]string{"k": "v"},
		UserData: []byte("#cloud-config\n"), Hostname: "gc1",
	}, nil).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := servers.Get(ctx, c, created.ID).Extract()
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Name != "gc1" || got.Status != "BUILD" || got.TaskState != "scheduling" || got.Metadata["k"] != "v" ||
		got.Image["id"] != imageID || got.Flavor["original_name"] != "bm.small" || got.AvailabilityZone != "nova" ||
		!got.ConfigDrive || got.Hostname == nil || *got.Hostname != "gc1" {
		t.Errorf("get: %+v", got)
	}

	f.advance(created.ID, func(s *lifecycle.Server) {
		s.Phase, s.NodeID, s.LaunchedAt = lifecycle.PhaseActive, "node-1", f.clock.Now()
	})
	pages, err := servers.List(c, servers.ListOpts{Name: "gc"}).AllPages(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	if len(all) != 1 || all[0].ID != created.ID || all[0].Status != "ACTIVE" || all[0].PowerState != servers.RUNNING ||
		all[0].HypervisorHostname != "node-1" || all[0].LaunchedAt.IsZero() {
		t.Errorf("list: %+v", all)
	}

	fpages, err := flavors.ListDetail(c, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
	if err != nil {
		t.Fatalf("flavors: %v", err)
	}
	fl, err := flavors.ExtractFlavors(fpages)
	if err != nil || len(fl) != 2 || fl[1].Name != "bm.large" || fl[1].VCPUs != 32 || fl[1].ExtraSpecs["trait:CUSTOM_GPU"] != "required" {
		t.Errorf("flavors: %+v (%v)", fl, err)
	}

	if err := servers.Delete(ctx, c, created.ID).ExtractErr(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	got, err = servers.Get(ctx, c, created.ID).Extract()
	if err != nil || got.Status != "ACTIVE" || got.VmState != "active" || got.TaskState != "deleting" {
		t.Errorf("after delete: %+v (%v)", got, err)
	}
	f.advance(created.ID, func(s *lifecycle.Server) { s.Phase, s.NodeID = lifecycle.PhaseDeleted, "" })
	_, err = servers.Get(ctx, c, created.ID).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("after delete done: want 404, got %v", err)
	}

	apages, err := instanceactions.List(c, created.ID, nil).AllPages(ctx)
	if err != nil {
		t.Fatalf("actions: %v", err)
	}
	acts, err := instanceactions.ExtractInstanceActions(apages)
	if err != nil || len(acts) != 2 {
		t.Fatalf("actions: %+v (%v)", acts, err)
	}
	detail, err := instanceactions.Get(ctx, c, created.ID, acts[len(acts)-1].RequestID).Extract()
	if err != nil || detail.Events == nil || len(*detail.Events) == 0 {
		t.Errorf("action detail: %+v (%v)", detail, err)
	}
}
