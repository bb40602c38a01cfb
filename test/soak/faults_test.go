package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// fault is one fault injected.
type fault struct {
	at   time.Duration // since the churn began
	kind string
	slot string
	dur  time.Duration
}

// faults injects, from a seed, one link fault at a time (every 20–60 s,
// each kind once a round: the Ironic link slowed, blackholed or reset for
// 2–15 s, or on replicas one replica's PostgreSQL link cut for 5–15 s,
// then healed) and a kill -9
// of a random ingot about every killEvery (down 1–3 s, then started again).
type faults struct {
	w         *world
	rng       *rand.Rand
	killEvery time.Duration
	deck      []string // the link faults left in this round
	began     time.Time
	mu        sync.Mutex
	log       []fault
}

func newFaults(w *world, seed int64, killEvery time.Duration) *faults {
	return &faults{w: w, rng: rand.New(rand.NewPCG(uint64(seed), 2)), killEvery: killEvery}
}

// run injects faults until ctx ends, and returns with every link healed
// and every slot's ingot up.
func (f *faults) run(ctx context.Context) {
	f.began = time.Now()
	nextKill := f.began.Add(f.jitter(f.killEvery))
	defer f.w.healAll()
	for {
		if !f.pause(ctx, 20*time.Second+f.between(0, 40*time.Second)) {
			return
		}
		if time.Now().After(nextKill) {
			f.kill(ctx)
			nextKill = time.Now().Add(f.jitter(f.killEvery))
			continue
		}
		f.link(ctx)
	}
}

// kill ends one slot's ingot with SIGKILL and starts it again.
func (f *faults) kill(ctx context.Context) {
	sl := f.w.slots[f.rng.IntN(len(f.w.slots))]
	down := f.between(time.Second, 3*time.Second)
	at := time.Now()
	sl.kill()
	f.pause(ctx, down)
	f.w.start(sl)
	f.record(at, "kill -9 + restart", sl.name, time.Since(at))
}

// link puts one fault on one slot's link for a few seconds, then heals it.
func (f *faults) link(ctx context.Context) {
	sl := f.w.slots[f.rng.IntN(len(f.w.slots))]
	kinds := []string{"ironic latency 500±200ms", "ironic blackhole", "ironic reset"}
	if sl.pg != nil {
		kinds = append(kinds, "postgresql cut")
	}
	if len(f.deck) == 0 { // each kind once a round, in a seeded order: a short run sees them all
		f.deck = slices.Clone(kinds)
		f.rng.Shuffle(len(f.deck), func(i, j int) { f.deck[i], f.deck[j] = f.deck[j], f.deck[i] })
	}
	kind := f.deck[0]
	f.deck = f.deck[1:]
	d := f.between(2*time.Second, 15*time.Second)
	switch kind {
	case kinds[0]:
		sl.ironic.Latency(500*time.Millisecond, 200*time.Millisecond)
	case kinds[1]:
		sl.ironic.Blackhole()
	case kinds[2]:
		d = f.between(2*time.Second, 5*time.Second)
		sl.ironic.Reset()
	default:
		d = f.between(5*time.Second, 15*time.Second)
		sl.pg.Blackhole()
	}
	at := time.Now()
	f.pause(ctx, d)
	sl.ironic.Heal()
	if sl.pg != nil {
		sl.pg.Heal()
	}
	f.record(at, kind, sl.name, time.Since(at))
}

func (f *faults) record(at time.Time, kind, slot string, d time.Duration) {
	f.mu.Lock()
	f.log = append(f.log, fault{at: at.Sub(f.began), kind: kind, slot: slot, dur: d})
	f.mu.Unlock()
}

// pause waits d or until ctx ends; false when ctx ended.
func (f *faults) pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func (f *faults) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(f.rng.Int64N(int64(hi-lo)+1))
}

// jitter is d ± 25 %.
func (f *faults) jitter(d time.Duration) time.Duration { return f.between(d*3/4, d*5/4) }

// table is the faults injected, one a line, and their count by kind.
func (f *faults) table() (string, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	n := map[string]int{}
	for _, x := range f.log {
		fmt.Fprintf(&b, "  %8s  %-26s %-8s %s\n", x.at.Round(time.Second), x.kind, x.slot, x.dur.Round(100*time.Millisecond))
		n[x.kind]++
	}
	return b.String(), n
}

// healAll heals every link and starts any slot left down.
func (w *world) healAll() {
	for _, sl := range w.slots {
		sl.ironic.Heal()
		if sl.pg != nil {
			sl.pg.Heal()
		}
		if sl.proc() == nil {
			w.start(sl)
		}
	}
}
