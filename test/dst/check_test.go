package dst

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// buildOrder ranks the build phases; a delete-accepted server must never
// move forward in it (I2: no build step overwrites a pending delete).
var buildOrder = map[lifecycle.Phase]int{
	lifecycle.PhasePending: 1, lifecycle.PhaseReserving: 2, lifecycle.PhaseNetworking: 3,
	lifecycle.PhaseVolumes: 4, lifecycle.PhaseDeploying: 5, lifecycle.PhaseActive: 6,
	// An operation never starts once a delete is accepted.
	lifecycle.PhaseRebooting: 7, lifecycle.PhasePoweringOff: 7, lifecycle.PhasePoweringOn: 7,
	lifecycle.PhaseRebuilding: 7, lifecycle.PhaseRescuing: 7, lifecycle.PhaseUnrescuing: 7,
	lifecycle.PhaseAttachingVolume: 7, lifecycle.PhaseDetachingVolume: 7,
}

// checkStep checks what must hold after every step: I1, I2, I4, I6 (I7 is
// checked on every call to Ironic by the transport).
func (w *world) checkStep(v view) {
	now := w.clk.Now()
	nodeOf := map[string]string{}
	for _, id := range w.servers {
		s, ok := v.servers[id]
		if !ok {
			w.violate("I6: server %s accepted but not readable", w.sname(id))
			continue
		}
		name := w.sname(id)
		if w.deleted[id] {
			if s.Desired != lifecycle.DesiredDeleted {
				w.violate("I6: delete of %s accepted but the record wants %s", name, s.Desired)
			}
			if st := lifecycle.Nova(s); !st.ShowsDelete() {
				w.violate("I2: %s shows %s after its delete was accepted (phase %s)", name, st.Status, s.Phase)
			}
			prev := w.lastPh[id]
			if buildOrder[s.Phase] > buildOrder[prev] && buildOrder[prev] > 0 {
				w.violate("I2: %s moved from %s to %s after its delete was accepted", name, prev, s.Phase)
			}
			if s.Phase != lifecycle.PhaseDeleted && now.After(s.DeleteRequestedAt.Add(lcfg.DeleteTimeout+w.slack())) {
				w.violate("I1: %s still %s past its delete deadline", name, s.Phase)
			}
		} else {
			if s.Desired != lifecycle.DesiredActive {
				w.violate("I6: %s wants %s but no delete was accepted", name, s.Desired)
			}
			if s.Phase == lifecycle.PhaseDeleted || s.Phase == lifecycle.PhaseDeleting {
				w.violate("I6: %s is %s but the user never deleted it", name, s.Phase)
			}
			if !s.Phase.Stable() && now.After(s.Deadline.Add(w.slack())) {
				w.violate("I1: %s still %s past its build deadline", name, s.Phase)
			}
		}
		if s.Phase == lifecycle.PhaseError {
			w.checkFault(name, s)
		}
		if s.NodeID != "" {
			if other, dup := nodeOf[s.NodeID]; dup {
				w.violate("I4: %s and %s both hold node %s", other, name, w.nname(s.NodeID))
			}
			nodeOf[s.NodeID] = name
		}
		w.lastPh[id] = s.Phase
	}
	carried := map[string]string{}
	for _, n := range v.nodes {
		if n.InstanceUUID == "" {
			continue
		}
		if f, ok := w.foreign[n.UUID]; ok && n.InstanceUUID != f {
			w.violate("I7: node %s of another tenant now carries %s", w.nname(n.UUID), w.sname(n.InstanceUUID))
		}
		if _, ours := w.ours[n.InstanceUUID]; !ours {
			continue
		}
		if prev, dup := carried[n.InstanceUUID]; dup {
			w.violate("I4: server %s reserved on nodes %s and %s", w.sname(n.InstanceUUID), prev, w.nname(n.UUID))
		}
		carried[n.InstanceUUID] = w.nname(n.UUID)
	}
	w.checkOneNodePerVolume()
}

// checkOneNodePerVolume checks I8 after every step: no volume has Ironic
// targets on two nodes, and a volume in use is carried by its server's node
// alone.
func (w *world) checkOneNodePerVolume() {
	on := map[string]string{} // volume id -> a node carrying a target of it
	for _, n := range w.nodes {
		for _, vid := range w.volumeTargetIDs(n) {
			if prev, ok := on[vid]; ok && prev != n {
				w.violate("I8: volume %s has targets on nodes %s and %s", w.vname(vid), w.nname(prev), w.nname(n))
			}
			on[vid] = n
		}
	}
	vols, err := w.st.ListVolumes(context.Background(), "", 100)
	if err != nil {
		w.violate("volumes: %v", err)
		return
	}
	for _, v := range vols {
		if n, ok := on[v.ID]; ok && v.Status == store.VolumeInUse && v.NodeID != n {
			w.violate("I8: volume %s is in-use on node %s while a target of it is on node %s", v.Name, w.nname(v.NodeID), w.nname(n))
		}
	}
}

// checkFinal checks, once the healed world is quiet, that every server is
// stable and nothing leaks (I1, I3, I4, I5).
func (w *world) checkFinal() {
	ctx := context.Background()
	live := map[string]*lifecycle.Server{}
	for _, id := range w.servers {
		s, err := w.st.GetServer(ctx, id)
		if err != nil {
			w.violate("I6: %s: %v", w.sname(id), err)
			continue
		}
		name := w.sname(id)
		if !s.Phase.Stable() || s.NeedsWork() {
			w.violate("I1: %s not settled (%s)", name, phaseOf(s))
		}
		if w.deleted[id] && s.Phase != lifecycle.PhaseDeleted {
			w.violate("I2: %s not deleted at quiescence (%s)", name, phaseOf(s))
		}
		ports, err := w.st.Ports(ctx, id)
		if err != nil {
			w.violate("ports of %s: %v", name, err)
			continue
		}
		if s.Phase.Up() || s.HeldInError() { // an admin's reset to error keeps the machine
			live[id] = s
			if len(ports) != len(s.Networks()) {
				w.violate("active %s has %d ports, want %d", name, len(ports), len(s.Networks()))
			}
			for _, p := range ports {
				if p.VIFNode != s.NodeID {
					w.violate("active %s: port recorded on node %q, server on %s", name, w.nname(p.VIFNode), w.nname(s.NodeID))
				}
			}
			continue
		}
		if len(ports) != 0 {
			w.violate("I3: %s %s still has %d port(s)", s.Phase, name, len(ports))
		}
		if s.HoldsVolumes() {
			w.violate("I3: %s %s still holds its volumes", s.Phase, name)
		}
		if s.NodeID != "" {
			w.violate("I3: %s %s still holds node %s", s.Phase, name, w.nname(s.NodeID))
		}
	}
	holders := map[string]string{}
	for _, n := range w.sim.Nodes() {
		nn := w.nname(n.UUID)
		if _, ok := w.foreign[n.UUID]; ok {
			continue // another tenant's: checked by I7
		}
		if n.InstanceUUID == "" {
			if len(n.VIFs) != 0 {
				w.violate("I3: node %s (%s) keeps VIFs %d with no instance", nn, n.ProvisionState, len(n.VIFs))
			}
			if n.ProvisionState != "available" && !w.orphans[n.UUID] {
				w.violate("I3: released node %s is %s, not available", nn, n.ProvisionState)
			}
			continue
		}
		s, ok := live[n.InstanceUUID]
		if !ok {
			w.violate("I3: node %s (%s) still carries non-live server %s", nn, n.ProvisionState, w.sname(n.InstanceUUID))
			if len(n.VIFs) != 0 {
				w.violate("I3: node %s keeps %d VIF(s) of non-live server %s", nn, len(n.VIFs), w.sname(n.InstanceUUID))
			}
			continue
		}
		holders[n.InstanceUUID] = nn
		want := "active"
		if s.Phase == lifecycle.PhaseRescued || (s.HeldInError() && n.ProvisionState == "rescue") {
			want = "rescue" // reset to error keeps a rescued machine as it is
		}
		if s.NodeID != n.UUID || n.ProvisionState != want {
			w.violate("node %s (%s) carries %s which holds %s", nn, n.ProvisionState, w.sname(s.ID), w.nname(s.NodeID))
		}
		ports, _ := w.st.Ports(ctx, s.ID)
		for _, p := range ports {
			if !slices.Contains(n.VIFs, p.VIF()) {
				w.violate("active %s: port not attached to node %s", w.sname(s.ID), nn)
			}
		}
		if len(n.VIFs) != len(ports) {
			w.violate("I3: node %s has %d VIFs, its server %s %d ports", nn, len(n.VIFs), w.sname(s.ID), len(ports))
		}
	}
	for id := range live {
		if _, ok := holders[id]; !ok {
			w.violate("active %s: no node carries its instance_uuid", w.sname(id))
		}
	}
	w.checkVolumes(live)
	liveIDs := map[string]bool{}
	for id := range live {
		liveIDs[id] = true
	}
	w.checkNeutron(liveIDs)
}

// checkVolumes checks I3 for volumes: a volume is held only by a live
// server, in use on its node; every other volume is available; and only
// the node of a live server with volumes carries volume targets.
func (w *world) checkVolumes(live map[string]*lifecycle.Server) {
	ctx := context.Background()
	vols, err := w.st.ListVolumes(ctx, "", 100)
	if err != nil {
		w.violate("volumes: %v", err)
		return
	}
	w.checkMadeVolumes(vols)
	for _, v := range vols {
		if v.ServerID == "" {
			if v.Status == store.VolumeError {
				if _, ok := w.foreign[v.NodeID]; !ok || v.StatusReason == "" {
					w.violate("I3: volume %s stranded on node %s, which is not another tenant's (or no reason)", v.Name, w.nname(v.NodeID))
				}
				continue
			}
			if v.Status != store.VolumeAvailable || v.NodeID != "" {
				w.violate("I3: free volume %s is %s on node %s", v.Name, v.Status, w.nname(v.NodeID))
			}
			continue
		}
		s, ok := live[v.ServerID]
		if !ok {
			w.violate("I3: volume %s is %s, held by non-live server %s", v.Name, v.Status, w.sname(v.ServerID))
			continue
		}
		if v.Status != store.VolumeInUse || v.NodeID != s.NodeID {
			w.violate("volume %s of active %s is %s on node %s, server on %s", v.Name, w.sname(s.ID), v.Status, w.nname(v.NodeID), w.nname(s.NodeID))
		}
	}
	for _, n := range w.nodes {
		if _, ok := w.foreign[n]; ok {
			// ingot may not touch it (I7). A target of ours can be left there
			// (our instance_uuid left the node before our targets did — removed
			// behind our back, or during the detach's power-off wait — and
			// another tenant reserved it): its volume must then be stranded
			// (status error with a reason), never handed out again. Seeds 7497
			// and 9735 found it freed instead.
			for _, vid := range w.volumeTargetIDs(n) {
				v, err := w.st.GetVolume(ctx, vid)
				if err != nil {
					continue // not one of ours
				}
				if v.Status != store.VolumeError || v.StatusReason == "" {
					w.violate("I3: node %s of another tenant carries a target of volume %s, which is %s", w.nname(n), v.Name, v.Status)
				}
			}
			continue
		}
		targets := w.volumeTargets(n)
		want := 0
		if snap, ok := w.sim.Node(n); ok {
			if _, ok := live[snap.InstanceUUID]; ok {
				// The volumes the registry says it holds (Spec.Volumes also
				// keeps those attached after the build and detached since).
				held, err := w.st.ServerVolumes(ctx, snap.InstanceUUID)
				if err != nil {
					w.violate("volumes of %s: %v", w.sname(snap.InstanceUUID), err)
				}
				want = len(held)
			}
		}
		if targets != want {
			w.violate("I3: node %s carries %d volume target(s), want %d", w.nname(n), targets, want)
		}
	}
}

// volumeTargets counts the volume targets Ironic shows on a node (0 when
// the node is gone: its targets went with it).
func (w *world) volumeTargets(node string) int { return len(w.volumeTargetIDs(node)) }

// volumeTargetIDs lists the volume ids of the targets Ironic shows on a node.
func (w *world) volumeTargetIDs(node string) []string {
	req := httptest.NewRequest(http.MethodGet, "/v1/nodes/"+node+"/volume/targets", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	rec := httptest.NewRecorder()
	if !serve(w.sim.Handler(), rec, req) || rec.Code != http.StatusOK {
		return nil
	}
	var out struct {
		Targets []struct {
			VolumeID string `json:"volume_id"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		w.violate("volume targets of %s: %v", w.nname(node), err)
	}
	ids := make([]string, 0, len(out.Targets))
	for _, t := range out.Targets {
		ids = append(ids, t.VolumeID)
	}
	return ids
}

// checkFault checks I5: an ERROR has a fault with a reason, a message that
// names the node it happened on, the step, and — for a failure on a node —
// the attempt in the history.
func (w *world) checkFault(name string, s *lifecycle.Server) {
	f := s.Fault
	switch {
	case f == nil || f.Reason == "" || f.Message == "":
		w.violate("I5: %s is ERROR without a fault (%+v)", name, f)
	case f.Step == "":
		w.violate("I5: %s fault %s names no step", name, f.Reason)
	case f.Node != "" && !strings.Contains(f.Message, f.Node):
		w.violate("I5: %s fault %s on node %s: message %q does not name it", name, f.Reason, w.nname(f.Node), f.Message)
	case f.Reason.Reschedulable() && len(s.Attempts) == 0:
		w.violate("I5: %s fault %s with no attempt in the history", name, f.Reason)
	}
}

// checkMadeVolumes checks the volumes builds made (named for their
// server's block device): never two for one block device, and none with
// delete_on_termination left once its server gave it up.
func (w *world) checkMadeVolumes(vols []store.Volume) {
	seen := map[string]bool{}
	for _, v := range vols {
		if !strings.HasPrefix(v.Name, "ingot-") {
			continue
		}
		if seen[v.Name] {
			w.violate("two volumes made for block device %s", v.Name)
		}
		seen[v.Name] = true
		if v.ServerID != "" || w.detached[v.ID] {
			continue
		}
		if v.Status == string(lifecycle.VolumeError) && v.NodeID != "" {
			// Stranded: its target may be on a node another instance holds,
			// so it is never deleted (I8) until an operator removes it.
			continue
		}
		for _, id := range w.servers {
			s, err := w.st.GetServer(context.Background(), id)
			if err != nil {
				continue
			}
			for i, ref := range s.Volumes() {
				if ref.Made() && lifecycle.VolumeName(id, i) == v.Name && lifecycle.Destroys(s, ref) {
					w.violate("I3: volume %s made for %s with delete_on_termination left %s after its server (%s) gave it up", v.Name, w.sname(id), v.Status, s.Phase)
				}
			}
		}
	}
}

// transitioned checks a server's move to ACTIVE against the node as the
// simulator holds it at that instant (I12: a decision reads the node as
// Ironic shows it, never an older view of it). Nothing changes Ironic
// behind a replica's back in the middle of its pass, so a server going
// ACTIVE has its node active and carrying it. An admin's reset only
// writes the record; an operation given up at its deadline with the node
// unobserved goes back where it started from.
func (w *world) transitioned(before, next *lifecycle.Server) {
	if next.Phase != lifecycle.PhaseActive || before.Phase == lifecycle.PhaseActive || before.Op.Kind == lifecycle.OpReset ||
		next.PhaseSince.After(before.Deadline) {
		return
	}
	n, ok := w.sim.Node(next.NodeID)
	if !ok || n.ProvisionState != "active" || n.InstanceUUID != next.ID {
		w.violate("I12: %s went ACTIVE (from %s) while node %s is %s, carrying %s", w.sname(next.ID), before.Phase,
			w.nname(next.NodeID), n.ProvisionState, w.sname(n.InstanceUUID))
	}
}
