package core

import (
	"context"

	"github.com/ingot-dev/ingot/internal/neutron"
)

// Neutron is what the API reads of Neutron when network.backend is neutron
// (*neutron.Client with ingot's service token; ownership is checked by the
// API): a create's networks, ports and fixed IPs are validated against it.
type Neutron interface {
	GetNetwork(ctx context.Context, id string) (neutron.Network, error)
	ListNetworks(ctx context.Context) ([]neutron.Network, error)
	GetPort(ctx context.Context, id string) (neutron.Port, error)
	ListPorts(ctx context.Context, f neutron.PortFilter) ([]neutron.Port, error)
}

// NetworkNames names Neutron networks for server bodies (cached:
// neutronports.Names).
type NetworkNames interface {
	Name(ctx context.Context, id string) string
}
