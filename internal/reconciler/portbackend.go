package reconciler

import (
	"context"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/store"
)

// Ports is the network backend: the embedded IPAM (embeddedPorts) or
// Neutron (internal/neutronports), chosen by internal/app. The loop sees
// store rows either way; each row's VIF() is what Ironic is given.
type Ports interface {
	// Allocate returns the server's port on the network, making it when
	// there is none: recorded in the store before any outside create, and
	// found again on a retry. Errors wrap network.ErrPoolExhausted or
	// network.ErrRefused when the network will not give the port.
	Allocate(ctx context.Context, s *lifecycle.Server, networkID string) (store.Port, error)
	// Free deletes the port (or releases a user's own one) and its row.
	// Idempotent; a port already gone is freed. Every release (delete,
	// reschedule, ERROR) frees the ports once the node is let go.
	Free(ctx context.Context, p store.Port) error
	// Networks describes the networks of ports for network_data.json and
	// their physical networks (for the choice of Ironic port).
	Networks(ctx context.Context, ports []store.Port) (network.Networks, error)
}

// embeddedPorts is the embedded IPAM behind Ports: networks from the
// configuration, nothing outside the store to bind or release.
type embeddedPorts struct {
	ipam IPAM
	nets network.Networks
}

func (e embeddedPorts) Allocate(ctx context.Context, s *lifecycle.Server, networkID string) (store.Port, error) {
	return e.ipam.AllocateSlot(ctx, s.ID, networkID, s.PortSlot(networkID))
}

func (e embeddedPorts) plan(s *lifecycle.Server, networkID string) (store.Port, bool) {
	n, ok := e.nets.Lookup(networkID)
	if !ok {
		return store.Port{}, false
	}
	slot := s.PortSlot(networkID)
	id := slot
	if id == "" {
		id = uuid.NewString()
	}
	return store.Port{ID: id, ServerID: s.ID, NetworkID: n.ID, Slot: slot}, true
}

func (e embeddedPorts) allocateAs(ctx context.Context, p store.Port) (store.Port, error) {
	return e.ipam.AllocateAs(ctx, p)
}

func (e embeddedPorts) Free(ctx context.Context, p store.Port) error { return e.ipam.Free(ctx, p.ID) }

func (e embeddedPorts) Networks(context.Context, []store.Port) (network.Networks, error) {
	return e.nets, nil
}
