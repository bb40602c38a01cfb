package lifecycle

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

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
