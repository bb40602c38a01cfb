package reconciler

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// The volumes a build makes for its image→volume and blank→volume block
// devices (lifecycle/newvolumes.go). Each is looked up before it is made —
// by its deterministic id in the embedded registry, by its deterministic
// name in Cinder — so a crash or a lost answer between the create and the
// record of its id finds the volume made rather than making a second.

// madeVolumeNS is the namespace of the embedded registry's ids for the
// volumes builds make.
var madeVolumeNS = uuid.MustParse("6f1d1f0e-5b1a-4d8e-9a43-7f2a4b8e0c11")

// madeVolumeID is the embedded registry's id of the volume made for entry
// i of server's block devices: chosen before the create, so a retry finds it.
func madeVolumeID(server string, i int) string {
	return uuid.NewSHA1(madeVolumeNS, []byte(lifecycle.VolumeName(server, i))).String()
}

// createVolume makes (or finds, or reads) the volume of s.Spec.Volumes[i].
func (r *Reconciler) createVolume(ctx context.Context, s *lifecycle.Server, i int) lifecycle.Result {
	vols := s.Volumes()
	if i < 0 || i >= len(vols) || !vols[i].Made() {
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: fmt.Sprintf("block device %d is not one to make", i)}
	}
	if r.cinder != nil {
		return r.createCinderVolume(ctx, s, i)
	}
	ref := vols[i]
	id := ref.ID
	if id == "" {
		id = madeVolumeID(s.ID, i)
	}
	v, err := r.store.GetVolume(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) && ref.ID != "":
		return lifecycle.Result{Outcome: lifecycle.Gone, VolumeID: id, Message: fmt.Sprintf("volume %s no longer exists", id)}
	case errors.Is(err, store.ErrNotFound):
		row := store.NewVolumeAt(id, lifecycle.VolumeName(s.ID, i), ref.SizeGB, r.volPortal, r.volIQNPrefix, r.clock.Now())
		row.ProjectID, row.UserID, row.ImageID = s.ProjectID, s.UserID, ref.ImageID
		row.ServerID, row.BootIndex, row.DeleteOnTermination = s.ID, ref.BootIndex, ref.DeleteOnTermination
		if err := r.store.CreateHeldVolume(ctx, row); err != nil {
			return resultOf(err) // ErrExists: made meanwhile; read again next time
		}
		r.step("after:" + PointVolumeMade)
		return lifecycle.Result{Outcome: lifecycle.OK, VolumeID: id, VolumeReady: true}
	case err != nil:
		return resultOf(err)
	case v.ServerID != s.ID:
		return lifecycle.Result{Outcome: lifecycle.Rejected, VolumeID: id, Message: fmt.Sprintf("volume %s is held by server %q", id, v.ServerID)}
	}
	return lifecycle.Result{Outcome: lifecycle.OK, VolumeID: id, VolumeReady: true}
}

// PointVolumeMade is the step point right after the volume service made a
// block device's volume and before ingot recorded its id (crash tests
// kill the process there).
const PointVolumeMade = "volume-made"

// createCinderVolume is createVolume with Cinder: the volume recorded, or
// the one named for the entry in the server's project, or a new one made
// with the creating user's token (Cinder makes it in their project and
// reads the image as them); once available it is entered in the registry,
// held for the server, as the create does for an existing volume.
func (r *Reconciler) createCinderVolume(ctx context.Context, s *lifecycle.Server, i int) lifecycle.Result {
	ref, name := s.Volumes()[i], lifecycle.VolumeName(s.ID, i)
	var v cinder.Volume
	var err error
	if ref.ID != "" {
		v, err = r.cinder.GetVolume(ctx, ref.ID)
		if errors.Is(err, cinder.ErrVolumeNotFound) {
			return lifecycle.Result{Outcome: lifecycle.Gone, VolumeID: ref.ID, Message: fmt.Sprintf("volume %s no longer exists", ref.ID)}
		}
	} else {
		v, err = r.cinder.FindVolume(ctx, s.ProjectID, name)
		if errors.Is(err, cinder.ErrVolumeNotFound) {
			if s.VolumeToken == "" {
				return lifecycle.Result{Outcome: lifecycle.Rejected, Message: "no token of the creating user left to make volume " + name + " with"}
			}
			r.step("before:" + PointVolumeMade)
			v, err = r.cinder.CreateVolumeAs(ctx, s.VolumeToken, cinder.VolumeSpec{SizeGB: ref.SizeGB, Name: name,
				ImageID: ref.ImageID, Description: "block device " + fmt.Sprint(i) + " of server " + s.ID})
			if err != nil {
				return cinderResult(err)
			}
			r.step("after:" + PointVolumeMade)
			return lifecycle.Result{Outcome: lifecycle.OK, VolumeID: v.ID}
		}
	}
	if err != nil {
		return cinderResult(err)
	}
	switch v.Status {
	case "creating", "downloading":
		return lifecycle.Result{Outcome: lifecycle.OK, VolumeID: v.ID}
	case "available":
	default:
		return lifecycle.Result{Outcome: lifecycle.Rejected, VolumeID: v.ID, VolumeStatus: v.Status,
			Message: fmt.Sprintf("volume %s is %s", v.ID, v.Status)}
	}
	row := store.Volume{ID: v.ID, Name: v.Name, SizeGB: max(v.SizeGB, 1), ProjectID: v.ProjectID, UserID: s.UserID,
		ImageID: ref.ImageID, ServerID: s.ID, BootIndex: ref.BootIndex, DeleteOnTermination: ref.DeleteOnTermination,
		CreatedAt: r.clock.Now()}
	if err := r.store.CreateHeldVolume(ctx, row); errors.Is(err, store.ErrExists) {
		if cur, gerr := r.store.GetVolume(ctx, v.ID); gerr != nil || cur.ServerID != s.ID {
			return lifecycle.Result{Outcome: lifecycle.Rejected, VolumeID: v.ID, Message: fmt.Sprintf("volume %s is held by server %q", v.ID, cur.ServerID)}
		}
	} else if err != nil {
		return resultOf(err)
	}
	return lifecycle.Result{Outcome: lifecycle.OK, VolumeID: v.ID, VolumeReady: true}
}

// refOf is the block device of s that volume id stands for: recorded by
// id, or an embedded volume made for an entry whose id is not recorded
// yet (ok false: none).
func refOf(s *lifecycle.Server, id string) (lifecycle.VolumeRef, bool) {
	for i, ref := range s.Volumes() {
		if ref.ID == id || (ref.ID == "" && ref.Made() && madeVolumeID(s.ID, i) == id) {
			return ref, true
		}
	}
	return lifecycle.VolumeRef{}, false
}

// destroys reports whether the end of s's hold on registry volume v
// deletes it (lifecycle.Destroys; a volume no entry names keeps the
// registry's flag, on a delete only).
func destroys(s *lifecycle.Server, v store.Volume) bool {
	if ref, ok := refOf(s, v.ID); ok {
		return lifecycle.Destroys(s, ref)
	}
	return s.Desired == lifecycle.DesiredDeleted && v.DeleteOnTermination
}

// releaseUnmade ends s's part in the Cinder volumes of block devices not
// yet held in the registry (made, or maybe made, and not yet available):
// each that goes with the server is found (by id, else by name) and
// deleted — a volume still creating cannot be, so that waits — and the
// others are left to finish on their own, the user's.
func (r *Reconciler) releaseUnmade(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	for i, ref := range s.Volumes() {
		if !ref.Made() || ref.Ready || !lifecycle.Destroys(s, ref) {
			continue
		}
		var v cinder.Volume
		var err error
		if ref.ID != "" {
			v, err = r.cinder.GetVolume(ctx, ref.ID)
		} else {
			v, err = r.cinder.FindVolume(ctx, s.ProjectID, lifecycle.VolumeName(s.ID, i))
		}
		if errors.Is(err, cinder.ErrVolumeNotFound) {
			continue
		}
		if err != nil {
			return cinderResult(err)
		}
		if _, held := r.heldRow(ctx, s, v.ID); held {
			continue // the registry's row stands for it: released with the others
		}
		err = r.cinder.DeleteVolume(ctx, v.ID)
		if errors.Is(err, cinder.ErrVolumeNotAvailable) {
			return lifecycle.Result{Outcome: lifecycle.Transient, Message: fmt.Sprintf("volume %s is still %s: deleted once made", v.ID, v.Status)}
		}
		if err != nil && !errors.Is(err, cinder.ErrVolumeNotFound) {
			return cinderResult(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

// heldRow reads the registry's row of volume id when s holds it.
func (r *Reconciler) heldRow(ctx context.Context, s *lifecycle.Server, id string) (store.Volume, bool) {
	v, err := r.store.GetVolume(ctx, id)
	return v, err == nil && v.ServerID == s.ID
}
