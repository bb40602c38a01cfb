package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func sameVolume(a, b store.Volume) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) {
		return false
	}
	a.CreatedAt, a.UpdatedAt, b.CreatedAt, b.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

func requireVolume(t *testing.T, st store.Store, want store.Volume) {
	t.Helper()
	got, err := st.GetVolume(ctx(t), want.ID)
	if err != nil {
		t.Fatalf("GetVolume(%s): %v", want.ID, err)
	}
	if !sameVolume(got, want) {
		t.Fatalf("volume %s\n got: %+v\nwant: %+v", want.ID, got, want)
	}
}

func volumeIDs(vs []store.Volume) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return strings.Join(out, ",")
}

func mustCreateVolume(t *testing.T, st store.Store, id string) store.Volume {
	t.Helper()
	v := store.NewVolume(id, "name-"+id, 10, "", T0)
	if err := st.CreateVolume(ctx(t), v); err != nil {
		t.Fatalf("CreateVolume(%s): %v", id, err)
	}
	return v
}

// held is v as reserved by server with that boot index and deletion flag.
func held(v store.Volume, server string, boot int, dot bool, at time.Time) store.Volume {
	v.Status, v.ServerID, v.BootIndex, v.DeleteOnTermination, v.UpdatedAt = store.VolumeReserved, server, boot, dot, at
	return v
}

func testVolumes(t *testing.T, st store.Store) {
	var all []store.Volume
	for _, id := range []string{"v3", "v1", "v5", "v2", "v4"} {
		all = append(all, mustCreateVolume(t, st, id))
	}
	v1 := all[1]
	if v1.TargetIQN != "iqn.2026-11.io.ingot:volume-v1" || v1.TargetLUN != 0 || v1.TargetPortal != store.DefaultTargetPortal {
		t.Fatalf("NewVolume target = %q %d %q", v1.TargetIQN, v1.TargetLUN, v1.TargetPortal)
	}
	requireVolume(t, st, v1)
	got, _ := st.GetVolume(ctx(t), "v1")
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt read back in %v, want UTC", got.CreatedAt.Location())
	}

	// Holder fields given to CreateVolume are not stored: a new volume is free.
	odd := store.NewVolume("v6", "odd", 1, "10.0.0.1:3260", T0)
	odd.Status, odd.ServerID, odd.NodeID, odd.BootIndex, odd.StatusReason = store.VolumeInUse, "s1", "n1", 0, "x"
	if err := st.CreateVolume(ctx(t), odd); err != nil {
		t.Fatal(err)
	}
	requireVolume(t, st, store.NewVolume("v6", "odd", 1, "10.0.0.1:3260", T0))

	// The image a volume was made from is kept.
	fromImage := store.NewVolume("v7", "root", 2, "", T0)
	fromImage.ImageID = "img-1"
	if err := st.CreateVolume(ctx(t), fromImage); err != nil {
		t.Fatal(err)
	}
	requireVolume(t, st, fromImage)
	if err := st.DeleteVolume(ctx(t), "v7"); err != nil {
		t.Fatal(err)
	}

	wantErr(t, "CreateVolume duplicate", st.CreateVolume(ctx(t), store.NewVolume("v1", "again", 1, "", T0)), store.ErrExists)
	if err := st.CreateVolume(ctx(t), store.NewVolume("v0", "zero", 0, "", T0)); err == nil {
		t.Fatal("CreateVolume of 0 GB succeeded")
	}
	_, err := st.GetVolume(ctx(t), "nope")
	wantErr(t, "GetVolume unknown", err, store.ErrNotFound)

	// Keyset paging by id.
	var pages []string
	after := ""
	for {
		page, err := st.ListVolumes(ctx(t), after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 2 {
			t.Fatalf("ListVolumes limit 2 gave %d", len(page))
		}
		pages = append(pages, volumeIDs(page))
		after = page[len(page)-1].ID
	}
	if got := strings.Join(pages, "|"); got != "v1,v2|v3,v4|v5,v6" {
		t.Fatalf("pages %s, want v1,v2|v3,v4|v5,v6", got)
	}
	if page, err := st.ListVolumes(ctx(t), "", 0); err != nil || volumeIDs(page) != "v1,v2,v3,v4,v5,v6" {
		t.Fatalf("ListVolumes limit 0 = %s, %v", volumeIDs(page), err)
	}
	if page, err := st.ListVolumes(ctx(t), "v35", 1); err != nil || volumeIDs(page) != "v4" {
		t.Fatalf("ListVolumes after a missing id = %s, %v; want v4", volumeIDs(page), err)
	}

	if err := st.DeleteVolume(ctx(t), "v2"); err != nil {
		t.Fatal(err)
	}
	_, err = st.GetVolume(ctx(t), "v2")
	wantErr(t, "GetVolume after delete", err, store.ErrNotFound)
	wantErr(t, "DeleteVolume again", st.DeleteVolume(ctx(t), "v2"), store.ErrNotFound)
}

func testVolumeHolds(t *testing.T, st store.Store) {
	a, b, c := mustCreateVolume(t, st, "va"), mustCreateVolume(t, st, "vb"), mustCreateVolume(t, st, "vc")
	s := MinimalServer("s1", T0.Add(time.Minute))
	s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "vb", BootIndex: -1}, {ID: "va", BootIndex: 0, DeleteOnTermination: true}}
	mustCreate(t, st, s)
	a = held(a, "s1", 0, true, s.CreatedAt)
	b = held(b, "s1", -1, false, s.CreatedAt)
	requireVolume(t, st, a)
	requireVolume(t, st, b)
	requireVolume(t, st, c)
	if vs, err := st.ServerVolumes(ctx(t), "s1"); err != nil || volumeIDs(vs) != "va,vb" {
		t.Fatalf("ServerVolumes(s1) = %s, %v; want va,vb (boot volume first)", volumeIDs(vs), err)
	}
	on, err := st.VolumesOn(ctx(t), []string{"s2", "s1", "s3"})
	if err != nil || len(on) != 1 || volumeIDs(on["s1"]) != "va,vb" {
		t.Fatalf("VolumesOn(s2, s1, s3) = %v, %v; want s1: va,vb only", on, err)
	}
	if on, err := st.VolumesOn(ctx(t), nil); err != nil || len(on) != 0 {
		t.Fatalf("VolumesOn(nil) = %v, %v", on, err)
	}
	if vs, err := st.ServerVolumes(ctx(t), "s2"); err != nil || len(vs) != 0 {
		t.Fatalf("ServerVolumes(s2) = %s, %v; want none", volumeIDs(vs), err)
	}

	err = st.DeleteVolume(ctx(t), "va")
	wantErr(t, "DeleteVolume while held", err, store.ErrVolumeInUse)
	if !strings.Contains(err.Error(), "s1") {
		t.Errorf("DeleteVolume error %q does not name the holder s1", err)
	}
	requireVolume(t, st, a)

	// UpdateVolume: the holder's fields only, idempotent.
	up := a
	up.Status, up.NodeID, up.StatusReason, up.UpdatedAt = store.VolumeInUse, "node-1", "target created", T0.Add(time.Hour)
	up.Name, up.SizeGB, up.BootIndex = "ignored", 99, 7
	for range 2 {
		if err := st.UpdateVolume(ctx(t), up); err != nil {
			t.Fatalf("UpdateVolume: %v", err)
		}
	}
	a.Status, a.NodeID, a.StatusReason, a.UpdatedAt = up.Status, up.NodeID, up.StatusReason, up.UpdatedAt
	requireVolume(t, st, a)
	other := up
	other.ServerID = "s2"
	wantErr(t, "UpdateVolume by another server", st.UpdateVolume(ctx(t), other), store.ErrNotFound)
	free := c
	free.Status, free.ServerID = store.VolumeInUse, ""
	wantErr(t, "UpdateVolume of a free volume", st.UpdateVolume(ctx(t), free), store.ErrNotFound)
	free.ServerID = "s1"
	wantErr(t, "UpdateVolume of a volume s1 does not hold", st.UpdateVolume(ctx(t), free), store.ErrNotFound)
	ghost := up
	ghost.ID = "nope"
	wantErr(t, "UpdateVolume unknown", st.UpdateVolume(ctx(t), ghost), store.ErrNotFound)
	bad := up
	bad.Status = store.VolumeAvailable
	if err := st.UpdateVolume(ctx(t), bad); err == nil {
		t.Fatal("UpdateVolume to available succeeded (ReleaseVolume frees volumes)")
	}
	requireVolume(t, st, a)
	requireVolume(t, st, c)

	// ReleaseVolume: only the holder's release counts, and repeats are no-ops.
	if err := st.ReleaseVolume(ctx(t), "vb", "s2", false); err != nil {
		t.Fatalf("ReleaseVolume by a non-holder: %v", err)
	}
	if err := st.ReleaseVolume(ctx(t), "vb", "s2", true); err != nil {
		t.Fatalf("ReleaseVolume(destroy) by a non-holder: %v", err)
	}
	requireVolume(t, st, b)
	for range 2 {
		if err := st.ReleaseVolume(ctx(t), "vb", "s1", false); err != nil {
			t.Fatalf("ReleaseVolume: %v", err)
		}
	}
	got, err := st.GetVolume(ctx(t), "vb")
	if err != nil {
		t.Fatal(err)
	}
	want := store.NewVolume("vb", b.Name, b.SizeGB, "", T0)
	want.UpdatedAt = got.UpdatedAt
	if !sameVolume(got, want) || got.UpdatedAt.IsZero() {
		t.Fatalf("released volume\n got: %+v\nwant: %+v", got, want)
	}
	// A destroy by a server that does not hold the volume leaves it alone.
	if err := st.ReleaseVolume(ctx(t), "vc", "s1", true); err != nil {
		t.Fatal(err)
	}
	requireVolume(t, st, c)
	for range 2 {
		if err := st.ReleaseVolume(ctx(t), "va", "s1", true); err != nil {
			t.Fatalf("ReleaseVolume(destroy): %v", err)
		}
	}
	_, err = st.GetVolume(ctx(t), "va")
	wantErr(t, "GetVolume after a destroying release", err, store.ErrNotFound)
	if err := st.ReleaseVolume(ctx(t), "nope", "s1", false); err != nil {
		t.Fatalf("ReleaseVolume of an unknown volume: %v", err)
	}
	if vs, err := st.ServerVolumes(ctx(t), "s1"); err != nil || len(vs) != 0 {
		t.Fatalf("ServerVolumes(s1) after release = %s, %v", volumeIDs(vs), err)
	}
	if err := st.DeleteVolume(ctx(t), "vb"); err != nil {
		t.Fatalf("DeleteVolume after release: %v", err)
	}
}

// testVolumeStranded: a volume marked error (its target left on a node ingot
// may not touch) is neither freed nor destroyed by its server's release; it
// keeps its node and reason with no server, and can then be deleted.
func testVolumeStranded(t *testing.T, st store.Store) {
	mustCreateVolume(t, st, "vs")
	s := MinimalServer("s9", T0.Add(time.Minute))
	s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "vs", BootIndex: 0, DeleteOnTermination: true}}
	mustCreate(t, st, s)
	v, err := st.GetVolume(ctx(t), "vs")
	if err != nil {
		t.Fatal(err)
	}
	v.Status, v.NodeID, v.StatusReason = store.VolumeError, "node-x", "target left on node-x"
	if err := st.UpdateVolume(ctx(t), v); err != nil {
		t.Fatalf("UpdateVolume to error: %v", err)
	}
	for _, destroy := range []bool{true, false} {
		if err := st.ReleaseVolume(ctx(t), "vs", "s9", destroy); err != nil {
			t.Fatalf("ReleaseVolume(destroy=%v): %v", destroy, err)
		}
	}
	got, err := st.GetVolume(ctx(t), "vs")
	if err != nil {
		t.Fatalf("stranded volume destroyed: %v", err)
	}
	if got.Status != store.VolumeError || got.ServerID != "" || got.NodeID != "node-x" || got.StatusReason == "" {
		t.Fatalf("stranded volume after release: %+v", got)
	}
	// Never handed out again (I8): a create that asks for it is refused.
	s2 := MinimalServer("s10", T0.Add(2*time.Minute))
	s2.Spec.Volumes = []lifecycle.VolumeRef{{ID: "vs", BootIndex: -1}}
	wantErr(t, "CreateServer with a stranded volume", st.CreateServer(ctx(t), s2), store.ErrVolumeInUse)
	requireUntouched(t, st, "s10")
	if err := st.DeleteVolume(ctx(t), "vs"); err != nil {
		t.Fatalf("DeleteVolume of a stranded volume: %v", err)
	}
}

// requireUntouched checks that a refused CreateServer wrote nothing.
func requireUntouched(t *testing.T, st store.Store, server string, free ...store.Volume) {
	t.Helper()
	_, err := st.GetServer(ctx(t), server)
	wantErr(t, "GetServer after a refused create", err, store.ErrNotFound)
	_, err = st.Actions(ctx(t), server)
	wantErr(t, "Actions after a refused create", err, store.ErrNotFound)
	for _, v := range free {
		requireVolume(t, st, v)
	}
}

func testVolumesServer(t *testing.T, st store.Store) {
	boot, data, spare := mustCreateVolume(t, st, "v-boot"), mustCreateVolume(t, st, "v-data"), mustCreateVolume(t, st, "v-spare")
	s := FullServer("s1")
	s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v-boot", BootIndex: 0, DeleteOnTermination: true}, {ID: "v-data", BootIndex: -1}}
	s.VolumesReleased = false
	mustCreate(t, st, s)
	requireServer(t, mustGet(t, st, "s1"), s) // Spec.Volumes and the flags round-trip
	requireVolume(t, st, held(boot, "s1", 0, true, s.CreatedAt))
	requireVolume(t, st, held(data, "s1", -1, false, s.CreatedAt))

	// An unknown volume: ErrNotFound naming it, nothing written.
	s2 := MinimalServer("s2", T0)
	s2.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v-spare", BootIndex: 0}, {ID: "v-nope", BootIndex: -1}}
	err := st.CreateServer(ctx(t), s2)
	wantErr(t, "CreateServer with an unknown volume", err, store.ErrNotFound)
	if !strings.Contains(err.Error(), "v-nope") {
		t.Errorf("error %q does not name the unknown volume", err)
	}
	requireUntouched(t, st, "s2", spare)

	// A volume held by another server: ErrVolumeInUse naming volume and holder.
	s2.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v-spare", BootIndex: -1}, {ID: "v-data", BootIndex: -1}}
	err = st.CreateServer(ctx(t), s2)
	wantErr(t, "CreateServer with a held volume", err, store.ErrVolumeInUse)
	if !strings.Contains(err.Error(), "v-data") || !strings.Contains(err.Error(), "s1") {
		t.Errorf("error %q does not name the volume v-data and its holder s1", err)
	}
	requireUntouched(t, st, "s2", spare)

	// A volume listed twice is refused.
	s2.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v-spare", BootIndex: -1}, {ID: "v-spare", BootIndex: 0}}
	if err := st.CreateServer(ctx(t), s2); err == nil {
		t.Fatal("CreateServer listing a volume twice succeeded")
	}
	requireUntouched(t, st, "s2", spare)

	// A duplicate server id reserves nothing.
	dup := MinimalServer("s1", T0)
	dup.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v-spare", BootIndex: -1}}
	wantErr(t, "CreateServer duplicate with volumes", st.CreateServer(ctx(t), dup), store.ErrExists)
	requireVolume(t, st, spare)

	// Held volumes keep a stable failure in ServersNeedingWork until released.
	s.Phase, s.NodeID, s.PortsAllocated, s.VolumesOnNode = lifecycle.PhaseError, "", false, false
	s.OpDone = s.OpGen // an operation still pending keeps an ERROR server in the list until finished
	mustSave(t, st, s)
	if !slices.Contains(ids(mustNeedingWork(t, st)), "s1") {
		t.Fatal("ERROR server holding volumes is not in ServersNeedingWork")
	}
	s.VolumesReleased = true
	mustSave(t, st, s)
	if slices.Contains(ids(mustNeedingWork(t, st)), "s1") {
		t.Fatal("ERROR server that released its volumes is still in ServersNeedingWork")
	}
}

// testVolumeRace: concurrent creates claiming one volume; exactly one wins.
func testVolumeRace(t *testing.T, st store.Store) {
	const n = 8
	mustCreateVolume(t, st, "v-race")
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			s := MinimalServer(fmt.Sprintf("s%d", i), T0)
			s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v-race", BootIndex: 0}}
			<-start
			errs[i] = st.CreateServer(ctx(t), s)
		})
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		id := fmt.Sprintf("s%d", i)
		switch {
		case err == nil && winner != "":
			t.Fatalf("both %s and %s reserved v-race", winner, id)
		case err == nil:
			winner = id
		default:
			wantErr(t, "losing CreateServer", err, store.ErrVolumeInUse)
			_, gerr := st.GetServer(ctx(t), id)
			wantErr(t, "GetServer of a loser", gerr, store.ErrNotFound)
		}
	}
	if winner == "" {
		t.Fatal("no CreateServer reserved v-race")
	}
	v, err := st.GetVolume(ctx(t), "v-race")
	if err != nil || v.ServerID != winner || v.Status != store.VolumeReserved {
		t.Fatalf("v-race = %+v, %v; want reserved by %s", v, err, winner)
	}
}

// testVolumeMadeHeld: a volume a build made is inserted held by its
// server (reserved, with its boot index and flag), listed as the
// server's, a second insert of its id refused with ErrExists, and a
// server create naming volumes it makes reserves nothing for them.
func testVolumeMadeHeld(t *testing.T, st store.Store) {
	s := MinimalServer("sm", T0)
	s.Spec.Volumes = []lifecycle.VolumeRef{{BootIndex: 0, Source: lifecycle.SourceBlank, SizeGB: 1, DeleteOnTermination: true}}
	s.Made = []lifecycle.MadeVolume{{Index: 0, ID: "vm"}}
	s.VolumeToken = "tok"
	if err := st.CreateServer(ctx(t), s); err != nil {
		t.Fatalf("CreateServer with a volume to make: %v", err)
	}
	got := mustGet(t, st, "sm")
	if len(got.Made) != 1 || got.Made[0].ID != "vm" || got.VolumeToken != "tok" {
		t.Fatalf("made %+v, token %q do not round-trip", got.Made, got.VolumeToken)
	}
	v := store.NewVolume("vm", "ingot-sm-bdm-0", 1, "", T0)
	v.ServerID, v.BootIndex, v.DeleteOnTermination = "sm", 0, true
	if err := st.CreateHeldVolume(ctx(t), v); err != nil {
		t.Fatalf("CreateHeldVolume: %v", err)
	}
	requireVolume(t, st, held(v, "sm", 0, true, T0))
	if err := st.CreateHeldVolume(ctx(t), v); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second CreateHeldVolume: %v, want ErrExists", err)
	}
	if vs, err := st.ServerVolumes(ctx(t), "sm"); err != nil || volumeIDs(vs) != "vm" {
		t.Fatalf("ServerVolumes = %s, %v", volumeIDs(vs), err)
	}
	got.Made[0].Ready, got.VolumeToken = true, ""
	if err := st.SaveServer(ctx(t), got); err != nil {
		t.Fatal(err)
	}
	if again := mustGet(t, st, "sm"); !again.Made[0].Ready || again.VolumeToken != "" {
		t.Fatalf("SaveServer did not write made %+v, token %q", again.Made, again.VolumeToken)
	}
}
