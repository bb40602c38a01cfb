package admin

import (
	"fmt"
	"slices"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/store"
)

// Availability zones, as Nova derives them: a compute host is in the zone
// of the aggregate with an availability_zone that holds it, else in the
// default zone (nova); the other services are in the internal zone. ingot
// places servers without regard to zones, so a server is accepted into a
// zone only when every compute host is in it (any placement is then in
// that zone), and a server's zone is its node's compute host's.

// Zones is one read of the services and the aggregates' zones.
type Zones struct {
	Services []store.Service
	byHost   map[string]string // compute host → aggregate zone
}

// Snapshot is what rendering a server derives from the admin tables, read
// under one admin revision: the zones and the flavors.
type Snapshot struct {
	Zones   Zones
	flavors map[string]store.Flavor
}

// Flavor is the flavor id names, as the snapshot was read.
func (sn Snapshot) Flavor(id string) (store.Flavor, bool) {
	f, ok := sn.flavors[id]
	return f, ok
}

// Zones is the current zones (Snapshot's).
func (s *Service) Zones(r *core.Request) (Zones, error) {
	sn, err := s.Snapshot(r)
	return sn.Zones, err
}

// Snapshot is the current snapshot: the kept one while the store's admin
// revision has not moved, else a fresh read (kept under the revision read
// before it, so a write racing the read only costs another read). The
// caller must not change what it returns.
func (s *Service) Snapshot(r *core.Request) (Snapshot, error) {
	rev, err := s.Cfg.Store.AdminRevision(r.Context())
	if err != nil {
		return Snapshot{}, err
	}
	s.mu.Lock()
	sn, ok := s.kept, s.haveKept && s.keptRev == rev
	s.mu.Unlock()
	if ok {
		return sn, nil
	}
	if sn, err = s.readSnapshot(r); err != nil {
		return Snapshot{}, err
	}
	s.mu.Lock()
	s.kept, s.keptRev, s.haveKept = sn, rev, true
	s.mu.Unlock()
	return sn, nil
}

func (s *Service) readSnapshot(r *core.Request) (Snapshot, error) {
	all, err := s.Cfg.Store.ListServices(r.Context())
	if err != nil {
		return Snapshot{}, fmt.Errorf("list services: %w", err)
	}
	aggs, err := s.Cfg.Store.ListAggregates(r.Context())
	if err != nil {
		return Snapshot{}, fmt.Errorf("list aggregates: %w", err)
	}
	fs, err := s.Cfg.Store.ListFlavors(r.Context(), "")
	if err != nil {
		return Snapshot{}, fmt.Errorf("list flavors: %w", err)
	}
	sn := Snapshot{Zones: NewZones(all, aggs), flavors: make(map[string]store.Flavor, len(fs))}
	for _, f := range fs {
		sn.flavors[f.ID] = f
	}
	return sn, nil
}

// NewZones is the zones of these services and aggregates.
func NewZones(all []store.Service, aggs []store.Aggregate) Zones {
	z := Zones{Services: all, byHost: map[string]string{}}
	for _, a := range aggs {
		if name, ok := a.Metadata[store.AggregateAZKey]; ok {
			for _, h := range a.Hosts {
				if _, seen := z.byHost[h]; !seen { // the API keeps a host in one zone
					z.byHost[h] = name
				}
			}
		}
	}
	return z
}

// of is the zone of a service.
func (z Zones) of(sv store.Service) string {
	if sv.Binary != store.BinaryCompute {
		return internalZone
	}
	if name, ok := z.byHost[sv.Host]; ok {
		return name
	}
	return core.AvailabilityZone
}

// compute lists the zones of the compute hosts in service order, each
// once; the default zone alone when there is no compute service yet.
func (z Zones) compute() []string {
	var out []string
	for _, sv := range store.ComputeServices(z.Services) {
		if name := z.of(sv); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		out = []string{core.AvailabilityZone}
	}
	return out
}

// Accepts reports whether a server asked for zone would truthfully be in
// it wherever it lands.
func (z Zones) Accepts(zone string) bool {
	c := z.compute()
	return len(c) == 1 && c[0] == zone
}

// OfNode is the zone of the compute host a node belongs to; without a
// node, the one zone of every compute host, or the default zone.
func (z Zones) OfNode(node string) string {
	if sv, ok := store.ServiceOfNode(node, store.ComputeServices(z.Services)); ok && node != "" {
		return z.of(sv)
	}
	if c := z.compute(); len(c) == 1 {
		return c[0]
	}
	return core.AvailabilityZone
}
