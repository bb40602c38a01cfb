package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/store"
)

// ErrLeaseLost: an Ironic call was about to go out for a server whose shard
// lease this replica no longer holds with margin (or under no fence at
// all); it was not sent. docs/DESIGN.md §2.10.
var ErrLeaseLost = errors.New("reconciler: shard lease not held")

// LeaseConfig sets how a replica shares the servers with the others.
type LeaseConfig struct {
	Host   string        // this replica's identity (config key host)
	Shards int           // servers hash into this many shards (default 64); every replica must agree
	TTL    time.Duration // lease expiry (default 10s); renewed every TTL/3
	// Margin is taken off the local deadline (renewal sent + TTL) so that
	// a replica stops acting before the database lets another take over,
	// whatever the clocks' drift and the call's own time (default TTL/4).
	Margin time.Duration
}

// LeaseHooks observe the leases (metrics). Every field is optional.
type LeaseHooks struct {
	Held     func(n int) // leases held after each round
	Takeover func(n int) // leases taken over from another holder in a round
}

// Keeper holds this replica's shard leases: it claims and renews them
// (Round, Run), tells the reconciler which servers are its own (Fence) and
// refuses an Ironic call once a lease is no longer valid with margin
// (guardedIronic). A lease's local deadline is measured on the replica's
// own clock from the moment the renewal was sent, so it ends before the
// database's expiry (which started later) whatever the clocks' offsets.
type Keeper struct {
	st     store.Leases
	clk    clock.Clock
	cfg    LeaseConfig
	log    *slog.Logger
	hooks  LeaseHooks
	onGain func()

	roundMu  sync.Mutex // one round at a time (Run, and Tick's RenewIfDue)
	lastSent time.Time  // when the last successful round was sent

	mu      sync.Mutex
	held    map[int]*heldLease
	live    int
	rounds  int
	lastErr error
}

type heldLease struct {
	epoch    int64
	deadline time.Time // on the keeper's clock
	inflight int       // Ironic calls under way on this lease
}

// NewKeeper builds a keeper; nothing is held before the first Round.
func NewKeeper(st store.Leases, clk clock.Clock, log *slog.Logger, cfg LeaseConfig, hooks LeaseHooks) *Keeper {
	if cfg.Shards <= 0 {
		cfg.Shards = 64
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 10 * time.Second
	}
	if cfg.Margin <= 0 || cfg.Margin >= cfg.TTL {
		cfg.Margin = cfg.TTL / 4
	}
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Keeper{st: st, clk: clk, cfg: cfg, log: log, hooks: hooks, held: map[int]*heldLease{}}
}

// Config returns the keeper's settings, defaults applied.
func (k *Keeper) Config() LeaseConfig { return k.cfg }

// OnGain sets what to do when a round gains leases (the reconciler's Kick,
// so the servers taken over are looked at at once).
func (k *Keeper) OnGain(f func()) { k.onGain = f }

// Round is one lease round: claim and renew in the store, then give back
// what exceeds this replica's share (ceil(shards/live)) among the leases no
// Ironic call is under way on. The first round takes back the leases held
// under this identity by a previous run, with new epochs.
func (k *Keeper) Round(ctx context.Context) error {
	k.roundMu.Lock()
	defer k.roundMu.Unlock()
	return k.round(ctx)
}

// RenewIfDue runs a round when none succeeded for TTL/3 (the reconciler's
// tick calls it, so a loop driven tick by tick keeps its leases too).
func (k *Keeper) RenewIfDue(ctx context.Context) error {
	k.roundMu.Lock()
	defer k.roundMu.Unlock()
	if !k.lastSent.IsZero() && k.clk.Now().Sub(k.lastSent) < k.cfg.TTL/3 {
		return nil
	}
	return k.round(ctx)
}

func (k *Keeper) round(ctx context.Context) error {
	sent := k.clk.Now()
	k.mu.Lock()
	first := k.rounds == 0
	k.mu.Unlock()
	got, err := k.st.ClaimLeases(ctx, store.Claim{Host: k.cfg.Host, Shards: k.cfg.Shards, TTL: k.cfg.TTL, TakeOwn: first})
	if err != nil {
		k.mu.Lock()
		k.lastErr = err
		k.mu.Unlock()
		return fmt.Errorf("lease round: %w", err)
	}
	k.lastSent = sent
	deadline := sent.Add(k.cfg.TTL - k.cfg.Margin)
	gained, takeovers := 0, 0
	k.mu.Lock()
	k.rounds++
	k.lastErr = nil
	k.live = got.Live
	next := make(map[int]*heldLease, len(got.Held))
	for _, l := range got.Held {
		h := k.held[l.Shard]
		switch {
		case h != nil && h.epoch == l.Epoch:
			h.deadline = deadline
		case h != nil: // taken again after it expired: a new epoch
			h.epoch, h.deadline = l.Epoch, deadline
			gained++
		default:
			h = &heldLease{epoch: l.Epoch, deadline: deadline}
			gained++
			if !first && l.Epoch > 1 {
				takeovers++
			}
		}
		next[l.Shard] = h
	}
	k.held = next
	shed := k.excess(store.Share(k.cfg.Shards, got.Live))
	n := len(k.held)
	k.mu.Unlock()

	if len(shed) > 0 {
		if err := k.st.ReleaseLeases(ctx, k.cfg.Host, shed); err != nil {
			k.log.Warn("lease release", "shards", shed, "err", err)
		} else {
			k.log.Info("leases given up for balance", "shards", len(shed), "live", got.Live)
		}
	}
	if k.hooks.Held != nil {
		k.hooks.Held(n)
	}
	if takeovers > 0 {
		if k.hooks.Takeover != nil {
			k.hooks.Takeover(takeovers)
		}
		k.log.Info("leases taken over", "shards", takeovers, "held", n, "live", got.Live)
	}
	if gained > 0 && k.onGain != nil {
		k.onGain()
	}
	return nil
}

// excess drops, and returns, the highest held shards beyond want that have
// no Ironic call under way (the others wait for a later round). k.mu held.
func (k *Keeper) excess(want int) []int {
	extra := len(k.held) - want
	if extra <= 0 {
		return nil
	}
	var shards []int
	for sh := range k.held {
		shards = append(shards, sh)
	}
	slices.Sort(shards)
	var out []int
	for i := len(shards) - 1; i >= 0 && len(out) < extra; i-- {
		if k.held[shards[i]].inflight == 0 {
			out = append(out, shards[i])
			delete(k.held, shards[i])
		}
	}
	return out
}

// Run renews the leases every TTL/3 until ctx ends (a Round is expected to
// have run already, at start), then gives every lease up at once, so a
// rolling restart hands the shards over without waiting for an expiry.
// Call it after the reconciler has stopped acting, or with ctx ending
// after it.
func (k *Keeper) Run(ctx context.Context) {
	t := time.NewTicker(k.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := k.RenewIfDue(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("lease renewal failed", "err", err)
		}
	}
}

// Release gives up every lease and the heartbeat (graceful shutdown): no
// new Ironic call is admitted from here on, the calls under way are waited
// for (until ctx ends), then the leases are expired in the database, so
// another replica takes them at its next round and never acts beside a
// call of this one.
func (k *Keeper) Release(ctx context.Context) error {
	k.roundMu.Lock()
	defer k.roundMu.Unlock()
	k.lastSent = time.Time{}
	k.mu.Lock()
	gone := k.held
	k.held = map[int]*heldLease{}
	k.mu.Unlock()
	if k.hooks.Held != nil {
		k.hooks.Held(0)
	}
	for busy := true; busy; {
		busy = false
		k.mu.Lock()
		for _, h := range gone {
			busy = busy || h.inflight > 0
		}
		k.mu.Unlock()
		if busy {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return k.st.ReleaseLeases(ctx, k.cfg.Host, nil)
}

// Fence returns the fence to write a server's state under, when this
// replica holds its shard's lease with margin.
func (k *Keeper) Fence(serverID string) (store.Fence, bool) {
	sh := store.ShardOf(serverID, k.cfg.Shards)
	now := k.clk.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	h := k.held[sh]
	if h == nil || !now.Before(h.deadline) {
		return store.Fence{}, false
	}
	return store.Fence{Shard: sh, Holder: k.cfg.Host, Epoch: h.epoch}, true
}

// Valid reports whether f's lease is still held with margin.
func (k *Keeper) Valid(f store.Fence) bool {
	now := k.clk.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	h := k.held[f.Shard]
	return f.Holder == k.cfg.Host && h != nil && h.epoch == f.Epoch && now.Before(h.deadline)
}

// begin admits one Ironic call under ctx's fence: the lease must be held
// with margin. It returns ctx bounded by the lease's local deadline and the
// call's end. ErrLeaseLost otherwise.
func (k *Keeper) begin(ctx context.Context) (context.Context, func(), error) {
	f, ok := store.FenceOf(ctx)
	if !ok {
		return ctx, nil, fmt.Errorf("%w: no fence", ErrLeaseLost)
	}
	now := k.clk.Now()
	k.mu.Lock()
	h := k.held[f.Shard]
	if f.Holder != k.cfg.Host || h == nil || h.epoch != f.Epoch || !now.Before(h.deadline) {
		k.mu.Unlock()
		return ctx, nil, fmt.Errorf("%w: shard %d epoch %d", ErrLeaseLost, f.Shard, f.Epoch)
	}
	h.inflight++
	left := h.deadline.Sub(now)
	k.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, left)
	return cctx, func() {
		cancel()
		k.mu.Lock()
		h.inflight--
		k.mu.Unlock()
	}, nil
}

// Admit is the Ironic client's last check before a change is written
// (ironic.Config.BeforeSend): a call under a fence goes out only while its
// lease is still held with margin, measured now (after a pause, before the
// timer of the call's context has fired). A call without a fence is not
// the reconciler's, and passes; so does every call on a nil Keeper (no
// leases).
func (k *Keeper) Admit(ctx context.Context) error {
	if k == nil {
		return nil
	}
	f, ok := store.FenceOf(ctx)
	if !ok || k.Valid(f) {
		return nil
	}
	return fmt.Errorf("%w: shard %d epoch %d, at the send", ErrLeaseLost, f.Shard, f.Epoch)
}

// Lost forgets f's lease at once (a write under it was fenced: another
// replica holds the shard now).
func (k *Keeper) Lost(f store.Fence) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if h := k.held[f.Shard]; h != nil && h.epoch == f.Epoch {
		delete(k.held, f.Shard)
	}
}

// LeaseStatus is what /readyz shows of the leases.
type LeaseStatus struct {
	Host   string      `json:"host"`
	Shards int         `json:"shards"`
	Live   int         `json:"live_replicas"`
	Held   []HeldLease `json:"leases"`
	Error  string      `json:"error,omitempty"` // the last round's failure
}

// HeldLease is one lease of LeaseStatus.
type HeldLease struct {
	Shard int   `json:"shard"`
	Epoch int64 `json:"epoch"`
	// ValidMS is how long it stays valid without a renewal (local clock,
	// margin taken off).
	ValidMS int64 `json:"valid_ms"`
}

// Status returns the leases held now.
func (k *Keeper) Status() LeaseStatus {
	now := k.clk.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	st := LeaseStatus{Host: k.cfg.Host, Shards: k.cfg.Shards, Live: k.live, Held: []HeldLease{}}
	if k.lastErr != nil {
		st.Error = k.lastErr.Error()
	}
	for sh, h := range k.held {
		if left := h.deadline.Sub(now); left > 0 {
			st.Held = append(st.Held, HeldLease{Shard: sh, Epoch: h.epoch, ValidMS: left.Milliseconds()})
		}
	}
	slices.SortFunc(st.Held, func(a, b HeldLease) int { return a.Shard - b.Shard })
	return st
}

// Epochs is the epoch of every lease held now, by shard: the reconciler
// takes it before each read of servers it will act on (readEpochs), so
// that a record read under one epoch is never acted on under a later one
// (a replica paused between its read and its step, and given the shard
// back meanwhile, would act on a stale record with a fresh fence).
func (k *Keeper) Epochs() map[int]int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[int]int64, len(k.held))
	for sh, h := range k.held {
		out[sh] = h.epoch
	}
	return out
}
