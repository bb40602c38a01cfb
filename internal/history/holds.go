package history

import (
	"sort"
	"time"
)

// holding is a status in which a server must hold its node alone.
func holding(s Seen) bool {
	switch s.Status {
	case "ACTIVE", "SHUTOFF", "REBOOT", "HARD_REBOOT", "RESCUE":
		return s.Node != "" && !s.Deleting()
	}
	return false
}

// doubleHeld: no two servers shown holding one node over overlapping
// spans of time (each server's span on a node runs from its first to its
// last observation there), and no look at Ironic with one instance on two
// nodes.
func (c *checker) doubleHeld(snaps []Snapshot) {
	type span struct {
		server      string
		first, last time.Time
	}
	spans := map[string]map[string]*span{} // node -> server -> span
	for _, id := range c.ids {
		for _, o := range c.servers[id].obs {
			if o.seen == nil || !holding(*o.seen) {
				continue
			}
			n := o.seen.Node
			if spans[n] == nil {
				spans[n] = map[string]*span{}
			}
			sp := spans[n][id]
			if sp == nil {
				spans[n][id] = &span{server: id, first: o.call, last: o.call}
				continue
			}
			if o.call.Before(sp.first) {
				sp.first = o.call
			}
			if o.call.After(sp.last) {
				sp.last = o.call
			}
		}
	}
	nodes := make([]string, 0, len(spans))
	for n := range spans {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		var list []*span
		for _, sp := range spans[n] {
			list = append(list, sp)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].first.Before(list[j].first) })
		for i := 1; i < len(list); i++ {
			if !list[i].first.After(list[i-1].last) {
				c.problem(&c.v.DoubleHeld, "double-held: node %s shown holding %s (%s–%s) and %s (%s–%s)", n,
					list[i-1].server, clock(list[i-1].first), clock(list[i-1].last), list[i].server, clock(list[i].first), clock(list[i].last))
				break
			}
		}
	}
	reported := map[string]bool{}
	for _, sn := range snaps {
		on := map[string]string{}
		for _, nd := range sn.Nodes {
			if nd.InstanceUUID == "" {
				continue
			}
			if prev, dup := on[nd.InstanceUUID]; dup && !reported[nd.InstanceUUID] {
				reported[nd.InstanceUUID] = true
				c.problem(&c.v.DoubleHeld, "double-held: Ironic shows %s on nodes %s and %s at %s", nd.InstanceUUID, prev, nd.UUID, clock(sn.At))
			}
			on[nd.InstanceUUID] = nd.UUID
		}
	}
}

// holds reports whether a server may hold things at the end: live and not
// ERROR (an ERROR server has let go of everything, I3).
func (c *checker) holds(id string) bool {
	return c.live(id) && c.f.Servers[id].Status != "ERROR"
}

// inUse are the provision states of a node that something deployed on.
var inUse = map[string]bool{"active": true, "deploying": true, "wait call-back": true, "deploy hold": true}

// leaked: once the run is quiet, every node carrying one of the run's
// servers carries a live one, and the one it shows; no node in use with no
// instance; no VIF on a node that holds no live server; no holding of a
// server that is not live or on a node that holds none.
func (c *checker) leaked() {
	if c.f.Nodes == nil {
		return
	}
	heldBy := map[string]string{} // node -> live server
	carried := map[string]bool{}
	for _, n := range c.f.Nodes {
		id := n.InstanceUUID
		switch {
		case id == "" && inUse[n.ProvisionState]:
			c.problem(&c.v.Leaked, "leaked: node %s is %s with no instance", n.UUID, n.ProvisionState)
		case id == "":
		case c.holds(id):
			heldBy[n.UUID] = id
			carried[id] = true
			if s := c.f.Servers[id]; s.Node != "" && s.Node != n.UUID {
				c.problem(&c.v.DoubleHeld, "double-held: Ironic puts %s on node %s, the API on %s", id, n.UUID, s.Node)
			}
		case c.servers[id] != nil:
			c.problem(&c.v.Leaked, "leaked: node %s (%s) still carries %s, which is not live or is ERROR", n.UUID, n.ProvisionState, id)
		}
		if heldBy[n.UUID] == "" && len(n.VIFs) > 0 {
			c.problem(&c.v.Leaked, "leaked: node %s has VIFs %v and no live server", n.UUID, n.VIFs)
		}
	}
	for _, id := range c.ids {
		if s := c.f.Servers[id]; c.live(id) && s.Status == "ACTIVE" && !carried[id] {
			c.problem(&c.v.Lost, "lost: %s is ACTIVE but no Ironic node carries it", id)
		}
	}
	for _, h := range c.f.Holdings {
		switch {
		case h.Server != "" && !c.holds(h.Server):
			c.problem(&c.v.Leaked, "leaked: %s %s of %s, which is not live or is ERROR", h.Kind, h.ID, h.Server)
		case h.Node != "" && heldBy[h.Node] == "":
			c.problem(&c.v.Leaked, "leaked: %s %s on node %s, which holds no live server", h.Kind, h.ID, h.Node)
		}
	}
}
