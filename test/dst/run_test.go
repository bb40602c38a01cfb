package dst

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// result is what one seed's run produced.
type result struct {
	seed   int64
	hash   uint64
	errs   []string
	trace  []string // the last lines of the trace, for a failure report
	steps  int
	ticks  int
	crashs int
	ops    int // day-2 operations accepted
	// activeDetaches: volume detaches accepted from ACTIVE.
	activeDetaches int
	// With several replicas: pauses past a lease that fired, and leases
	// taken over from another replica.
	pauses, takeovers int
	// Saves refused because another server holds the node, or the lease was lost.
	nodeTaken, fenced int
	woken             int // work items notifications made run
	// midItems: work items run between a tick's bulk list and its steps.
	midItems int
}

func (r result) failed() bool { return len(r.errs) > 0 }

// runSeed runs one seed: the schedule with checks after every step, then
// heal, quiescence and the final checks.
func runSeed(seed int64, p params, dir string, template []byte) result {
	w, err := newWorld(seed, p, dir, template)
	if err != nil {
		return result{seed: seed, errs: []string{"setup: " + err.Error()}}
	}
	defer w.close()
	ctx := context.Background()
	ticks := 0
	for i := 0; i < p.steps && len(w.errs) == 0; i++ {
		e := w.pick()
		desc, err := e.run(ctx, w)
		if err != nil {
			w.violate("step %d %s: %v", i, e.name, err)
			break
		}
		w.trace.add(fmt.Sprintf("step %d: %s %s", i, e.name, desc))
		if err := w.advanceAndTick(); err != nil {
			w.violate("step %d: %v", i, err)
			break
		}
		ticks++
		w.checkStep(w.look())
	}
	if len(w.errs) == 0 {
		w.heal()
		w.trace.add("heal")
		n, err := w.quiesce()
		ticks += n
		if err != nil {
			w.violate("%v", err)
		}
	}
	if len(w.errs) == 0 {
		w.checkFinal()
	}
	return result{seed: seed, hash: w.trace.sum(), errs: w.errs, trace: w.trace.tail(), steps: p.steps, ticks: ticks, crashs: w.restarts, ops: w.ops, activeDetaches: w.activeDetaches,
		pauses: w.pauses, takeovers: w.takeovers, nodeTaken: w.nodeTaken, fenced: w.fenced, woken: w.woken, midItems: w.midItems}
}

func (w *world) advanceAndTick() error {
	w.clk.Advance(interval)
	if w.p.notify {
		// What changed while the clock ran is notified before the tick
		// looks: the work items see it first.
		if err := w.deliver(); err != nil {
			return err
		}
	}
	if err := w.tick(); err != nil {
		return err
	}
	if w.tr.down > 0 {
		w.tr.down--
	}
	return nil
}

// quiesce ticks until no server needs work and a drift pass has looked at
// every ACTIVE server since. Every deadline bounds it.
func (w *world) quiesce() (int, error) {
	limit := int((lcfg.BuildTimeout+lcfg.DeleteTimeout+lcfg.MaintenanceGrace)/interval) + 20
	quiet := 0
	for i := 0; i < limit; i++ {
		if err := w.advanceAndTick(); err != nil {
			return i, err
		}
		w.checkStep(w.look())
		if len(w.errs) > 0 {
			return i, nil
		}
		ss, err := w.st.ServersNeedingWork(context.Background())
		if err != nil {
			return i, fmt.Errorf("servers needing work: %w", err)
		}
		if len(ss) == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if quiet > int(driftEvery/interval) { // a drift pass saw every ACTIVE server
			return i, nil
		}
	}
	return limit, fmt.Errorf("I1: no quiescence after %d ticks of a healed world", limit)
}

// view is what the checks read after a tick: every stored server and
// every node, read once.
type view struct {
	servers map[string]*lifecycle.Server
	nodes   []ironicsim.NodeSnapshot
}

// look reads the view and adds it to the trace.
func (w *world) look() view {
	v := view{servers: make(map[string]*lifecycle.Server, len(w.servers)), nodes: w.sim.Nodes()}
	var b strings.Builder
	b.WriteString("  servers:")
	for _, id := range w.servers {
		s, ok := w.gone[id]
		if !ok {
			var err error
			if s, err = w.st.GetServer(context.Background(), id); err != nil {
				fmt.Fprintf(&b, " %s:%v", w.sname(id), err)
				continue
			}
		}
		if s.Phase == lifecycle.PhaseDeleted && !s.NeedsWork() {
			// Settled for good: nothing reads or writes it again (it is
			// never loaded by a tick), so it is read once.
			w.gone[id] = s
		}
		v.servers[id] = s
		fmt.Fprintf(&b, " %s:%s@%s", w.sname(id), phaseOf(s), w.nname(s.NodeID))
	}
	b.WriteString(" | nodes:")
	for _, snap := range v.nodes {
		m := ""
		if snap.Maintenance {
			m = "+m"
		}
		fmt.Fprintf(&b, " %s:%s%s/%s/v%d", w.nname(snap.UUID), snap.ProvisionState, m, w.sname(snap.InstanceUUID), len(snap.VIFs))
	}
	w.trace.add(b.String())
	return v
}

// tracer hashes every trace line and keeps the last ones.
type tracer struct {
	h    uint64
	ring []string
	next int
	full bool
}

const traceKeep = 40

func newTracer() *tracer { return &tracer{ring: make([]string, traceKeep)} }

func (t *tracer) add(line string) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%x|%s", t.h, line)
	t.h = h.Sum64()
	t.ring[t.next] = line
	t.next = (t.next + 1) % traceKeep
	if t.next == 0 {
		t.full = true
	}
}

func (t *tracer) sum() uint64 { return t.h }

func (t *tracer) tail() []string {
	if !t.full {
		return append([]string(nil), t.ring[:t.next]...)
	}
	return append(append([]string(nil), t.ring[t.next:]...), t.ring[:t.next]...)
}
