// Package portbind chooses, for each of a server's ports, the Ironic port or
// portgroup of its node that carries it: the NIC whose MAC the server's port
// takes, so that the machine finds its configuration (network_data.json)
// on a NIC it has. Pure: no I/O.
//
// The choice follows Ironic's own (get_free_port_like_object in
// ironic/drivers/modules/network/common.py), so an Ironic whose network
// interface picks a port itself would pick the same one: a port or
// portgroup whose physical_network is neither unset nor the network's is
// never used; among the rest, matching physical network first, then
// portgroups, then PXE-enabled ports, then Ironic's order. Ports of a
// portgroup are used only through it. Unlike Ironic, networks that name a
// physical network are placed first, so a network that takes any NIC does
// not use up the only one another network could have had.
package portbind

import (
	"errors"
	"fmt"
	"sort"
)

// Port is an Ironic port (one NIC) of a node.
type Port struct {
	UUID      string
	MAC       string // lower case
	Node      string
	PXE       bool
	Physnet   string // physical_network, "" when unset
	Portgroup string // portgroup_uuid, "" when none
	VIF       string // internal_info.tenant_vif_port_id, "" when none
}

// Portgroup is an Ironic portgroup (a bond) of a node.
type Portgroup struct {
	UUID       string
	MAC        string // "" when unset
	Node       string
	Mode       string         // bonding mode, e.g. active-backup, 802.3ad
	Properties map[string]any // bonding options
	VIF        string
}

// Inventory is what Ironic has of one node. Portgroups may be nil when no
// port is in one, or when only counting (the scheduler): a portgroup is
// then known by its ports alone.
type Inventory struct {
	Ports      []Port
	Portgroups []Portgroup
}

// Target is where a VIF goes: one port, or one portgroup.
type Target struct {
	Port      string
	Portgroup string
}

// Request is one of the server's ports to place.
type Request struct {
	PortID  string // ingot's port id, also the VIF id
	Physnet string // the network's physical_network ("" = any NIC)
	Current Target // where it was bound before on this node, kept if still free
}

// Choice is where one request goes.
type Choice struct {
	Target Target
	// MAC is the address the server's port takes: the port's, or the
	// portgroup's (its first port's when the portgroup has none).
	MAC string
	// Bond details, for a portgroup.
	Mode       string
	Properties map[string]any
	Members    []Port
}

// ErrNoPorts: the node has no Ironic ports at all.
var ErrNoPorts = errors.New("portbind: the node has no Ironic ports")

// NotEnoughError: fewer free ports (or portgroups) than networks.
type NotEnoughError struct {
	Free    int    // free ports and portgroups the node has
	Wanted  int    // networks requested
	Physnet string // set when the shortfall is on one physical network
}

func (e *NotEnoughError) Error() string {
	if e.Physnet != "" {
		return fmt.Sprintf("no free Ironic port or portgroup on physical network %q (%d free for %d network(s))", e.Physnet, e.Free, e.Wanted)
	}
	return fmt.Sprintf("%d free Ironic port(s) or portgroup(s) for %d network(s)", e.Free, e.Wanted)
}

// unit is a port or a portgroup that can carry one VIF.
type unit struct {
	target  Target
	pxe     bool
	physnet string
	vif     string
	mac     string
	pg      *Portgroup
	members []Port
}

func (u *unit) isPG() bool { return u.target.Portgroup != "" }

// units lists the node's port-like objects in Ironic's order: ports outside
// portgroups, then portgroups with at least one usable port. A port that
// carries a VIF that is not ours is not free; a portgroup one of whose ports
// carries such a VIF is given up for its other ports, as Ironic does.
func units(inv Inventory, ours map[string]bool) []*unit {
	foreign := func(vif string) bool { return vif != "" && !ours[vif] }
	var out []*unit
	byPG := map[string][]Port{}
	var pgOrder []string
	spoiled := map[string]bool{}
	for _, p := range inv.Ports {
		if foreign(p.VIF) {
			spoiled[p.Portgroup] = true
			continue
		}
		if p.Portgroup == "" {
			out = append(out, &unit{target: Target{Port: p.UUID}, pxe: p.PXE, physnet: p.Physnet, vif: p.VIF, mac: p.MAC})
			continue
		}
		if _, seen := byPG[p.Portgroup]; !seen {
			pgOrder = append(pgOrder, p.Portgroup)
		}
		byPG[p.Portgroup] = append(byPG[p.Portgroup], p)
	}
	known := map[string]*Portgroup{}
	if inv.Portgroups != nil {
		pgOrder = pgOrder[:0]
		for i := range inv.Portgroups {
			pg := &inv.Portgroups[i]
			known[pg.UUID] = pg
			pgOrder = append(pgOrder, pg.UUID)
		}
	}
	for _, id := range pgOrder {
		members := byPG[id]
		if spoiled[id] {
			for _, p := range members {
				out = append(out, &unit{target: Target{Port: p.UUID}, pxe: p.PXE, physnet: p.Physnet, vif: p.VIF, mac: p.MAC})
			}
			continue
		}
		if len(members) == 0 {
			continue // Ironic ignores empty portgroups
		}
		u := &unit{target: Target{Portgroup: id}, pxe: true, physnet: members[0].Physnet, members: members, mac: members[0].MAC}
		if pg := known[id]; pg != nil {
			if foreign(pg.VIF) {
				continue
			}
			u.pg, u.vif = pg, pg.VIF
			if pg.MAC != "" {
				u.mac = pg.MAC
			}
		}
		out = append(out, u)
	}
	return out
}

// allowed: a unit's physical network is unset or the network's.
func allowed(u *unit, physnet string) bool {
	return physnet == "" || u.physnet == "" || u.physnet == physnet
}

// better orders units as Ironic's sort key (physnet match, portgroup, PXE).
func better(a, b *unit, physnet string) bool {
	am, bm := physnet != "" && a.physnet == physnet, physnet != "" && b.physnet == physnet
	if am != bm {
		return am
	}
	if a.isPG() != b.isPG() {
		return a.isPG()
	}
	return a.pxe && !b.pxe
}

// Choose places every request on its own free port or portgroup of the
// node. ErrNoPorts when the node has none at all; *NotEnoughError when some
// request finds no free one.
func Choose(inv Inventory, reqs []Request) ([]Choice, error) {
	if len(inv.Ports) == 0 {
		return nil, ErrNoPorts
	}
	ours := map[string]bool{}
	for _, r := range reqs {
		ours[r.PortID] = true
	}
	us := units(inv, ours)
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	// Constrained networks first (see the package comment).
	sort.SliceStable(order, func(i, j int) bool { return reqs[order[i]].Physnet != "" && reqs[order[j]].Physnet == "" })
	taken := map[*unit]bool{}
	out := make([]Choice, len(reqs))
	free := 0
	for _, u := range us {
		if u.vif == "" || ours[u.vif] {
			free++
		}
	}
	for _, i := range order {
		r := reqs[i]
		var pick *unit
		for _, u := range us {
			if taken[u] || !allowed(u, r.Physnet) || (u.vif != "" && u.vif != r.PortID) {
				continue
			}
			if u.vif == r.PortID || (r.Current != Target{} && u.target == r.Current) {
				pick = u // where it already is (a retry, a crash before the attach answered)
				break
			}
			if pick == nil || better(u, pick, r.Physnet) {
				pick = u
			}
		}
		if pick == nil {
			e := &NotEnoughError{Free: free, Wanted: len(reqs)}
			if r.Physnet != "" && free >= len(reqs) {
				e.Physnet = r.Physnet
			}
			return nil, e
		}
		taken[pick] = true
		c := Choice{Target: pick.target, MAC: pick.mac, Members: pick.members}
		if pick.pg != nil {
			c.Mode, c.Properties = pick.pg.Mode, pick.pg.Properties
		}
		out[i] = c
	}
	return out, nil
}

// Fits reports whether a node with these ports can carry one VIF per
// network (physnets lists each requested network's physical network, ""
// for any). A node with no ports at all fits: ingot then keeps generated
// MACs, as before it read Ironic's ports.
func Fits(ports []Port, physnets []string) bool {
	if len(physnets) == 0 || len(ports) == 0 {
		return true
	}
	reqs := make([]Request, len(physnets))
	for i, pn := range physnets {
		reqs[i] = Request{PortID: fmt.Sprintf("\x00fit-%d", i), Physnet: pn}
	}
	_, err := Choose(Inventory{Ports: ports}, reqs)
	return err == nil
}
