package osc

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/instanceactions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/tags"
)

// TestGophercloudDay2 makes the day-2 calls with gophercloud's compute
// client, as Terraform does on a second run: reboot soft and hard, stop,
// start, rebuild, update, metadata, tags, list by tag and changes-since,
// lock, unlock, rescue, unrescue; and checks the instance actions.
func TestGophercloudDay2(t *testing.T) {
	a, url := startApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: url + "/v2.1/", Type: "compute", Microversion: "2.90"}
	driveCtx, stopDrive := context.WithCancel(ctx)
	defer stopDrive()
	go driveSim(driveCtx, a, c, "bad-")
	sv, err := servers.Create(ctx, c, servers.CreateOpts{Name: "gc-day2", ImageRef: a.Config.Images[0].ID, FlavorRef: "1", Networks: "auto"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	id := sv.ID
	if err := servers.WaitForStatus(ctx, c, id, "ACTIVE"); err != nil {
		t.Fatal(err)
	}
	since := time.Now().UTC().Add(-time.Second)
	rest := func(what, status string) *servers.Server {
		t.Helper()
		var got *servers.Server
		err := gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
			s, err := servers.Get(ctx, c, id).Extract()
			if err != nil {
				return false, err
			}
			if s.Status == "ERROR" {
				return false, fmt.Errorf("ERROR: %+v", s.Fault)
			}
			got = s
			return s.TaskState == "" && s.Status == status, nil
		})
		if err != nil {
			t.Fatalf("%s: waiting for %s: %v", what, status, err)
		}
		return got
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("reboot soft", servers.Reboot(ctx, c, id, servers.RebootOpts{Type: servers.SoftReboot}).ExtractErr())
	rest("reboot soft", "ACTIVE")
	must("reboot hard", servers.Reboot(ctx, c, id, servers.RebootOpts{Type: servers.HardReboot}).ExtractErr())
	rest("reboot hard", "ACTIVE")
	must("stop", servers.Stop(ctx, c, id).ExtractErr())
	if s := rest("stop", "SHUTOFF"); s.PowerState != servers.SHUTDOWN {
		t.Errorf("stopped: power state %v", s.PowerState)
	}
	if err := servers.Start(ctx, c, id).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if s := rest("start", "ACTIVE"); s.PowerState != servers.RUNNING {
		t.Errorf("started: power state %v", s.PowerState)
	}
	rb, err := servers.Rebuild(ctx, c, id, servers.RebuildOpts{ImageRef: a.Config.Images[0].ID, Name: "gc-rebuilt",
		Metadata: map[string]string{"role": "db"}}).Extract()
	if err != nil || rb.AdminPass == "" || rb.Name != "gc-rebuilt" || rb.Status != "REBUILD" {
		t.Fatalf("rebuild: %+v (%v)", rb, err)
	}
	rest("rebuild", "ACTIVE")

	host := "gc-host"
	up, err := servers.Update(ctx, c, id, servers.UpdateOpts{Name: "gc-renamed", Hostname: &host}).Extract()
	if err != nil || up.Name != "gc-renamed" {
		t.Fatalf("update: %+v (%v)", up, err)
	}
	md, err := servers.UpdateMetadata(ctx, c, id, servers.MetadataOpts{"team": "a"}).Extract()
	if err != nil || md["team"] != "a" || md["role"] != "db" {
		t.Errorf("update metadata: %v (%v)", md, err)
	}
	md, err = servers.ResetMetadata(ctx, c, id, servers.MetadataOpts{"only": "this", "tier": "web"}).Extract()
	if err != nil || len(md) != 2 {
		t.Errorf("reset metadata: %v (%v)", md, err)
	}
	must("delete metadatum", servers.DeleteMetadatum(ctx, c, id, "tier").ExtractErr())
	if one, err := servers.Metadatum(ctx, c, id, "only").Extract(); err != nil || one["only"] != "this" {
		t.Errorf("metadatum: %v (%v)", one, err)
	}
	if got, err := tags.ReplaceAll(ctx, c, id, tags.ReplaceAllOpts{Tags: []string{"red", "blue"}}).Extract(); err != nil || !slices.Equal(got, []string{"blue", "red"}) {
		t.Errorf("replace tags: %v (%v)", got, err)
	}
	must("add tag", tags.Add(ctx, c, id, "green").ExtractErr())
	must("delete tag", tags.Delete(ctx, c, id, "red").ExtractErr())
	if has, err := tags.Check(ctx, c, id, "green").Extract(); err != nil || !has {
		t.Errorf("check tag: %v (%v)", has, err)
	}
	if got, err := tags.List(ctx, c, id).Extract(); err != nil || !slices.Equal(got, []string{"blue", "green"}) {
		t.Errorf("list tags: %v (%v)", got, err)
	}
	for _, opts := range []servers.ListOpts{{Tags: "blue,green"}, {ChangesSince: since.Format(time.RFC3339)}} {
		pages, err := servers.List(c, opts).AllPages(ctx)
		must("list", err)
		list, _ := servers.ExtractServers(pages)
		if len(list) != 1 || list[0].ID != id {
			t.Errorf("list %+v: %d servers", opts, len(list))
		}
	}
	if pages, err := servers.List(c, servers.ListOpts{NotTagsAny: "green"}).AllPages(ctx); err == nil {
		if list, _ := servers.ExtractServers(pages); len(list) != 0 {
			t.Errorf("list not-tags-any=green: %d servers", len(list))
		}
	}

	must("lock", servers.Lock(ctx, c, id).ExtractErr())
	if s, _ := servers.Get(ctx, c, id).Extract(); s.Locked == nil || !*s.Locked {
		t.Errorf("after lock: locked %v", s.Locked)
	}
	must("unlock", servers.Unlock(ctx, c, id).ExtractErr())
	pw, err := servers.Rescue(ctx, c, id, servers.RescueOpts{AdminPass: "let-me-in"}).Extract()
	if err != nil || pw != "let-me-in" {
		t.Fatalf("rescue: %q (%v)", pw, err)
	}
	rest("rescue", "RESCUE")
	must("unrescue", servers.Unrescue(ctx, c, id).ExtractErr())
	rest("unrescue", "ACTIVE")

	pages, err := instanceactions.List(c, id, nil).AllPages(ctx)
	must("actions", err)
	acts, _ := instanceactions.ExtractInstanceActions(pages)
	var names []string
	for _, a := range acts {
		names = append(names, a.Action)
	}
	want := []string{"unrescue", "rescue", "unlock", "lock", "rebuild", "start", "stop", "reboot", "reboot", "create"}
	if !slices.Equal(names, want) {
		t.Errorf("instance actions %v, want %v", names, want)
	}
	must("delete", servers.Delete(ctx, c, id).ExtractErr())
}
