package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// model is a small Ironic and IPAM for the property test: enough behaviour
// to drive Decide/Apply through every path, with faults injected at random.
type model struct {
	rng      *rand.Rand
	now      time.Time
	nodes    map[string]*mnode
	order    []string
	ports    int
	vifs     map[string]bool // node -> our VIF attached
	tgts     map[string]bool // node -> our volume targets there
	volsHeld bool            // the server's volumes are reserved for it
	orphaned map[string]bool // nodes whose instance_uuid an operator removed while deployed
	stranded map[string]bool // nodes another tenant reserved: whatever of ours is left there stays (I7)
	failOn   map[string]bool // node -> its next deploy fails
	down     bool            // Ironic unreachable
	// violation is set by exec when ingot acts on a node not ours (I7).
	violation string
	// made are the volumes the volume service holds that the build made,
	// by VolumeName; creates counts the creates of each name.
	made    map[string]*mvol
	creates map[string]int
}

// mvol is a volume of the model's volume service made for the server.
type mvol struct {
	id, status string // creating, available, error
	until      time.Time
	fails      bool // ends in error rather than available
	held       bool // held for the server (the registry's row)
}

type mnode struct {
	state, target, inst string
	power               string // "power on", "power off"
	maint               bool
	until               time.Time // when the current transition ends
	lockedUntil         time.Time
}

func newModel(seed uint64, n int) *model {
	m := &model{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b9)), now: t0, nodes: map[string]*mnode{}, vifs: map[string]bool{}, tgts: map[string]bool{}, orphaned: map[string]bool{}, stranded: map[string]bool{}, failOn: map[string]bool{}, volsHeld: true,
		made: map[string]*mvol{}, creates: map[string]int{}}
	for i := range n {
		id := fmt.Sprintf("node-%d", i)
		m.nodes[id] = &mnode{state: "available", power: "power off"}
		m.order = append(m.order, id)
	}
	return m
}

// settle moves transitions whose time has come.
func (m *model) settle() {
	for _, v := range m.made {
		if v.status == "creating" && !m.now.Before(v.until) {
			v.status = "available"
			if v.fails {
				v.status = "error"
			}
		}
	}
	for id, n := range m.nodes {
		if n.until.IsZero() || m.now.Before(n.until) {
			continue
		}
		n.until = time.Time{}
		switch n.state {
		case "deploying":
			if m.failOn[id] {
				n.state, n.target = "deploy failed", "active"
				delete(m.failOn, id)
			} else {
				n.state, n.target = "active", ""
			}
		case "rescuing":
			n.state, n.target = "rescue", ""
		case "unrescuing":
			n.state, n.target = "active", ""
		case "deleting":
			n.state, n.target, n.inst = "available", "", ""
			delete(m.vifs, id)
		}
	}
}

func (m *model) view(s *Server) NodeView {
	if s.NodeID == "" || m.down {
		return NodeView{}
	}
	if m.rng.IntN(12) == 0 {
		return NodeView{} // this read was lost (a dropped connection), Ironic is up
	}
	n, ok := m.nodes[s.NodeID]
	if !ok {
		return NodeView{State: NodeGone}
	}
	v := NodeView{State: classify(n.state), Shown: n.state, Settling: n.target != "", Maintenance: n.maint,
		Locked: m.now.Before(n.lockedUntil)}
	switch n.power {
	case "power on":
		v.Power = PowerOn
	case "power off":
		v.Power = PowerOff
	}
	switch n.inst {
	case "":
		v.Holder = HeldByNobody
	case s.ID:
		v.Holder = HeldByUs
	default:
		v.Holder, v.Other = HeldByOther, n.inst
	}
	return v
}

func (m *model) exec(s *Server, a Action) Result {
	if m.down && a.Kind != KindFreePorts && a.Kind != KindSchedule {
		return Result{Outcome: Unreachable}
	}
	n := m.nodes[s.NodeID]
	switch a.Kind {
	case KindNetwork, KindAttachVolumes, KindDeploy, KindUndeploy, KindReboot, KindPowerOn, KindPowerOff, KindRebuild, KindRescue, KindUnrescue,
		KindAttachInterface, KindDetachInterface, KindAttachVolume, KindDetachVolume:
		if n != nil && n.inst != s.ID {
			m.violation = fmt.Sprintf("I7: %v on node %s, which carries %q", a.Kind, s.NodeID, n.inst)
		}
	}
	switch a.Kind {
	case KindSchedule:
		for _, id := range m.order {
			c, ok := m.nodes[id]
			if ok && c.state == "available" && c.inst == "" && !c.maint && !contains(s.Excluded, id) {
				return Result{Outcome: OK, Node: id}
			}
		}
		return Result{Outcome: NoCandidate}
	case KindReserve:
		if n == nil {
			return Result{Outcome: Gone}
		}
		if n.inst != "" && n.inst != s.ID {
			return Result{Outcome: Taken}
		}
		n.inst = s.ID
	case KindNetwork:
		if n == nil {
			return Result{Outcome: Gone}
		}
		m.ports = len(s.Spec.Networks)
		m.vifs[s.NodeID] = true
	case KindDeploy:
		if n == nil {
			return Result{Outcome: Gone}
		}
		if n.state != "available" || n.maint {
			return Result{Outcome: InvalidState}
		}
		n.state, n.target = "deploying", "active"
		n.until = m.now.Add(time.Duration(5+m.rng.IntN(60)) * time.Second)
		n.lockedUntil = n.until
	case KindUndeploy:
		if n == nil {
			return Result{Outcome: Gone}
		}
		if m.now.Before(n.lockedUntil) {
			return Result{Outcome: Transient}
		}
		n.state, n.target = "deleting", "available"
		n.until = m.now.Add(time.Second)
	case KindUnreserve:
		if n != nil {
			delete(m.vifs, s.NodeID)
			if a.RemoveInstance {
				n.inst = ""
			}
		}
	case KindFreePorts:
		m.ports = 0
	case KindAttachVolumes:
		if n == nil {
			return Result{Outcome: Gone}
		}
		m.tgts[s.NodeID] = true
	case KindDetachVolumes:
		if n != nil {
			delete(m.tgts, s.NodeID)
		}
	case KindReleaseVolumes:
		for i, ref := range s.Volumes() {
			v := m.made[VolumeName(s.ID, i)]
			if !ref.Made() || v == nil {
				continue
			}
			if Destroys(s, ref) {
				if v.status == "creating" {
					return Result{Outcome: Transient, Message: "volume still creating"}
				}
				delete(m.made, VolumeName(s.ID, i))
				continue
			}
			v.held = false
		}
		m.volsHeld = false
	case KindCreateVolume:
		return m.createVolume(s, a)
	case KindAttachVolume:
		if n == nil {
			return Result{Outcome: Gone}
		}
		if m.rng.IntN(4) == 0 {
			return Result{Outcome: Rejected, Message: "volume taken in Cinder"}
		}
		m.tgts[s.NodeID] = true
	case KindDetachVolume:
		// Ironic removes a target only from a powered-off node.
		if n == nil {
			return Result{Outcome: Gone}
		}
		if m.tgts[s.NodeID] && n.power != "power off" {
			return Result{Outcome: Transient}
		}
	case KindPowerOn, KindPowerOff, KindReboot:
		if n == nil {
			return Result{Outcome: Gone}
		}
		if m.now.Before(n.lockedUntil) {
			return Result{Outcome: Transient}
		}
		n.power = "power on"
		if a.Kind == KindPowerOff {
			n.power = "power off"
		}
		if a.Kind == KindReboot && !a.Hard && m.rng.IntN(3) == 0 {
			return Result{Outcome: Rejected, Message: "soft reboot not supported"}
		}
	case KindRebuild:
		if n == nil {
			return Result{Outcome: Gone}
		}
		if n.state != "active" || m.now.Before(n.lockedUntil) {
			return Result{Outcome: InvalidState}
		}
		n.state, n.target, n.power = "deploying", "active", "power on"
		n.until = m.now.Add(time.Duration(5+m.rng.IntN(60)) * time.Second)
		n.lockedUntil = n.until
	case KindAttachInterface:
		if n == nil {
			return Result{Outcome: Gone}
		}
		m.ports++ // the port is made (and recorded) before the VIF attach
		if m.rng.IntN(3) == 0 {
			return Result{Outcome: Rejected, Message: "no free Ironic port"}
		}
	case KindDetachInterface:
		if m.ports > 0 {
			m.ports--
		}
	case KindRescue, KindUnrescue:
		if n == nil {
			return Result{Outcome: Gone}
		}
		want, next := "active", "rescuing"
		if a.Kind == KindUnrescue {
			want, next = "rescue", "unrescuing"
		}
		if n.state != want {
			return Result{Outcome: InvalidState}
		}
		n.state, n.target = next, "rescue"
		n.until = m.now.Add(time.Duration(1+m.rng.IntN(20)) * time.Second)
	}
	return Result{Outcome: OK}
}

// createVolume is the volume service's side of KindCreateVolume: a lookup
// by name first, a create whose answer may be lost, a volume that ends
// available or in error, or that an operator deleted.
func (m *model) createVolume(s *Server, a Action) Result {
	ref, name := s.Volumes()[a.Volume], VolumeName(s.ID, a.Volume)
	v := m.made[name]
	switch {
	case v == nil && ref.ID != "":
		return Result{Outcome: Gone, Message: "volume " + ref.ID + " no longer exists"}
	case v == nil:
		v = &mvol{id: "mv-" + name, status: "creating", until: m.now.Add(time.Duration(1+m.rng.IntN(30)) * time.Second),
			fails: m.rng.IntN(6) == 0}
		m.made[name] = v
		m.creates[name]++
		if m.rng.IntN(4) == 0 {
			return Result{Outcome: Transient, Message: "the create's answer was lost"}
		}
		return Result{Outcome: OK, VolumeID: v.id}
	}
	switch v.status {
	case "available":
		v.held = true
		return Result{Outcome: OK, VolumeID: v.id, VolumeReady: true}
	case "error":
		return Result{Outcome: Rejected, VolumeID: v.id, VolumeStatus: v.status, Message: "status error"}
	}
	return Result{Outcome: OK, VolumeID: v.id}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// fault injects one random out-of-band event.
func (m *model) fault(s *Server) {
	id := m.order[m.rng.IntN(len(m.order))]
	if s.NodeID != "" && m.rng.IntN(2) == 0 {
		id = s.NodeID
	}
	n, ok := m.nodes[id]
	switch m.rng.IntN(9) {
	case 0: // operator deletes the node (maintenance + delete)
		if ok {
			delete(m.nodes, id)
			delete(m.vifs, id)
			delete(m.tgts, id)
		}
	case 1: // out-of-band teardown
		if ok && (n.state == "active" || n.state == "wait call-back" || n.state == "deploy failed") {
			n.state, n.target, n.until = "deleting", "available", m.now.Add(time.Second)
		}
	case 2:
		if ok {
			n.maint = !n.maint
		}
	case 3:
		m.failOn[id] = true
	case 4:
		if ok && n.inst != "" && m.rng.IntN(3) == 0 {
			if n.state != "available" {
				m.orphaned[id] = true // deployed for us, then taken away behind our back
			}
			n.inst = ""
		}
	case 5:
		m.down = !m.down
	case 6: // Ironic restart kills a running deploy
		if ok && n.state == "deploying" {
			n.state, n.target, n.until, n.lockedUntil = "deploy failed", "active", time.Time{}, time.Time{}
		}
	case 8: // an operator powers the node off or on
		if ok {
			if n.power == "power on" {
				n.power = "power off"
			} else {
				n.power = "power on"
			}
		}
	case 7: // another tenant reserves a free node (perhaps one still carrying our volume targets)
		if ok && n.state == "available" && n.inst == "" && !n.maint {
			n.inst = "22222222-2222-2222-2222-222222222222"
			m.stranded[id] = true // I7: ingot may not remove our VIFs or targets there any more
		}
	}
}
