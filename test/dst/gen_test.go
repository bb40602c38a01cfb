package dst

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// event is one thing that happens between two ticks.
type event struct {
	name   string
	weight int
	run    func(ctx context.Context, w *world) (string, error)
}

// events is the generator's menu. Weights favour the user's requests so
// that most seeds build and delete several servers while faults land on them.
var events = []event{
	{"nothing", 6, func(context.Context, *world) (string, error) { return "", nil }},
	{"create", 8, evCreate},
	{"delete", 4, evDelete},
	{"delete-in-flight", 3, evDeleteInFlight},
	{"node-delete", 1, onNode(func(w *world, n string) error { return w.sim.DeleteOutOfBand(n) })},
	{"teardown", 2, onNode(func(w *world, n string) error { return w.sim.TeardownOutOfBand(n) })},
	{"remove-instance", 2, evRemoveInstance},
	{"maintenance-on", 2, onNode(func(w *world, n string) error { return w.sim.SetMaintenance(n, true, "dst") })},
	{"maintenance-off", 2, onNode(func(w *world, n string) error { return w.sim.SetMaintenance(n, false, "") })},
	{"fail-next-deploy", 3, onNode(func(w *world, n string) error { return w.sim.FailNextDeploy(n, "dst: deploy failed") })},
	{"hold-deploy", 1, onNode(func(w *world, n string) error { return w.sim.HoldDeploy(n) })},
	{"5xx", 2, evFault(ironicsim.Fault500)},
	{"503", 1, evFault(ironicsim.Fault503)},
	{"locked", 2, evFault(ironicsim.FaultLocked)},
	{"drop", 1, evFault(ironicsim.FaultDrop)},
	{"lost-answers", 2, func(_ context.Context, w *world) (string, error) {
		w.tr.lost = 1 + w.rng.IntN(3)
		return fmt.Sprint(w.tr.lost), nil
	}},
	{"outage", 1, func(_ context.Context, w *world) (string, error) {
		w.tr.down = 1 + w.rng.IntN(4)
		return fmt.Sprint(w.tr.down), nil
	}},
	// Longer than a build or delete deadline: I1 must hold with Ironic away.
	{"long-outage", 1, func(_ context.Context, w *world) (string, error) {
		w.tr.down = 20 + w.rng.IntN(30)
		return fmt.Sprint(w.tr.down), nil
	}},
	{"ironic-restart", 1, func(_ context.Context, w *world) (string, error) { w.sim.Restart(); return "", nil }},
	{"crash-at-step", 3, func(_ context.Context, w *world) (string, error) {
		w.crashAt = w.hooks + 1 + w.rng.IntN(10)
		return fmt.Sprint(w.crashAt - w.hooks), nil
	}},
	{"crash-after-call", 2, func(_ context.Context, w *world) (string, error) {
		w.tr.crashNext = 1 + w.rng.IntN(3)
		return fmt.Sprint(w.tr.crashNext), nil
	}},
	{"clock-jump", 2, func(_ context.Context, w *world) (string, error) {
		d := time.Duration(1+w.rng.IntN(20)) * 30 * time.Second
		w.clk.Advance(d)
		return d.String(), nil
	}},
	{"foreign-reserve", 1, evForeign},
	{"operation", 10, evOperation},
	{"power-out-of-band", 1, evPowerOutOfBand},
}

var totalWeight, replicaWeight = sumWeights(events), sumWeights(replicaEvents)

// sumWeights is a menu's total weight.
func sumWeights(es []event) int {
	n := 0
	for _, e := range es {
		n += e.weight
	}
	return n
}

func (w *world) pick() event {
	menu, total := events, totalWeight
	if len(w.reps) > 1 {
		menu, total = append(append([]event(nil), events...), replicaEvents...), totalWeight+replicaWeight
	}
	if w.p.adopt {
		menu, total = append(append([]event(nil), menu...), adoptEvents...), total+adoptWeight
	}
	r := w.rng.IntN(total)
	for _, e := range menu {
		if r < e.weight {
			return e
		}
		r -= e.weight
	}
	return events[0]
}

func evCreate(ctx context.Context, w *world) (string, error) {
	if len(w.servers)-len(w.deleted) >= maxServers {
		return "skipped", nil
	}
	id, err := w.createServer(ctx)
	if id == "" && err == nil {
		return "refused (volume in use)", nil
	}
	return w.sname(id), err
}

func evDelete(ctx context.Context, w *world) (string, error) {
	var live []string
	for _, id := range w.servers {
		if !w.deleted[id] {
			live = append(live, id)
		}
	}
	if len(live) == 0 {
		return "skipped", nil
	}
	id := live[w.rng.IntN(len(live))]
	return w.sname(id), w.deleteServer(ctx, id)
}

// evDeleteInFlight plans a user delete at a random step boundary of the
// next tick, while a build step is in flight.
func evDeleteInFlight(_ context.Context, w *world) (string, error) {
	var live []string
	for _, id := range w.servers {
		if !w.deleted[id] {
			live = append(live, id)
		}
	}
	if len(live) == 0 {
		return "skipped", nil
	}
	w.midDel = live[w.rng.IntN(len(live))]
	w.midAt = w.hooks + 1 + w.rng.IntN(8)
	return fmt.Sprintf("%s in %d", w.sname(w.midDel), w.midAt-w.hooks), nil
}

// onNode applies an operator action to a random node that is not another
// tenant's; an action the node's state refuses is simply skipped.
func onNode(f func(w *world, node string) error) func(context.Context, *world) (string, error) {
	return func(_ context.Context, w *world) (string, error) {
		n := w.nodes[w.rng.IntN(len(w.nodes))]
		if _, ok := w.foreign[n]; ok {
			return "skipped", nil
		}
		if err := f(w, n); err != nil {
			return w.nname(n) + " refused", nil
		}
		return w.nname(n), nil
	}
}

func evRemoveInstance(_ context.Context, w *world) (string, error) {
	n := w.nodes[w.rng.IntN(len(w.nodes))]
	snap, ok := w.sim.Node(n)
	if !ok || snap.InstanceUUID == "" {
		return "skipped", nil
	}
	if _, ours := w.ours[snap.InstanceUUID]; !ours {
		return "skipped", nil
	}
	if snap.ProvisionState != "available" {
		// Deployed and no longer ours: I7 forbids ingot to undeploy it, so
		// it stays in Ironic for the operator.
		w.orphans[n] = true
	}
	return w.nname(n), w.sim.RemoveInstanceUUID(n)
}

func evFault(kind ironicsim.FaultKind) func(context.Context, *world) (string, error) {
	return func(_ context.Context, w *world) (string, error) {
		paths := []string{"", "/v1/nodes", "/v1/nodes/*", "/v1/nodes/*/states/provision", "/v1/nodes/*/vifs/**"}
		f := ironicsim.Fault{Kind: kind, Path: paths[w.rng.IntN(len(paths))], Count: 1 + w.rng.IntN(4)}
		if kind == ironicsim.FaultLocked {
			f.Path = "/v1/nodes/**"
		}
		return fmt.Sprintf("%s x%d", f.Path, f.Count), w.sim.InjectFault(f)
	}
}

// evOperation asks for a day-2 operation on a live server as the API does:
// refused (nothing recorded) unless lifecycle.Allowed lets it through.
func evOperation(ctx context.Context, w *world) (string, error) {
	var live []string
	for _, id := range w.servers {
		if !w.deleted[id] {
			live = append(live, id)
		}
	}
	if len(live) == 0 {
		return "skipped", nil
	}
	id := live[w.rng.IntN(len(live))]
	kinds := []lifecycle.OpKind{lifecycle.OpReboot, lifecycle.OpStop, lifecycle.OpStart, lifecycle.OpRebuild,
		lifecycle.OpRescue, lifecycle.OpUnrescue, lifecycle.OpReset, lifecycle.OpAttachInterface, lifecycle.OpDetachInterface,
		lifecycle.OpAttachVolume, lifecycle.OpDetachVolume}
	k, hard := kinds[w.rng.IntN(len(kinds))], w.rng.IntN(2) == 0
	to := []string{lifecycle.ResetError, lifecycle.ResetActive}[w.rng.IntN(2)]
	network, port := "", ""
	if k == lifecycle.OpAttachInterface || k == lifecycle.OpDetachInterface {
		// As the API: an attach makes a port with a new id (a second one
		// on the network too); a detach names one the server has.
		network, port = w.networkID(), fmt.Sprintf("%08x-0000-4000-8000-%012x", w.rng.Uint32(), w.rng.Uint64()&(1<<48-1))
		if k == lifecycle.OpDetachInterface {
			ports, err := w.st.Ports(ctx, id)
			if err != nil {
				return "", fmt.Errorf("ports of %s: %w", w.sname(id), err)
			}
			if len(ports) == 0 {
				return fmt.Sprintf("%s %s refused", k, w.sname(id)), nil
			}
			p := ports[w.rng.IntN(len(ports))]
			network, port = p.NetworkID, p.ID
		}
	}
	now := w.clk.Now().UTC()
	req := fmt.Sprintf("req-%s-%d", k, w.hooks)
	act := &store.ActionRecord{RequestID: req, Action: string(k), StartTime: now}
	refused := errors.New("refused")
	fromActive := false
	vol, err := w.volumeFor(ctx, id, k)
	if err != nil || (vol == "" && (k == lifecycle.OpAttachVolume || k == lifecycle.OpDetachVolume)) {
		return fmt.Sprintf("%s %s: no volume for it", k, w.sname(id)), err
	}
	_, err = w.st.UpdateServer(ctx, id, act, func(s *lifecycle.Server) error {
		if k == lifecycle.OpReset {
			if lifecycle.AllowedReset(s, to) != nil {
				return refused
			}
		} else if lifecycle.Allowed(s, k, hard) != nil {
			return refused
		}
		fromActive = k == lifecycle.OpDetachVolume && s.Phase == lifecycle.PhaseActive
		s.Op = lifecycle.Op{Kind: k, Hard: hard, RequestID: req, At: now, RescuePassword: "pw", ResetTo: to, Network: network, Port: port, VolumeID: vol}
		if k == lifecycle.OpDetachVolume {
			w.detached[vol] = true
		}
		if k == lifecycle.OpAttachVolume { // listed and held in this write, as the API does
			s.Spec.Volumes = append(slices.DeleteFunc(s.Spec.Volumes, func(r lifecycle.VolumeRef) bool { return r.ID == vol }),
				lifecycle.VolumeRef{ID: vol, BootIndex: -1})
		}
		s.OpGen++
		s.UpdatedAt = now
		if k == lifecycle.OpRebuild {
			s.Spec.ImageSource = fmt.Sprintf("http://images/rebuilt-%d.qcow2", w.hooks)
		}
		return nil
	})
	switch {
	case errors.Is(err, refused), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrVolumeInUse):
		return fmt.Sprintf("%s %s refused", k, w.sname(id)), nil
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", k, w.sname(id), err)
	}
	w.ops++
	if fromActive {
		w.activeDetaches++
		return fmt.Sprintf("%s %s from ACTIVE", k, w.sname(id)), nil
	}
	return fmt.Sprintf("%s %s (hard %v)", k, w.sname(id), hard), nil
}

// evPowerOutOfBand powers a node off or on behind ingot's back, through the
// simulator's API as an operator would (S20).
func evPowerOutOfBand(_ context.Context, w *world) (string, error) {
	n := w.nodes[w.rng.IntN(len(w.nodes))]
	if _, ok := w.foreign[n]; ok {
		return "skipped", nil
	}
	snap, ok := w.sim.Node(n)
	if !ok {
		return "skipped", nil
	}
	target := "power off"
	if snap.PowerState == "power off" {
		target = "power on"
	}
	req := httptest.NewRequest(http.MethodPut, "/v1/nodes/"+n+"/states/power", strings.NewReader(fmt.Sprintf(`{"target": %q}`, target)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	rec := httptest.NewRecorder()
	if !serve(w.sim.Handler(), rec, req) || rec.Code != http.StatusAccepted {
		return w.nname(n) + fmt.Sprintf(" refused (%d)", rec.Code), nil
	}
	return w.nname(n) + " " + target, nil
}

// evForeign reserves an idle node for "another tenant", straight through the
// simulator's API as another service would. From then on ingot must never
// change it (I7).
func evForeign(_ context.Context, w *world) (string, error) {
	if len(w.foreign) >= len(w.nodes)/3 {
		return "skipped", nil
	}
	n := w.nodes[w.rng.IntN(len(w.nodes))]
	snap, ok := w.sim.Node(n)
	if !ok || snap.InstanceUUID != "" || len(snap.VIFs) != 0 || w.orphans[n] {
		return "skipped", nil
	}
	other := w.uuid()
	body := fmt.Sprintf(`[{"op": "add", "path": "/instance_uuid", "value": %q}]`, other)
	req := httptest.NewRequest(http.MethodPatch, "/v1/nodes/"+n, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	rec := httptest.NewRecorder()
	if !serve(w.sim.Handler(), rec, req) || rec.Code != http.StatusOK {
		return w.nname(n) + fmt.Sprintf(" refused (%d)", rec.Code), nil
	}
	w.foreign[n] = other
	return w.nname(n), nil
}

// heal ends every fault so the system can reach quiescence.
func (w *world) heal() {
	w.sim.ClearFaults()
	w.tr.down, w.tr.lost, w.tr.crashNext = 0, 0, 0
	w.crashAt = 0
	if err := w.healReplicas(); err != nil {
		w.violate("heal: %v", err)
	}
	for _, n := range w.nodes {
		if _, ok := w.foreign[n]; ok {
			continue
		}
		_ = w.sim.SetMaintenance(n, false, "")
		_ = w.sim.ReleaseDeploy(n)
	}
}

func (w *world) sname(id string) string {
	if i, ok := w.ours[id]; ok {
		return fmt.Sprintf("s%d", i)
	}
	if id == "" {
		return "-"
	}
	return "other"
}

func (w *world) nname(n string) string {
	for i, id := range w.nodes {
		if id == n {
			return fmt.Sprintf("n%d", i)
		}
	}
	if n == "" {
		return "-"
	}
	return "n?"
}

// phaseOf is a short form of a stored record for the trace.
func phaseOf(s *lifecycle.Server) string {
	d := ""
	if s.Desired == lifecycle.DesiredDeleted {
		d = "!"
	}
	r := ""
	if s.Fault != nil {
		r = "/" + string(s.Fault.Reason)
	}
	return fmt.Sprintf("%s%s%s", d, s.Phase, r)
}

func (w *world) vname(id string) string {
	for i, v := range w.vols {
		if v == id {
			return fmt.Sprintf("v%d", i)
		}
	}
	return "v?"
}

// volumeFor picks the volume of an attach (a free one) or a detach (a
// data volume the server holds), as a user would; "" for none.
func (w *world) volumeFor(ctx context.Context, id string, k lifecycle.OpKind) (string, error) {
	if k != lifecycle.OpAttachVolume && k != lifecycle.OpDetachVolume {
		return "", nil
	}
	vols, err := w.st.ListVolumes(ctx, "", 100)
	if err != nil {
		return "", err
	}
	var fit []string
	for _, v := range vols {
		free := v.ServerID == "" && v.Status == store.VolumeAvailable
		if (k == lifecycle.OpAttachVolume && free) || (k == lifecycle.OpDetachVolume && v.ServerID == id && v.BootIndex != 0) {
			fit = append(fit, v.ID)
		}
	}
	if len(fit) == 0 {
		return "", nil
	}
	return fit[w.rng.IntN(len(fit))], nil
}
