package storetest

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// testVolumeAttachment: SetVolumeAttachment records the holder's Cinder
// attachment and node, refuses a server that does not hold the volume,
// and a release forgets them (a stranded volume keeps them: its
// attachment is still on the node another instance holds).
func testVolumeAttachment(t *testing.T, st store.Store) {
	mustCreateVolume(t, st, "va-1")
	mustCreateVolume(t, st, "va-2")
	s := MinimalServer("sa", T0)
	s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "va-1", BootIndex: 0}, {ID: "va-2", BootIndex: -1}}
	mustCreate(t, st, s)
	if err := st.SetVolumeAttachment(ctx(t), "va-1", "sa", "att-1", "node-1"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "SetVolumeAttachment by a server that does not hold it",
		st.SetVolumeAttachment(ctx(t), "va-1", "other", "att-x", "node-x"), store.ErrNotFound)
	v, err := st.GetVolume(ctx(t), "va-1")
	if err != nil || v.AttachmentID != "att-1" || v.AttachmentNode != "node-1" {
		t.Fatalf("after SetVolumeAttachment: %+v, %v", v, err)
	}
	if err := st.SetVolumeAttachment(ctx(t), "va-2", "sa", "att-2", "node-1"); err != nil {
		t.Fatal(err)
	}
	v2, _ := st.GetVolume(ctx(t), "va-2")
	v2.Status, v2.NodeID, v2.StatusReason = store.VolumeError, "node-1", "stranded"
	if err := st.UpdateVolume(ctx(t), v2); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"va-1", "va-2"} {
		if err := st.ReleaseVolume(ctx(t), id, "sa", false); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := st.GetVolume(ctx(t), "va-1"); v.AttachmentID != "" || v.AttachmentNode != "" || v.Status != store.VolumeAvailable {
		t.Fatalf("released volume keeps its attachment: %+v", v)
	}
	if v, _ := st.GetVolume(ctx(t), "va-2"); v.AttachmentID != "att-2" || v.Status != store.VolumeError {
		t.Fatalf("stranded volume after release: %+v", v)
	}
}

// testAttachReserves: an UpdateServer that records an attach (a new OpGen
// of kind attach_volume) holds its volume in the same write; a volume held
// elsewhere (ErrVolumeInUse) or unknown (ErrNotFound) aborts it with
// nothing written; a write that records no attach reserves nothing, and
// a changed delete_on_termination reaches the registry.
func testAttachReserves(t *testing.T, st store.Store) {
	free := mustCreateVolume(t, st, "vr-free")
	taken := mustCreateVolume(t, st, "vr-taken")
	other := MinimalServer("sr-other", T0)
	other.Spec.Volumes = []lifecycle.VolumeRef{{ID: "vr-taken", BootIndex: -1}}
	mustCreate(t, st, other)
	s := MinimalServer("sr", T0)
	mustCreate(t, st, s)
	attach := func(vol string) error {
		_, err := st.UpdateServer(ctx(t), "sr", nil, func(s *lifecycle.Server) error {
			s.Spec.Volumes = append(s.Spec.Volumes, lifecycle.VolumeRef{ID: vol, BootIndex: -1, DeleteOnTermination: true})
			s.Op = lifecycle.Op{Kind: lifecycle.OpAttachVolume, VolumeID: vol}
			s.OpGen++
			s.UpdatedAt = T0.Add(time.Minute)
			return nil
		})
		return err
	}
	wantErr(t, "attach of a held volume", attach("vr-taken"), store.ErrVolumeInUse)
	wantErr(t, "attach of an unknown volume", attach("vr-nope"), store.ErrNotFound)
	if got := mustGet(t, st, "sr"); got.OpGen != 0 || len(got.Spec.Volumes) != 0 {
		t.Fatalf("a refused attach wrote the server: op %+v, volumes %+v", got.Op, got.Spec.Volumes)
	}
	requireVolume(t, st, held(taken, "sr-other", -1, false, other.CreatedAt))
	if err := attach("vr-free"); err != nil {
		t.Fatal(err)
	}
	requireVolume(t, st, held(free, "sr", -1, true, T0.Add(time.Minute)))
	// A later write with the same Op records no new attach; one that
	// changes a listed volume's delete_on_termination writes the registry's.
	if _, err := st.UpdateServer(ctx(t), "sr", nil, func(s *lifecycle.Server) error {
		s.Name, s.Spec.Volumes[0].DeleteOnTermination = "renamed", false
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, err := st.GetVolume(ctx(t), "vr-free"); err != nil || v.DeleteOnTermination || v.ServerID != "sr" {
		t.Errorf("after the flag's change: %+v, %v", v, err)
	}
}
