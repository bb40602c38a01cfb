package cinder_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/poll"
)

// checkSnapshots: a volume's metadata, type and zone as Cinder answers them;
// a snapshot of it, listed to its project only, deleted; unknown ids
// classified.
// Real Cinder only: the simulator has no snapshots.
func checkSnapshots(t *testing.T, b backend) {
	c := b.client(t, "member-a", false)
	ctx := t.Context()
	v, err := c.CreateVolume(ctx, cinder.VolumeSpec{SizeGB: 1, Name: "t-snap", Metadata: map[string]string{"Type": "work"}})
	if err != nil {
		t.Fatal(err)
	}
	v = waitStatus(t, c, v.ID, "available")
	t.Cleanup(func() { _ = c.DeleteVolume(ctx, v.ID) })
	if v.Metadata["Type"] != "work" || v.VolumeType == "" || v.AvailabilityZone == "" {
		t.Errorf("volume's metadata %v, type %q, zone %q", v.Metadata, v.VolumeType, v.AvailabilityZone)
	}
	s, err := c.CreateSnapshot(ctx, cinder.SnapshotSpec{VolumeID: v.ID, Name: "s1", Description: "d1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.VolumeID != v.ID || s.Name != "s1" || s.Description != "d1" || s.SizeGB != 1 || s.CreatedAt.IsZero() {
		t.Fatalf("snapshot: %+v", s)
	}
	poll.Until(t, time.Minute, "snapshot available", func() (bool, string) {
		got, err := c.GetSnapshot(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status == "available", got.Status
	})
	has := func(ss []cinder.Snapshot) bool {
		for _, x := range ss {
			if x.ID == s.ID {
				return true
			}
		}
		return false
	}
	if ss, err := c.ListSnapshots(ctx); err != nil || !has(ss) {
		t.Fatalf("list: %v %+v", err, ss)
	}
	other := b.client(t, "member-b", false)
	if ss, err := other.ListSnapshots(ctx); err != nil || has(ss) {
		t.Fatalf("another project lists it: %v %+v", err, ss)
	}
	_, err = other.GetSnapshot(ctx, s.ID)
	wantErr(t, "another project's snapshot", err, cinder.ErrSnapshotNotFound)
	_, err = other.CreateSnapshot(ctx, cinder.SnapshotSpec{VolumeID: v.ID})
	wantErr(t, "a snapshot of another project's volume", err, cinder.ErrVolumeNotFound)
	_, err = c.GetSnapshot(ctx, uuid.NewString())
	wantErr(t, "get a missing snapshot", err, cinder.ErrSnapshotNotFound)
	wantErr(t, "delete a missing snapshot", c.DeleteSnapshot(ctx, uuid.NewString()), cinder.ErrSnapshotNotFound)
	if err := c.DeleteSnapshot(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, "the deleted snapshot gone", func() (bool, string) {
		_, err := c.GetSnapshot(ctx, s.ID)
		return errors.Is(err, cinder.ErrSnapshotNotFound), fmt.Sprint(err)
	})
}
