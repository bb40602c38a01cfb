package cinder_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestAgainstRealCinder runs the adapter's checks on one real Cinder
// (starting one costs ~30 s and 700 MiB: the checks share it).
func TestAgainstRealCinder(t *testing.T) {
	b := realBackend(t)
	t.Run("Snapshots", func(t *testing.T) { checkSnapshots(t, b) })
	runAdapterChecks(t, b)
}

// TestAgainstSim runs the same checks on the simulator.
func TestAgainstSim(t *testing.T) {
	runAdapterChecks(t, simBackend(t))
}

// runAdapterChecks is the adapter's contract, for every backend. The
// compute call-back check registers a compute endpoint: it runs last.
func runAdapterChecks(t *testing.T, b backend) {
	checks := []struct {
		name string
		f    func(*testing.T, backend)
	}{
		{"VolumeLifecycle", checkVolumeLifecycle},
		{"Tokens", checkTokens},
		{"AttachAsNova", checkAttachAsNova},
		{"SecondServerRefused", checkSecondServerRefused},
		{"RetryFindsAttachment", checkRetryFindsAttachment},
		{"DeleteInUseRefused", checkDeleteInUseRefused},
		{"DuplicateConnector", checkDuplicateConnector},
		{"ComputeCallBack", checkComputeCallBack},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.f(t, b) })
	}
}

var connector = cinder.Connector{Initiator: "iqn.2026-12.io.ingot:node-1", Host: "ingot", Platform: "x86_64", Mountpoint: "/dev/sda"}

// waitStatus polls the volume until it has status want (an error status
// or a minute fails the test).
func waitStatus(t *testing.T, c *cinder.Client, id, want string) cinder.Volume {
	t.Helper()
	ctx := t.Context()
	var v cinder.Volume
	poll.Until(t, time.Minute, "volume "+id+" "+want, func() (bool, string) {
		var err error
		if v, err = c.GetVolume(ctx, id); err != nil {
			t.Fatalf("volume %s: %v", id, err)
		}
		if v.Status == "error" && want != "error" {
			t.Fatalf("volume %s is error, want %s", id, want)
		}
		return v.Status == want, v.Status
	})
	return v
}

func newVolume(t *testing.T, c *cinder.Client) cinder.Volume {
	t.Helper()
	v, err := c.CreateVolume(t.Context(), cinder.VolumeSpec{SizeGB: 1, Name: "t-" + t.Name()})
	if err != nil {
		t.Fatalf("create volume: %v", err)
	}
	return waitStatus(t, c, v.ID, "available")
}

// attach does Nova's three steps and returns the completed attachment.
func attach(t *testing.T, c *cinder.Client, volumeID, serverID string) cinder.Attachment {
	t.Helper()
	ctx := t.Context()
	a, err := c.CreateAttachment(ctx, volumeID, serverID, nil)
	if err != nil {
		t.Fatalf("create attachment: %v", err)
	}
	if a, err = c.UpdateAttachment(ctx, a.ID, connector); err != nil {
		t.Fatalf("update attachment: %v", err)
	}
	if err := c.CompleteAttachment(ctx, a.ID); err != nil {
		t.Fatalf("complete attachment: %v", err)
	}
	return a
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
	t.Logf("%s: %v", what, err)
}

func checkVolumeLifecycle(t *testing.T, b backend) {
	c := b.client(t, "member-a", true)
	ctx := t.Context()
	v := newVolume(t, c)
	if v.SizeGB != 1 || v.Name != "t-"+t.Name() || v.Bootable {
		t.Fatalf("volume: %+v", v)
	}
	vs, err := c.ListVolumes(ctx)
	if err != nil || !hasVolume(vs, v.ID) {
		t.Fatalf("list: %v %+v", err, vs)
	}
	other, err := b.client(t, "member-b", true).ListVolumes(ctx)
	if err != nil || hasVolume(other, v.ID) {
		t.Fatalf("another project lists it: %v %+v", err, other)
	}
	if err := c.SetBootable(ctx, v.ID, true); err != nil {
		t.Fatal(err)
	}
	if v, err = c.GetVolume(ctx, v.ID); err != nil || !v.Bootable {
		t.Fatalf("after set bootable: %v %+v", err, v)
	}
	if err := c.DeleteVolume(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, "the deleted volume gone", func() (bool, string) {
		_, err := c.GetVolume(ctx, v.ID)
		return errors.Is(err, cinder.ErrVolumeNotFound), fmt.Sprint(err)
	})
	wantErr(t, "get a missing volume", func() error { _, err := c.GetVolume(ctx, uuid.NewString()); return err }(), cinder.ErrVolumeNotFound)
	wantErr(t, "delete a missing volume", c.DeleteVolume(ctx, uuid.NewString()), cinder.ErrVolumeNotFound)
	_, err = c.CreateVolume(ctx, cinder.VolumeSpec{SizeGB: -1})
	wantErr(t, "create with a negative size", err, cinder.ErrBadRequest)
	var ce *cinder.Error
	if !errors.As(err, &ce) || ce.Status != 400 || ce.Message == "" {
		t.Fatalf("Cinder's message is lost: %#v", err)
	}
	// No image service knows this image (the real Cinder here has no Glance).
	_, err = c.CreateVolume(ctx, cinder.VolumeSpec{SizeGB: 1, ImageID: uuid.NewString()})
	wantErr(t, "create from an unknown image", err, cinder.ErrImageNotUsable)
}

// checkTokens: a token Keystone does not know is ErrUnauthorized, with or
// without a service token; a volume of another project is not found.
func checkTokens(t *testing.T, b backend) {
	ctx := t.Context()
	v := newVolume(t, b.client(t, "member-a", true))
	for _, cfg := range []cinder.Config{
		{Endpoint: b.endpoint, User: cinder.StaticToken("not-a-token")},
		{Endpoint: b.endpoint, User: cinder.StaticToken("not-a-token"), Service: cinder.StaticToken("not-either")},
	} {
		c, err := cinder.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetVolume(ctx, v.ID)
		wantErr(t, "a made-up token", err, cinder.ErrUnauthorized)
	}
	_, err := b.client(t, "member-b", true).GetVolume(ctx, v.ID)
	wantErr(t, "another project's volume", err, cinder.ErrVolumeNotFound)
}

func hasVolume(vs []cinder.Volume, id string) bool {
	for _, v := range vs {
		if v.ID == id {
			return true
		}
	}
	return false
}

func checkAttachAsNova(t *testing.T, b backend) {
	c := b.client(t, "member-a", true)
	ctx := t.Context()
	v := newVolume(t, c)
	server := uuid.NewString()
	a, err := c.CreateAttachment(ctx, v.ID, server, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "reserved" || a.ServerID != server || a.VolumeID != v.ID || len(a.ConnectionInfo.Data) != 0 {
		t.Fatalf("attachment without connector: %+v", a)
	}
	waitStatus(t, c, v.ID, "reserved")
	if a, err = c.UpdateAttachment(ctx, a.ID, connector); err != nil {
		t.Fatal(err)
	}
	d := a.ConnectionInfo.Data
	if a.ConnectionInfo.DriverVolumeType != "iscsi" || d["target_iqn"] != "iqn.2010-10.org.openstack:volume-"+v.ID ||
		d["target_portal"] != "127.0.0.1:3260" || d["target_lun"] != float64(0) || d["auth_method"] != "CHAP" {
		t.Fatalf("connection info: %+v", a.ConnectionInfo)
	}
	// Nova's form: the driver's data alone (what an Ironic volume target's
	// properties take).
	for _, k := range []string{"driver_volume_type", "attachment_id"} {
		if _, ok := d[k]; ok {
			t.Fatalf("connection info data carries %s: %+v", k, d)
		}
	}
	waitStatus(t, c, v.ID, "attaching")
	if err := c.CompleteAttachment(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	v = waitStatus(t, c, v.ID, "in-use")
	if len(v.Attachments) != 1 || v.Attachments[0].ServerID != server || v.Attachments[0].AttachmentID != a.ID {
		t.Fatalf("in-use volume's attachments: %+v", v.Attachments)
	}
	if err := c.DeleteAttachment(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, v.ID, "available")
	_, err = c.GetAttachment(ctx, a.ID)
	wantErr(t, "get a deleted attachment", err, cinder.ErrAttachmentNotFound)
	wantErr(t, "delete a deleted attachment", c.DeleteAttachment(ctx, a.ID), cinder.ErrAttachmentNotFound)
	wantErr(t, "complete a missing attachment", c.CompleteAttachment(ctx, uuid.NewString()), cinder.ErrAttachmentNotFound)
	_, err = c.CreateAttachment(ctx, uuid.NewString(), server, nil)
	wantErr(t, "attach a missing volume", err, cinder.ErrVolumeNotFound)
}

func checkSecondServerRefused(t *testing.T, b backend) {
	c := b.client(t, "member-a", true)
	v := newVolume(t, c)
	attach(t, c, v.ID, uuid.NewString())
	waitStatus(t, c, v.ID, "in-use")
	_, _, err := c.EnsureAttachment(t.Context(), v.ID, uuid.NewString())
	wantErr(t, "a second server's attachment", err, cinder.ErrVolumeNotAvailable)
}

// checkRetryFindsAttachment: the step re-run after a crash between
// Cinder's answer and ingot's record finds the attachment it made.
func checkRetryFindsAttachment(t *testing.T, b backend) {
	c := b.client(t, "member-a", true)
	ctx := t.Context()
	v := newVolume(t, c)
	server := uuid.NewString()
	b.calls.take()
	first, created, err := c.EnsureAttachment(ctx, v.ID, server)
	if err != nil || !created {
		t.Fatalf("first: %v created=%v", err, created)
	}
	if _, err := c.UpdateAttachment(ctx, first.ID, connector); err != nil {
		t.Fatal(err)
	}
	if err := c.CompleteAttachment(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	// One attach: list (none yet), create, update, complete.
	if calls := b.calls.take(); len(calls) != 4 {
		t.Fatalf("an attach took %d calls: %v", len(calls), calls)
	} else {
		t.Logf("an attach: %v", calls)
	}
	// The crash: the answer is lost; the step runs again.
	again, created, err := c.EnsureAttachment(ctx, v.ID, server)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("retry: %v created=%v %s vs %s", err, created, again.ID, first.ID)
	}
	all, err := c.ListAttachments(ctx, server, "")
	if err != nil || len(all) != 1 || all[0].Status != "attached" || all[0].ConnectionInfo.Data["target_lun"] != float64(0) {
		t.Fatalf("attachments of the server: %v %+v", err, all)
	}
	// Another server's attachments are not this one's.
	none, err := c.ListAttachments(ctx, uuid.NewString(), v.ID)
	if err != nil || len(none) != 0 {
		t.Fatalf("attachments of another server: %v %+v", err, none)
	}
}

func checkDeleteInUseRefused(t *testing.T, b backend) {
	c := b.client(t, "member-a", true)
	v := newVolume(t, c)
	a := attach(t, c, v.ID, uuid.NewString())
	waitStatus(t, c, v.ID, "in-use")
	wantErr(t, "delete an in-use volume", c.DeleteVolume(t.Context(), v.ID), cinder.ErrVolumeNotAvailable)
	if err := c.DeleteAttachment(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, v.ID, "available")
	if err := c.DeleteVolume(t.Context(), v.ID); err != nil {
		t.Fatalf("delete once detached: %v", err)
	}
}

// checkDuplicateConnector: a second attachment of the same server (which
// Cinder allows) cannot be connected while the first is.
func checkDuplicateConnector(t *testing.T, b backend) {
	c := b.client(t, "member-a", true)
	ctx := t.Context()
	v := newVolume(t, c)
	server := uuid.NewString()
	attach(t, c, v.ID, server)
	waitStatus(t, c, v.ID, "in-use")
	second, err := c.CreateAttachment(ctx, v.ID, server, nil)
	if err != nil {
		t.Fatalf("the same server's second attachment: %v", err)
	}
	_, err = c.UpdateAttachment(ctx, second.ID, connector)
	wantErr(t, "connect the second attachment", err, cinder.ErrDuplicateConnector)
	all, err := c.ListAttachments(ctx, server, v.ID)
	if err != nil || len(all) != 2 {
		t.Fatalf("attachments: %v %+v", err, all)
	}
}

// checkComputeCallBack: a user's token alone makes Cinder ask the
// catalog's compute endpoint about a connected attachment; the service
// token spares the question.
func checkComputeCallBack(t *testing.T, b backend) {
	user := b.client(t, "member-a", false)
	svc := b.client(t, "member-a", true)
	ctx := context.Background()
	v := newVolume(t, svc)
	a := attach(t, svc, v.ID, uuid.NewString())
	wantErr(t, "user-token delete, no compute endpoint", user.DeleteAttachment(ctx, a.ID), cinder.ErrComputeRefused)
	if err := svc.DeleteAttachment(ctx, a.ID); err != nil {
		t.Fatalf("with a service token: %v", err)
	}
	waitStatus(t, svc, v.ID, "available")

	compute, url := startFakeCompute(t)
	b.registerCompute(t, url)
	a = attach(t, svc, v.ID, uuid.NewString())
	compute.set(a.ID)
	wantErr(t, "user-token delete, compute uses it", user.DeleteAttachment(ctx, a.ID), cinder.ErrComputeRefused)
	if len(compute.seen()) == 0 {
		t.Fatal("Cinder did not call the compute endpoint")
	}
	compute.set("")
	if err := user.DeleteAttachment(ctx, a.ID); err != nil {
		t.Fatalf("user-token delete, compute knows nothing: %v", err)
	}
	t.Logf("compute endpoint saw %v", compute.seen())
	waitStatus(t, svc, v.ID, "available")
}
