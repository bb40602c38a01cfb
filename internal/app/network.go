package app

import (
	"fmt"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/neutronports"
	"github.com/ingot-dev/ingot/internal/servicecatalog"
	"github.com/ingot-dev/ingot/internal/store"
)

// networkBackend is the Neutron backend when network.backend is neutron
// (nil for the embedded IPAM): Neutron's endpoint from the catalog of
// ingot's service user, every call with its token.
// The third result makes clients with a caller's token (security groups).
func networkBackend(cfg config.Config, id *identity, st store.Store, opts Options) (*neutronports.Backend, *neutron.Client, *neutron.AsUser, error) {
	if cfg.Network.Backend != config.NetworkNeutron {
		return nil, nil, nil, nil
	}
	if id.keystone == nil {
		// config.Normalize refuses it; a caller that skipped it is told too.
		return nil, nil, nil, fmt.Errorf("network.backend neutron needs Keystone (auth.strategy: keystone)")
	}
	sc, err := servicecatalog.Network(id.keystone.Provider(),
		servicecatalog.Endpoint{Region: cfg.Network.Region, Interface: cfg.Network.Interface})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("network.backend neutron: %w", err)
	}
	nc := neutron.New(sc, cfg.Network.Timeout)
	return neutronports.New(st, nc, neutronports.Options{DeviceOwner: cfg.Network.DeviceOwner, Step: opts.Step, Now: opts.Clock.Now}),
		nc, neutron.NewAsUser(sc, cfg.Network.Timeout), nil
}
