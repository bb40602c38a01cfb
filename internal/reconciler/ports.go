package reconciler

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/ingot-dev/ingot/internal/configdrive"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/portbind"
	"github.com/ingot-dev/ingot/internal/store"
)

// PointPortBound is the step point after a build's port is recorded bound
// to its node and before Ironic's VIF attach (the crash suite's).
const PointPortBound = "after:port-bound"

// attachNetworks allocates the server's ports, binds each to a port or
// portgroup of its node (read from Ironic: one call, two with a bond) and
// attaches the VIFs there. The binding and the MAC it gives the port are
// recorded with the VIF's node before the attach, so cleanup finds the VIF
// even after a crash mid-call and the config drive names the NIC the
// machine has. A node with too few free ports is a reschedulable failure;
// a node with no Ironic ports at all keeps the generated MACs, with a
// warning in the server's events. A backend that can write a port already
// bound (plannedPorts) has its new ports chosen a NIC first and written
// once.
func (r *Reconciler) attachNetworks(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	ports, fresh, err := r.buildPorts(ctx, s)
	if err != nil {
		return resultOf(err)
	}
	if len(ports) == 0 {
		return lifecycle.Result{Outcome: lifecycle.OK}
	}
	inv, err := r.ironic.NodePorts(ctx, s.NodeID)
	if err != nil {
		return resultOf(err)
	}
	nets, err := r.ports.Networks(ctx, ports)
	if err != nil {
		return resultOf(err)
	}
	choices, err := portbind.Choose(inv, bindRequests(s, ports, nets))
	warning := ""
	var short *portbind.NotEnoughError
	switch {
	case errors.Is(err, portbind.ErrNoPorts):
		warning = fmt.Sprintf("warning: node %s has no Ironic ports; the machine is told generated MACs (fa:16:3e:…) it may not have", s.NodeID)
		r.log.Warn("node has no Ironic ports", logServer, s.ID, logNode, s.NodeID)
	case errors.As(err, &short):
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: fmt.Sprintf("node %s: %v", s.NodeID, err)}
	case err != nil:
		return resultOf(err)
	}
	for i, p := range ports {
		mac, b, to := network.MAC(p.ID), store.Binding{}, portbind.Target{}
		if choices != nil {
			c := choices[i]
			mac, b, to = c.MAC, bindingOf(c), c.Target
		}
		// Record before act: cleanup finds the VIF even if we crash mid-call.
		if fresh[i] {
			p.VIFNode, p.MAC, p.Binding = s.NodeID, mac, b
			if p, err = r.ports.(plannedPorts).allocateAs(ctx, p); err != nil {
				return resultOf(err)
			}
		}
		if p.VIFNode != s.NodeID || p.MAC != mac || !reflect.DeepEqual(p.Binding, b) {
			if err := r.store.BindPort(ctx, p.ID, s.NodeID, mac, b); err != nil {
				return resultOf(err)
			}
		}
		r.step(PointPortBound)
		if err := r.ironic.AttachVIFTo(ctx, s.NodeID, p.VIF(), to); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK, Message: warning}
}

// plannedPorts is a Ports that can name a server's port before writing it
// and then write it bound (the embedded IPAM).
type plannedPorts interface {
	// plan is the port the server is to have on the network, not written:
	// its id chosen, its network resolved. false when the network is
	// unknown (Allocate says why).
	plan(s *lifecycle.Server, networkID string) (store.Port, bool)
	// allocateAs writes p with an address, or returns the port recorded in
	// its slot already.
	allocateAs(ctx context.Context, p store.Port) (store.Port, error)
}

// buildPorts are the server's ports on its networks: those recorded, and
// with a plannedPorts backend the missing ones planned (fresh), else made
// by Allocate.
func (r *Reconciler) buildPorts(ctx context.Context, s *lifecycle.Server) ([]store.Port, []bool, error) {
	ports := make([]store.Port, 0, len(s.Spec.Networks))
	fresh := make([]bool, 0, len(s.Spec.Networks))
	pp, ok := r.ports.(plannedPorts)
	var recorded []store.Port
	if ok && len(s.Spec.Networks) > 0 {
		var err error
		if recorded, err = r.store.Ports(ctx, s.ID); err != nil {
			return nil, nil, err
		}
	}
	for _, netID := range s.Spec.Networks {
		if ok {
			if p, planned := pp.plan(s, netID); planned {
				i := slices.IndexFunc(recorded, func(q store.Port) bool { return q.NetworkID == p.NetworkID && q.Slot == p.Slot })
				if i < 0 {
					ports, fresh = append(ports, p), append(fresh, true)
				} else {
					ports, fresh = append(ports, recorded[i]), append(fresh, false)
				}
				continue
			}
		}
		p, err := r.ports.Allocate(ctx, s, netID)
		if err != nil {
			return nil, nil, err
		}
		ports, fresh = append(ports, p), append(fresh, false)
	}
	return ports, fresh, nil
}

// bindRequests asks for one NIC per port, on the network's physical
// network, keeping a binding already recorded on this node.
func bindRequests(s *lifecycle.Server, ports []store.Port, nets network.Networks) []portbind.Request {
	reqs := make([]portbind.Request, len(ports))
	for i, p := range ports {
		req := portbind.Request{PortID: p.VIF()}
		if n, ok := nets.Lookup(p.NetworkID); ok {
			req.Physnet = n.PhysicalNetwork
		}
		if p.VIFNode == s.NodeID {
			req.Current = portbind.Target{Port: p.Binding.PortUUID, Portgroup: p.Binding.PortgroupUUID}
		}
		reqs[i] = req
	}
	return reqs
}

func bindingOf(c portbind.Choice) store.Binding {
	if c.Target.Portgroup == "" {
		return store.Binding{PortUUID: c.Target.Port}
	}
	b := store.Binding{PortgroupUUID: c.Target.Portgroup, BondMode: c.Mode, BondProperties: c.Properties}
	for _, m := range c.Members {
		b.Members = append(b.Members, store.BondMember{PortUUID: m.UUID, MAC: m.MAC})
	}
	return b
}

// unbindPort records a detached VIF: no node, no binding, the generated MAC
// back (the port no longer stands for a NIC of that node).
func (r *Reconciler) unbindPort(ctx context.Context, p store.Port) error {
	return r.store.BindPort(ctx, p.ID, "", network.MAC(p.ID), store.Binding{})
}

// deployRequest builds instance_info and the config drive from the
// server's ports as bound at the networking step; with personality files,
// the config drive as an ISO image (the JSON form cannot carry them).
func (r *Reconciler) deployRequest(ctx context.Context, s *lifecycle.Server) (ironic.DeployRequest, error) {
	seed := make([]byte, configdrive.RandomSeedBytes)
	if _, err := rand.Read(seed); err != nil {
		seed = nil
	}
	ports := r.portsOf(ctx, s)
	nets, err := r.ports.Networks(ctx, ports)
	if err != nil {
		return ironic.DeployRequest{}, err
	}
	req := configdrive.Build(configdrive.Input{Server: s, Ports: ports, Networks: nets, RandomSeed: seed})
	if len(s.Spec.Files) > 0 {
		img, err := configdrive.Image(ctx, req.ConfigDrive, s.Spec.Files)
		if err != nil {
			return req, err
		}
		req.ConfigDriveImage = img
	}
	return req, nil
}
