package neutronports_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// noLeft checks that the server holds no row and Neutron holds no port of
// it, and that Neutron's port count is back to before.
func (r *rig) noLeft(id string, before int) {
	r.t.Helper()
	if ports, err := r.st.Ports(context.Background(), id); err != nil || len(ports) != 0 {
		r.t.Errorf("rows of %s left: %+v, %v", id, ports, err)
	}
	if n := r.neutron.PortCount(id); n != 0 {
		r.t.Errorf("%d Neutron ports of %s left", n, id)
	}
	if got := r.ports(); got != before {
		r.t.Errorf("Neutron ports: %d, want %d (before)", got, before)
	}
}

// TestDeleteAtEveryStep: the user's delete arriving before each step point
// of a build (one step per tick) leaves no port in Neutron.
func TestDeleteAtEveryStep(t *testing.T) {
	// Learn the build's step points once.
	var points []string
	learn := newRig(t, rigOptions{nodes: 1, steps: 1, step: func(p string) { points = append(points, p) }})
	id := learn.create(nil)
	learn.until("active", learn.settled(id))
	if len(points) < 5 {
		t.Fatalf("step points %v: too few", points)
	}
	t.Logf("%d step points: %v", len(points), points)
	for i, point := range points {
		t.Run(fmt.Sprintf("%02d-%s", i, point), func(t *testing.T) {
			var r *rig
			var id string
			seen, asked := 0, false
			r = newRig(t, rigOptions{nodes: 1, steps: 1, step: func(p string) {
				if seen == i && !asked {
					asked = true
					r.requestDelete(id)
				}
				seen++
			}})
			before := r.ports()
			id = r.create(nil)
			r.until("deleted", r.settled(id))
			if ph := r.phase(id); ph != lifecycle.PhaseDeleted {
				t.Fatalf("phase %s, want deleted", ph)
			}
			r.noLeft(id, before)
			if vifs := r.ironic.VIFs(r.ironic.Nodes()[0].UUID); len(vifs) != 0 {
				t.Errorf("VIFs left on the node: %v", vifs)
			}
		})
	}
}

// TestNodeDeletedDuringDeploy: the node deleted out of band mid-deploy;
// the build goes to the other node, the first node's port is gone (the
// reschedule frees the ports, as it does with the embedded IPAM, and the
// next node gets a new one), and the delete leaves none.
func TestNodeDeletedDuringDeploy(t *testing.T) {
	r := newRig(t, rigOptions{nodes: 2})
	before := r.ports()
	id := r.create(nil)
	r.until("deploying", func() bool { return r.phase(id) == lifecycle.PhaseDeploying })
	first := r.server(id).NodeID
	port := r.onlyRow(id).NeutronID
	if err := r.ironic.DeleteOutOfBand(first); err != nil {
		t.Fatal(err)
	}
	r.until("active", r.settled(id))
	s := r.server(id)
	if s.Phase != lifecycle.PhaseActive || s.NodeID == first {
		t.Fatalf("phase %s on node %s (first %s): want active elsewhere", s.Phase, s.NodeID, first)
	}
	row := r.onlyRow(id)
	if row.VIFNode != s.NodeID {
		t.Errorf("row %+v: want its VIF on node %s", row, s.NodeID)
	}
	if _, err := r.port(port); err == nil && port != row.NeutronID {
		t.Errorf("the first node's port %s is still in Neutron", port)
	}
	if vifs := r.ironic.VIFs(s.NodeID); len(vifs) != 1 || vifs[0] != row.NeutronID {
		t.Errorf("VIFs on the second node %v, want %s", vifs, row.NeutronID)
	}
	if got := r.ports(); got != before+1 {
		t.Errorf("Neutron ports while active: %d, want %d", got, before+1)
	}
	r.requestDelete(id)
	r.until("deleted", r.settled(id))
	r.noLeft(id, before)
}

// TestTornDownToError: the node torn down out of band under an ACTIVE
// server, and a deploy that fails on the only node: ERROR, no port left.
func TestTornDownToError(t *testing.T) {
	t.Run("teardown", func(t *testing.T) {
		r := newRig(t, rigOptions{nodes: 1})
		before := r.ports()
		id := r.create(nil)
		r.until("active", r.settled(id))
		if err := r.ironic.TeardownOutOfBand(r.server(id).NodeID); err != nil {
			t.Fatal(err)
		}
		r.until("settled", func() bool { return r.phase(id) == lifecycle.PhaseError && !r.server(id).NeedsWork() })
		r.noLeft(id, before)
	})
	t.Run("deploy-failed", func(t *testing.T) {
		r := newRig(t, rigOptions{nodes: 1})
		if err := r.ironic.FailNextDeploy(r.ironic.Nodes()[0].UUID, "boom"); err != nil {
			t.Fatal(err)
		}
		before := r.ports()
		id := r.create(nil)
		r.until("settled", r.settled(id))
		if ph := r.phase(id); ph != lifecycle.PhaseError {
			t.Fatalf("phase %s, want error", ph)
		}
		r.noLeft(id, before)
	})
}

// loseRecord stands for a crash between Neutron's create and ingot's
// record of it: the first RecordNeutronPort is lost (the process would have
// died there; nothing after the create was written).
type loseRecord struct {
	store.Store
	lost int
}

var errCrashed = errors.New("crashed before the record")

func (l *loseRecord) RecordNeutronPort(ctx context.Context, portID, neutronID, ip, mac string) error {
	if l.lost == 0 {
		l.lost++
		return errCrashed
	}
	return l.Store.RecordNeutronPort(ctx, portID, neutronID, ip, mac)
}

// TestCrashAfterNeutronCreate: after Neutron's create and before ingot's
// record, a retry finds the port instead of making a second, and a delete
// before any retry finds and deletes it by name.
func TestCrashAfterNeutronCreate(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		lr := &loseRecord{}
		r := newRig(t, rigOptions{nodes: 1, wrap: func(st store.Store) store.Store { lr.Store = st; return lr }})
		before := r.ports()
		id := r.create(nil)
		r.until("active", r.settled(id))
		if lr.lost != 1 || r.phase(id) != lifecycle.PhaseActive {
			t.Fatalf("lost %d records, phase %s; want one lost, active", lr.lost, r.phase(id))
		}
		if n := r.neutron.PortCount(id); n != 1 {
			t.Errorf("%d Neutron ports of the server after the retry, want 1", n)
		}
		r.requestDelete(id)
		r.until("deleted", r.settled(id))
		r.noLeft(id, before)
	})
	t.Run("delete-first", func(t *testing.T) {
		lr := &loseRecord{}
		var r *rig
		var id string
		r = newRig(t, rigOptions{nodes: 1, wrap: func(st store.Store) store.Store { lr.Store = st; return lr },
			step: func(p string) {
				if lr.lost == 1 && r.server(id).Desired != lifecycle.DesiredDeleted {
					r.requestDelete(id)
				}
			}})
		before := r.ports()
		id = r.create(nil)
		r.until("deleted", r.settled(id))
		if lr.lost != 1 {
			t.Fatalf("lost %d records, want 1", lr.lost)
		}
		r.noLeft(id, before)
	})
}
