package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
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

// TestConvergesFromAnySchedule: with faults at random and Ironic answering
// in the end, repeated decide-and-apply reaches a stable state no later than
// the deadline plus one tick, a deleted server never shows again, and nothing
// is held once stable.
func TestConvergesFromAnySchedule(t *testing.T) {
	const tick = 2 * time.Second
	c := Config{BuildTimeout: 10 * time.Minute, DeleteTimeout: 5 * time.Minute, MaintenanceGrace: time.Minute, MaxAttempts: 3}
	seeds := 3000
	if v := os.Getenv("INGOT_PROP_SEEDS"); v != "" {
		seeds, _ = strconv.Atoi(v)
	}
	if testing.Short() {
		seeds = 300
	}
	first, trace := uint64(0), false
	opsSeen, volOps, cycles, made := 0, 0, 0, 0
	if v := os.Getenv("INGOT_PROP_SEED"); v != "" { // replay one seed with a trace
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		first, seeds, trace = n, 1, true
	}
	for seed := first; seed < first+uint64(seeds); seed++ {
		m := newModel(seed, 1+int(seed%4))
		s := &Server{ID: "11111111-1111-1111-1111-111111111111", Name: "p", Desired: DesiredActive, Phase: PhasePending,
			Spec: Spec{ResourceClass: "rc", Networks: []string{"n"}}, CreatedAt: t0, Deadline: t0.Add(c.BuildTimeout), CreateRequestID: "req-c"}
		switch {
		case seed%4 == 3: // a quarter boot from a volume made from an image, with a blank one made beside an existing one
			s.Spec.Volumes = []VolumeRef{{BootIndex: 0, Source: SourceImage, ImageID: "img", SizeGB: 10, DeleteOnTermination: m.rng.IntN(2) == 0},
				{ID: "v-data", BootIndex: -1}, {BootIndex: -1, Source: SourceBlank, SizeGB: 1, DeleteOnTermination: m.rng.IntN(2) == 0}}
			s.VolumeToken = "tok"
		case seed%2 == 1: // a quarter boot from an existing volume and attach another
			s.Spec.Volumes = []VolumeRef{{ID: "v-boot", BootIndex: 0}, {ID: "v-data", BootIndex: -1}}
		default:
			m.volsHeld = false
		}
		deleteAt := -1
		if m.rng.IntN(3) == 0 {
			deleteAt = m.rng.IntN(200)
		}
		deletedSeen := false
		ops := 0
		for step := 0; step < 2000; step++ {
			if step < 300 && m.rng.IntN(8) == 0 {
				m.fault(s)
			}
			if step == 300 {
				m.down = false // heal Ironic so release can finish
			}
			if step == deleteAt {
				s.Desired, s.DeleteRequestedAt, s.DeleteRequestID = DesiredDeleted, m.now, "req-d"
			}
			if step < 400 && m.rng.IntN(10) == 0 { // the user asks for a day-2 operation, as the API would
				kinds := []OpKind{OpReboot, OpStop, OpStart, OpRebuild, OpRescue, OpUnrescue, OpReset, OpAttachInterface, OpDetachInterface,
					OpAttachVolume, OpDetachVolume}
				k, hard := kinds[m.rng.IntN(len(kinds))], m.rng.IntN(2) == 0
				to := []string{ResetError, ResetActive}[m.rng.IntN(2)]
				ok := Allowed(s, k, hard) == nil
				if k == OpReset {
					ok = AllowedReset(s, to) == nil
				}
				if ok {
					s = s.Clone()
					s.Op = Op{Kind: k, Hard: hard, RequestID: fmt.Sprintf("req-%d", step), At: m.now, ResetTo: to}
					switch k {
					case OpAttachVolume: // the API lists and holds the volume in the same write
						s.Op.VolumeID = fmt.Sprintf("v-att-%d", step)
						s.Spec.Volumes = append(s.Spec.Volumes, VolumeRef{ID: s.Op.VolumeID, BootIndex: -1})
						m.volsHeld = true
					case OpDetachVolume:
						s.Op.VolumeID = "v-data"
					}
					s.OpGen++
					ops++
					if s.Op.VolumeID != "" {
						volOps++
					}
				}
			}
			m.settle()
			// I8: a volume has targets on at most one node at any time.
			if len(m.tgts) > 1 {
				t.Fatalf("seed %d step %d: our volume targets on %d nodes at once (I8): %v", seed, step, len(m.tgts), m.tgts)
			}
			down := false
			for range 12 {
				v := m.view(s)
				a := Decide(Input{Server: s, Node: v, Now: m.now, IronicDown: down}, c)
				if trace {
					t.Logf("step %d phase %s node %s view %+v -> %v %s", step, s.Phase, s.NodeID, v, a.Kind, a.Why)
				}
				if a.Kind == KindWait {
					break
				}
				if a.Kind == KindSave {
					if msg := cycleEnd(s, a.Next, a.Events, &cycles); msg != "" {
						t.Fatalf("seed %d step %d: %s", seed, step, msg)
					}
					s = a.Next
					continue
				}
				ap := Apply(s, a, m.exec(s, a), m.now, c)
				if m.violation != "" {
					t.Fatalf("seed %d step %d: %s", seed, step, m.violation)
				}
				down = ap.IronicDown
				if msg := cycleEnd(s, ap.Next, ap.Events, &cycles); ap.Next != nil && msg != "" {
					t.Fatalf("seed %d step %d: %s", seed, step, msg)
				}
				if ap.Next != nil {
					s = ap.Next
				}
				if ap.Stop {
					break
				}
			}
			listed(t, s, fmt.Sprintf("seed %d step %d", seed, step))
			if s.Desired == DesiredDeleted {
				if st := Nova(s); !st.ShowsDelete() {
					t.Fatalf("seed %d step %d: deleted server shows %s (I2)", seed, step, st.Status)
				}
				deletedSeen = true
			}
			deadline := s.Deadline
			if s.Desired == DesiredDeleted {
				deadline = s.DeleteRequestedAt.Add(c.DeleteTimeout)
			}
			if !s.Phase.Stable() && m.now.After(deadline.Add(tick)) {
				t.Fatalf("seed %d step %d: phase %s past deadline (I1)", seed, step, s.Phase)
			}
			if step > 300 && s.Phase.Stable() && !s.NeedsWork() {
				break
			}
			m.now = m.now.Add(tick)
		}
		if s.NeedsWork() {
			t.Fatalf("seed %d (replay: INGOT_PROP_SEED=%[1]d go test -run TestConvergesFromAnySchedule ./internal/lifecycle): never settled: phase %s node %q ports %v", seed, s.Phase, s.NodeID, s.PortsAllocated)
		}
		if deletedSeen && s.Phase != PhaseDeleted {
			t.Fatalf("seed %d: delete accepted but phase %s", seed, s.Phase)
		}
		if s.Phase == PhaseError && s.Fault == nil {
			t.Fatalf("seed %d: ERROR without fault (I5)", seed)
		}
		opsSeen += ops
		made += checkMade(t, seed, m, s)
		// I3: nothing held once stable (a built server at rest holds its own node).
		if !s.Phase.Up() && !s.HeldInError() {
			if m.ports != 0 {
				t.Fatalf("seed %d: %d ports leaked by a %s server", seed, m.ports, s.Phase)
			}
			for id, n := range m.nodes {
				if n.inst == s.ID {
					t.Fatalf("seed %d: node %s still carries our instance_uuid (%s) for a %s server", seed, id, n.state, s.Phase)
				}
				if m.vifs[id] && !m.stranded[id] {
					t.Fatalf("seed %d: VIF left on node %s for a %s server", seed, id, s.Phase)
				}
				// A node deployed for us whose instance_uuid was taken away
				// behind our back keeps its targets: powering it off to remove
				// them would touch a node no longer ours (I7).
				if m.tgts[id] && !m.orphaned[id] && !m.stranded[id] {
					t.Fatalf("seed %d: volume targets left on node %s for a %s server", seed, id, s.Phase)
				}
			}
			if m.volsHeld {
				t.Fatalf("seed %d: volumes still held by a %s server", seed, s.Phase)
			}
		} else if n, ok := m.nodes[s.NodeID]; !ok || n.inst != s.ID || (n.state != "active" && n.state != "rescue") {
			t.Fatalf("seed %d: %s server but its node is %+v", seed, s.Phase, n)
		}
	}
	if opsSeen == 0 && seeds > 100 {
		t.Errorf("no day-2 operation was ever allowed: the schedule does not exercise them")
	}
	if volOps == 0 && seeds > 100 {
		t.Errorf("no volume attach or detach was ever allowed")
	}
	if made == 0 && seeds > 100 {
		t.Errorf("no server ever came up on volumes it made")
	}
	if cycles == 0 && seeds > 100 {
		t.Errorf("no detach from ACTIVE ever finished with the node powered on again")
	}
	t.Logf("%d seeds, %d day-2 operations (%d volume attaches and detaches, %d detaches from ACTIVE back to ACTIVE)", seeds, opsSeen, volOps, cycles)
}

// checkMade checks the volumes the build made once the server is stable:
// one per entry however many retries (a lost answer found by name), held
// and available while the server is up; otherwise none held, those with
// delete_on_termination gone, the others left. It reports 1 when the
// server is up on made volumes.
func checkMade(t *testing.T, seed uint64, m *model, s *Server) int {
	t.Helper()
	for name, n := range m.creates {
		if n > 1 {
			t.Fatalf("seed %d: %d volumes made for %s", seed, n, name)
		}
	}
	up := 0
	for i, ref := range s.Volumes() {
		if !ref.Made() {
			continue
		}
		v := m.made[VolumeName(s.ID, i)]
		switch {
		case s.Phase.Up() || s.HeldInError():
			if v == nil || !v.held || v.status != "available" || ref.ID != v.id || !ref.Ready {
				t.Fatalf("seed %d: %s server, its made volume %d is %+v (entry %+v)", seed, s.Phase, i, v, ref)
			}
			up = 1
		case v != nil && v.held:
			t.Fatalf("seed %d: made volume %d still held by a %s server", seed, i, s.Phase)
		case v != nil && Destroys(s, ref):
			t.Fatalf("seed %d: made volume %d with delete_on_termination left by a %s server", seed, i, s.Phase)
		}
	}
	if s.VolumeToken != "" && (ToMake(s) < 0 || s.VolumesReleased) {
		t.Fatalf("seed %d: the caller's token kept with nothing left to make", seed)
	}
	return up
}

// cycleEnd checks the end of a detach from ACTIVE: the server is ACTIVE
// again, or an error says why not (never powered off silently); ok counts
// those back to ACTIVE.
func cycleEnd(s, n *Server, evs []Event, ok *int) string {
	if n == nil || s.Cycle == "" || !s.OpPending() || n.OpPending() || n.Phase == PhaseDeleting {
		return ""
	}
	if n.Phase == PhaseActive && n.PowerSeen == PowerOn {
		*ok++
		return ""
	}
	for _, e := range evs {
		if e.Result == ResultError {
			return ""
		}
	}
	return fmt.Sprintf("a detach from ACTIVE ended %s (power %q) with no error", n.Phase, n.PowerSeen)
}
