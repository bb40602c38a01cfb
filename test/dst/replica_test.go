package dst

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/store"
)

// Replicas (docs/DESIGN.md §2.10): several ingot processes on one database,
// dividing the servers by shard leases. A lone replica (every seed of
// TestDST) holds every shard; TestDSTReplicas runs two or three, with
// clock skew between them, and adds to the generator pauses past a lease
// in the middle of a step, stalls, kills and graceful restarts of a replica.
const (
	shards   = 4
	leaseTTL = 3 * interval // renewed every tick; a stall of three ticks loses it
	// Skew between a replica's clock and the database's.
	maxOffset = 2 * time.Second
	maxPPM    = 500
)

// replica is one ingot process.
type replica struct {
	name   string // its host
	clk    *skewClock
	lag    *lagClock // the keeper's clock when params.lagLeaseClock
	cst    *crashStore
	rec    *reconciler.Reconciler
	keeper *reconciler.Keeper
	dead   bool // killed: nothing it sends arrives
	cancel context.CancelFunc
	stall  int  // ticks left without running
	down   bool // the stall is a dead process: restarted when it ends
}

// skewClock is the world's clock seen by one replica: offset, and running
// ppm parts per million fast (or slow). Never goes back.
type skewClock struct {
	base   *clock.Manual
	offset time.Duration
	ppm    int64
}

func (c *skewClock) Now() time.Time {
	d := c.base.Now().Sub(t0)
	return t0.Add(d + d/1_000_000*time.Duration(c.ppm) + c.offset)
}

// lagClock is a clock behind another by what it was told to miss.
type lagClock struct {
	c      clock.Clock
	missed time.Duration
}

func (l *lagClock) Now() time.Time { return l.c.Now().Add(-l.missed) }

// newReplicas makes n replicas; the skew is drawn only when n > 1, so a
// lone replica's seeds keep their schedules.
func (w *world) newReplicas(n int) []*replica {
	out := make([]*replica, n)
	for i := range out {
		c := &skewClock{base: w.clk}
		if n > 1 {
			c.offset = time.Duration(w.rng.Int64N(int64(2*maxOffset))) - maxOffset
			c.ppm = w.rng.Int64N(2*maxPPM) - maxPPM
		}
		out[i] = &replica{name: fmt.Sprintf("r%d", i), clk: c, lag: &lagClock{c: c}}
	}
	return out
}

// slack is how late past a deadline a server may settle: one interval for a
// lone replica (I1); with several, also the failover — a lease period and
// the tick that takes the shard over — and the clocks' skew.
func (w *world) slack() time.Duration {
	if len(w.reps) == 1 {
		return interval
	}
	elapsed := w.clk.Now().Sub(t0)
	return 2*interval + leaseTTL + maxOffset + elapsed/1_000_000*maxPPM
}

// actor is who last acted on a shard.
type actor struct {
	host  string
	epoch int64
	at    time.Time
}

// checkActor checks one change a replica asks of Ironic, before it arrives:
// "never two replicas acting on one server". The call must carry the fence
// of a lease that the database shows held by that replica, at that epoch
// and unexpired at this instant; no call under an older epoch of the shard
// may follow one under a newer; and the server's shard is the fence's.
func (w *world) checkActor(req *http.Request, r *replica, before string) {
	what := r.name + " " + req.Method + " " + req.URL.Path
	f, ok := store.FenceOf(req.Context())
	if !ok {
		w.violate("replicas: %s sent with no lease fence", what)
		return
	}
	if f.Holder != r.name {
		w.violate("replicas: %s sent under %s's fence", what, f.Holder)
	}
	leases, err := w.st.ListLeases(context.Background())
	if err != nil || f.Shard >= len(leases) {
		w.violate("replicas: leases: %v (%d)", err, len(leases))
		return
	}
	now := w.clk.Now()
	l := leases[f.Shard]
	if l.Holder != f.Holder || l.Epoch != f.Epoch || !now.Before(l.ExpiresAt) {
		w.violate("replicas: %s acted on shard %d at epoch %d, but the lease is %s's at epoch %d until %s (now %s)",
			what, f.Shard, f.Epoch, l.Holder, l.Epoch, l.ExpiresAt.Sub(t0), now.Sub(t0))
	}
	if prev, ok := w.acted[f.Shard]; ok && (f.Epoch < prev.epoch || f.Epoch == prev.epoch && prev.host != f.Holder) {
		w.violate("replicas: %s acted on shard %d at epoch %d after %s did at epoch %d (t=%s)",
			what, f.Shard, f.Epoch, prev.host, prev.epoch, prev.at.Sub(t0))
	}
	w.acted[f.Shard] = actor{host: f.Holder, epoch: f.Epoch, at: now}
	if _, ours := w.ours[before]; ours && store.ShardOf(before, shards) != f.Shard {
		w.violate("replicas: %s acted on %s (shard %d) under the lease of shard %d", what, w.sname(before),
			store.ShardOf(before, shards), f.Shard)
	}
	if strings.HasPrefix(req.URL.Path, "/v1/nodes/") {
		w.trace.add(fmt.Sprintf("  %s e%d: %s %s", r.name, f.Epoch, req.Method, w.nname(nodeOf(req.URL.Path))))
	}
}

// pause stops replica r in the middle of its step (SIGSTOP) for longer than
// its lease: the others tick meanwhile, one interval at a time, and take
// its shards over; then r goes on from where it stopped. Whatever it was
// about to send or write for a shard it lost must not go out.
func (w *world) pause(r *replica, point string) {
	others := 0
	for _, o := range w.reps {
		if o != r && o.stall == 0 {
			others++
		}
	}
	if others == 0 {
		return
	}
	n := int(leaseTTL/interval) + 1 + w.rng.IntN(3)
	w.pauses++
	r.lag.missed += time.Duration(n) * interval
	w.trace.add(fmt.Sprintf("%s paused at %s for %d intervals", r.name, point, n))
	w.nested = true
	defer func() { w.nested = false }()
	for range n {
		w.clk.Advance(interval)
		for _, o := range w.reps {
			if o == r || o.stall > 0 {
				continue
			}
			if err := w.tickReplica(o); err != nil {
				w.violate("tick during the pause of %s: %v", r.name, err)
			}
		}
	}
	w.cur = r
	w.trace.add(r.name + " continued")
}

// replicaEvents join the generator's menu when there are several replicas.
var replicaEvents = []event{
	{"pause-mid-step", 4, func(_ context.Context, w *world) (string, error) {
		w.pauseAt = w.hooks + 1 + w.rng.IntN(10)
		return fmt.Sprint(w.pauseAt - w.hooks), nil
	}},
	{"stall", 2, onReplica(func(w *world, r *replica) string {
		r.stall = 2 + w.rng.IntN(6)
		return fmt.Sprintf("%s for %d ticks", r.name, r.stall)
	})},
	{"kill-replica", 2, onReplica(func(w *world, r *replica) string {
		w.kill(r)
		r.stall, r.down = 1+w.rng.IntN(6), true
		return fmt.Sprintf("%s down for %d ticks", r.name, r.stall)
	})},
	{"graceful-restart", 2, onReplica(func(w *world, r *replica) string {
		if err := r.keeper.Release(context.Background()); err != nil {
			w.violate("release of %s: %v", r.name, err)
		}
		w.kill(r)
		if err := w.restart(r); err != nil {
			w.violate("restart of %s: %v", r.name, err)
		}
		return r.name
	})},
}

// onReplica applies f to a random running replica, as long as another one
// keeps running (one failure at a time: the others take its shards over).
func onReplica(f func(w *world, r *replica) string) func(context.Context, *world) (string, error) {
	return func(_ context.Context, w *world) (string, error) {
		r := w.reps[w.rng.IntN(len(w.reps))]
		running := 0
		for _, o := range w.reps {
			if o.stall == 0 {
				running++
			}
		}
		if r.stall > 0 || running < 2 {
			return "skipped", nil
		}
		return f(w, r), nil
	}
}

// healReplicas ends every stall: each replica runs again.
func (w *world) healReplicas() error {
	w.pauseAt = 0
	for _, r := range w.reps {
		if r.stall == 0 {
			continue
		}
		r.stall = 0
		if r.down {
			r.down = false
			if err := w.restart(r); err != nil {
				return err
			}
		}
	}
	return nil
}
