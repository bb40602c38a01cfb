package reconciler

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/portbind"
	"github.com/ingot-dev/ingot/internal/store"
)

// PointInterfaceBound is the step point after an attached interface's
// port is recorded on its node and before Ironic's VIF attach (crash
// tests kill the process there).
const PointInterfaceBound = "after:interface-bound"

// attachInterface makes the port of s.Op.Network (the backend records its
// row, id s.Op.Port, before any outside create and finds it again on a
// retry), binds it
// to a free Ironic port or portgroup of the node (the binding recorded
// before the attach, so a crash mid-call is cleaned up) and attaches the
// VIF there, as Nova's Ironic driver does with Ironic's VIF attach. A
// node with no free port refuses it (Rejected): the attach is rolled back.
func (r *Reconciler) attachInterface(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	p, err := r.ports.Allocate(ctx, s.Attaching(), s.Op.Network)
	if err != nil {
		return resultOf(err)
	}
	inv, err := r.ironic.NodePorts(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	nets, err := r.ports.Networks(ctx, []store.Port{p})
	if err != nil {
		return resultOf(err)
	}
	choices, err := portbind.Choose(inv, bindRequests(s, []store.Port{p}, nets))
	var short *portbind.NotEnoughError
	switch {
	case errors.Is(err, portbind.ErrNoPorts), errors.As(err, &short):
		// What Ironic's VIF attach answers on such a node (400).
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: fmt.Sprintf("node %s has no free Ironic port for the VIF: %v", s.NodeID, err)}
	case err != nil:
		return resultOf(err)
	}
	c := choices[0]
	if p.VIFNode != s.NodeID || p.MAC != c.MAC || !reflect.DeepEqual(p.Binding, bindingOf(c)) {
		if err := r.store.BindPort(ctx, p.ID, s.NodeID, c.MAC, bindingOf(c)); err != nil {
			return resultOf(err)
		}
	}
	r.step(PointInterfaceBound)
	return resultOf(r.ironic.AttachVIFTo(ctx, s.NodeID, p.VIF(), c.Target))
}

// detachInterface detaches the VIF of the server's port s.DetachPort()
// from the node and frees the port (Neutron's deleted, a user's released).
// Idempotent: no such port is done.
func (r *Reconciler) detachInterface(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	ports, err := r.store.Ports(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	id := s.DetachPort()
	for _, p := range ports {
		if p.ID != id {
			continue
		}
		if p.VIFNode != "" {
			if err := r.ironic.DetachVIF(ctx, p.VIFNode, p.VIF()); err != nil && !errors.Is(err, ironic.ErrNotFound) {
				return resultOf(err)
			}
			if err := r.unbindPort(ctx, p); err != nil {
				return resultOf(err)
			}
		}
		if err := r.ports.Free(ctx, p); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}
