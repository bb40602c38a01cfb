// Package neutronports is the Neutron network backend of the reconciler
// (network.backend: neutron): a server's ports made in Neutron as Nova's
// Ironic driver makes them, each recorded in ingot's store before Neutron's
// create and found again after a crash by device_id, network and name.
//
// Binding: ingot binds nothing itself. With Ironic's flat network interface
// Ironic sets the Neutron port's MAC to its own port's on VIF attach (and
// binds it when an agent-based deploy needs it); with the neutron interface
// Nova leaves the port unbound so that Ironic binds it late, after
// provisioning. Either way the port is created unbound and given to Ironic
// by its Neutron id.
package neutronports

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/store"
)

// DefaultDeviceOwner is Nova's for a server in the default zone.
const DefaultDeviceOwner = "compute:nova"

// PointCreated is the step point between Neutron's create and ingot's
// record of it (crash tests kill the process there).
const PointCreated = "after:neutron-create-port"

// Neutron is what the backend asks of Neutron (*neutron.Client, with
// ingot's service token).
type Neutron interface {
	EnsurePort(ctx context.Context, spec neutron.PortSpec) (neutron.Port, bool, error)
	ListPorts(ctx context.Context, f neutron.PortFilter) ([]neutron.Port, error)
	GetPort(ctx context.Context, id string) (neutron.Port, error)
	ClaimPort(ctx context.Context, id, serverID, deviceOwner string) (neutron.Port, error)
	ReleasePort(ctx context.Context, id string) error
	DeletePort(ctx context.Context, id string) error
	GetNetwork(ctx context.Context, id string) (neutron.Network, error)
	ListSubnets(ctx context.Context, networkID string) ([]neutron.Subnet, error)
}

// Backend implements the reconciler's Ports over Neutron.
type Backend struct {
	st          store.Store
	nc          Neutron
	deviceOwner string
	step        func(string)
	now         func() time.Time

	mu   sync.Mutex
	nets map[string]described // by network id (networks.go)
}

// Options tune a Backend.
type Options struct {
	// DeviceOwner of the ports (default DefaultDeviceOwner).
	DeviceOwner string
	// Step, when set, hears PointCreated (crash tests).
	Step func(point string)
	// Now is the clock network descriptions are cached by (default time.Now).
	Now func() time.Time
}

// New returns the backend over st and nc.
func New(st store.Store, nc Neutron, o Options) *Backend {
	if o.DeviceOwner == "" {
		o.DeviceOwner = DefaultDeviceOwner
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Backend{st: st, nc: nc, deviceOwner: o.DeviceOwner, step: o.Step, now: o.Now, nets: map[string]described{}}
}

// groupsOf is the security groups a new port of s gets: those recorded,
// none at all once every group was removed (an empty list, not Neutron's
// default), Neutron's default when none were asked for (nil).
func groupsOf(s *lifecycle.Server) []string {
	if s.Spec.NoSecurityGroups {
		return []string{}
	}
	return s.Spec.SecurityGroupIDs
}

// PortName is the deterministic name of the Neutron port made for a row:
// with the server as device_id and the network, how a retry finds it.
func PortName(rowID string) string { return "ingot-" + rowID }

// Allocate returns the server's port on the network. The row is written
// first (no address yet); then Neutron's port is made, or found again, or
// the user's own port claimed; then its id, address and MAC are recorded.
func (b *Backend) Allocate(ctx context.Context, s *lifecycle.Server, networkID string) (store.Port, error) {
	row, err := b.row(ctx, s, networkID)
	if err != nil || (row.NeutronID != "" && row.IP != "") {
		return row, err
	}
	var p neutron.Port
	if row.UserPort {
		p, err = b.nc.ClaimPort(ctx, row.NeutronID, s.ID, b.deviceOwner)
	} else {
		p, _, err = b.nc.EnsurePort(ctx, neutron.PortSpec{NetworkID: networkID, ServerID: s.ID,
			DeviceOwner: b.deviceOwner, Name: PortName(row.ID), FixedIP: s.Spec.FixedIPs[networkID],
			SecurityGroups: groupsOf(s), ProjectID: s.ProjectID})
	}
	if err != nil {
		return row, refused(err)
	}
	if b.step != nil {
		b.step(PointCreated)
	}
	ip := address(p)
	if ip == "" {
		return row, fmt.Errorf("%w: port %s on network %s has no address", network.ErrRefused, p.ID, networkID)
	}
	if err := b.st.RecordNeutronPort(ctx, row.ID, p.ID, ip, p.MACAddress); err != nil {
		return row, err
	}
	row.NeutronID, row.IP, row.MAC = p.ID, ip, p.MACAddress
	return row, nil
}

// row is the server's row on the network (in the slot being made, see
// lifecycle.Server.PortSlot), written when there is none.
func (b *Backend) row(ctx context.Context, s *lifecycle.Server, networkID string) (store.Port, error) {
	for attempt := 0; attempt < 2; attempt++ {
		ports, err := b.st.Ports(ctx, s.ID)
		if err != nil {
			return store.Port{}, err
		}
		slot := s.PortSlot(networkID)
		for _, p := range ports {
			if p.NetworkID == networkID && p.Slot == slot {
				return p, nil
			}
		}
		row := store.Port{ID: uuid.NewString(), ServerID: s.ID, NetworkID: networkID, Slot: slot}
		if slot != "" {
			row.ID = slot // an attached interface's port: its id is the slot
		}
		if id := s.Spec.UserPorts[networkID]; id != "" {
			row.NeutronID, row.UserPort = id, true
		}
		// Record before act: a crash after Neutron's create leaves this
		// row, whose name finds the port again (or deletes it).
		err = b.st.CreatePort(ctx, row)
		if err == nil {
			return row, nil
		}
		if !errors.Is(err, store.ErrExists) {
			return store.Port{}, err
		}
	}
	return store.Port{}, fmt.Errorf("port of server %s on network %s: %w", s.ID, networkID, store.ErrExists)
}

// address is the port's first IPv4 address (ingot's rows carry one).
func address(p neutron.Port) string {
	for _, f := range p.FixedIPs {
		if a, err := netip.ParseAddr(f.IPAddress); err == nil && a.Is4() {
			return f.IPAddress
		}
	}
	if len(p.FixedIPs) > 0 {
		return p.FixedIPs[0].IPAddress
	}
	return ""
}

// refused marks Neutron's final answers as the network refusing the port;
// the rest (unreachable, 5xx) stay as they are: retried.
func refused(err error) error {
	for _, k := range []error{neutron.ErrIPAddressInUse, neutron.ErrPortInUse, neutron.ErrNetworkNotFound,
		neutron.ErrPortNotFound, neutron.ErrBadRequest, neutron.ErrForbidden, neutron.ErrMACAddressInUse} {
		if errors.Is(err, k) {
			return fmt.Errorf("%w: %w", network.ErrRefused, err)
		}
	}
	if errors.Is(err, neutron.ErrNoMoreAddresses) {
		return fmt.Errorf("%w: %w", network.ErrPoolExhausted, err)
	}
	return err
}

// Free deletes the server's Neutron port (a user's own port is released:
// unbound, device cleared, kept — unless the claim never happened and the
// port is another device's), then the row. The ports of a row's creates
// that were never recorded are found by device_id, network and name.
func (b *Backend) Free(ctx context.Context, p store.Port) error {
	switch {
	case p.UserPort:
		np, err := b.nc.GetPort(ctx, p.NeutronID)
		if errors.Is(err, neutron.ErrPortNotFound) {
			break
		}
		if err != nil {
			return err
		}
		if np.DeviceID != "" && np.DeviceID != p.ServerID {
			break // not ours: the claim was refused (PortInUse)
		}
		if err := b.nc.ReleasePort(ctx, p.NeutronID); err != nil {
			return err
		}
	default:
		if p.NeutronID != "" {
			if err := b.nc.DeletePort(ctx, p.NeutronID); err != nil {
				return err
			}
		}
		// The row's name finds the port of a create never recorded, and
		// those of creates whose answer was lost (a timeout) while Neutron
		// went on and made them after a retry's look found none: each an
		// extra port of the server, deleted with the recorded one.
		found, err := b.nc.ListPorts(ctx, neutron.PortFilter{DeviceID: p.ServerID, NetworkID: p.NetworkID, Name: PortName(p.ID)})
		if err != nil {
			return err
		}
		for _, np := range found {
			if err := b.nc.DeletePort(ctx, np.ID); err != nil {
				return err
			}
		}
	}
	return b.st.DeletePort(ctx, p.ID)
}
