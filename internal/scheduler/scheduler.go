// Package scheduler chooses an Ironic node for a server: available, not in
// maintenance, unreserved, of the flavor's resource class, with the
// flavor's required traits and capabilities and none of its forbidden
// traits, with a free Ironic port (or portgroup) per requested network
// unless it has no ports at all, and not tried before by that server. It keeps an inventory cache refreshed on its own
// cadence or on demand, so choosing costs no Ironic call in the common case.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/nodeview"
	"github.com/ingot-dev/ingot/internal/portbind"
	"github.com/ingot-dev/ingot/internal/store"
)

// ErrNoCandidate: no node fits the server, even in a freshly listed inventory.
// Pick wraps it in a *NoCandidateError.
var ErrNoCandidate = errors.New("scheduler: no node fits")

// NoCandidateError says how many nodes of the class are on their way back
// (being undeployed or cleaned, not in maintenance): a build may wait for
// them rather than fail at once. Reason says which of the flavor's filters
// left the available nodes out ("" when none did).
type NoCandidateError struct {
	ResourceClass string
	Returning     int
	Reason        string
}

func (e *NoCandidateError) Error() string {
	return fmt.Sprintf("scheduler: no node of resource class %q fits (%d on the way back)", e.ResourceClass, e.Returning)
}

func (e *NoCandidateError) Unwrap() error { return ErrNoCandidate }

// ErrRetryLater: nothing fits in the cached inventory and it was refreshed
// too recently to list again (or, with Options.Background, its first
// listing is under way); try again on a later tick.
var ErrRetryLater = errors.New("scheduler: inventory refreshed moments ago; retry")

// Inventory lists scheduling candidates (implemented by *ironic.Client).
type Inventory interface {
	ListAvailable(ctx context.Context, resourceClass string) ([]ironic.Node, error)
	ListPorts(ctx context.Context) ([]portbind.Port, error)
	// ListClass lists every node of a class, whatever its state.
	ListClass(ctx context.Context, resourceClass string) ([]ironic.Node, error)
}

// Options tune the scheduler.
type Options struct {
	// Refresh is how old the cached inventory may be before a pick refreshes it.
	Refresh time.Duration
	// MinRefresh is the shortest gap between two on-demand refreshes of one
	// resource class (when the cache has no candidate left).
	MinRefresh time.Duration
	// ClaimTTL is how long a node chosen for a server is kept from others
	// while Ironic does not yet show the reservation.
	ClaimTTL time.Duration
	// Logger hears of builds waiting for a node (default: discard).
	Logger *slog.Logger
	// Networks name the physical network of each network a server asks for.
	Networks network.Networks
	// Schedulable says whether some compute service takes new builds
	// (nil: always); when it says no, Pick finds no candidate.
	Schedulable func(ctx context.Context) (bool, error)
	// GroupMembers lists a server group's live members (nil: groups are
	// not enforced), for the group policies (groups.go).
	GroupMembers func(ctx context.Context, groupID string) ([]store.ServerGroupMember, error)
	// NodeHost gives the compute host of each node, for the affinity policy
	// (nil: one host holds every node).
	NodeHost func(ctx context.Context) (func(node string) string, error)
	// Background lists the inventory off the pick's path (background.go);
	// OnRefresh is called after a background listing that leaves none
	// running (the reconciler's InventoryListed). Off in tests that need
	// one goroutine (the deterministic simulation).
	Background bool
	OnRefresh  func()
	// Classes names the resource classes Warm lists ahead of the first
	// pick (the flavors'; nil: none).
	Classes func(ctx context.Context) ([]string, error)
}

// burstGap is how long no build may wait for a node of a class before the
// next wait starts a new burst, logged at INFO again. A burst of creates
// retries every tick for as long as it lasts: one line per server per tick at
// INFO was thousands of lines for 200 creates.
const burstGap = time.Minute

// Scheduler picks nodes. Safe for concurrent use.
type Scheduler struct {
	inv   Inventory
	clock clock.Clock
	opts  Options

	mu      sync.Mutex
	classes map[string]*class
	claims  map[string]claim     // node -> server
	waiting map[string]time.Time // resource class -> last ErrRetryLater
	ports   portIndex            // byNode and fetchedAt guarded by mu
	bg      bgState

	// refreshing serializes inventory listings per resource class, so a
	// burst of builds lists the inventory once, not once per worker.
	refreshing sync.Map // resource class -> *sync.Mutex

	all allNodes // the whole inventory, for os-hypervisors (inventory.go)
}

type class struct {
	nodes     []ironic.Node
	taken     map[string]bool // nodes found held since the listing
	fetchedAt time.Time
}

type claim struct {
	server string
	at     time.Time
}

// New returns a scheduler over inv.
func New(inv Inventory, clk clock.Clock, opts Options) *Scheduler {
	if opts.Refresh <= 0 {
		opts.Refresh = 30 * time.Second
	}
	if opts.MinRefresh <= 0 {
		opts.MinRefresh = time.Second
	}
	if opts.ClaimTTL <= 0 {
		opts.ClaimTTL = 2 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{inv: inv, clock: clk, opts: opts, classes: map[string]*class{}, claims: map[string]claim{},
		waiting: map[string]time.Time{}}
}

// Pick chooses a node for s and claims it for s until the claim expires or is
// released. Choices are spread by a hash of the server id, so concurrent
// builds do not all race for the first node. ErrNoCandidate when nothing
// fits even after a fresh inventory; Ironic errors are returned as they come.
func (sc *Scheduler) Pick(ctx context.Context, s *lifecycle.Server) (string, error) {
	rc := s.Spec.ResourceClass
	refuse, err := sc.admit(ctx, s)
	if err != nil {
		return "", err
	}
	if sc.opts.Background {
		if err := sc.prepare(s); err != nil {
			return "", err
		}
	} else if len(s.Spec.Networks) > 0 {
		if err := sc.refreshPorts(ctx, sc.opts.Refresh); err != nil {
			return "", err
		}
	}
	if node, ok := sc.pickCached(s, sc.opts.Background, refuse); ok {
		return node, nil
	}
	refreshed, err := sc.refresh(ctx, rc, true)
	if err != nil {
		return "", err
	}
	if refreshed && len(s.Spec.Networks) > 0 {
		if err := sc.refreshPorts(ctx, sc.opts.MinRefresh); err != nil {
			return "", err
		}
	}
	if node, ok := sc.pickCached(s, true, refuse); ok {
		return node, nil
	}
	if !refreshed {
		// The inventory was refreshed moments ago and may not show a node
		// that was just released: ask again next tick rather than fail.
		sc.logWait(ctx, s)
		return "", ErrRetryLater
	}
	return "", sc.noCandidate(ctx, s)
}

// noCandidate says why nothing fits (the flavor's filters) and counts the
// nodes of the class that are on their way back to available. It costs one
// listing, only when nothing fits a fresh inventory (which is itself
// rate-limited per class).
func (sc *Scheduler) noCandidate(ctx context.Context, s *lifecycle.Server) error {
	rc := s.Spec.ResourceClass
	e := &NoCandidateError{ResourceClass: rc, Reason: sc.whyNone(s)}
	nodes, err := sc.inv.ListClass(ctx, rc)
	if err != nil {
		return e // an unknown count is no reason to wait
	}
	for _, n := range nodes {
		if nodeview.Returning(n) {
			e.Returning++
		}
	}
	return e
}

// logWait says a build waits for a node: at INFO for the first wait of a
// burst in its resource class, at DEBUG for the others.
func (sc *Scheduler) logWait(ctx context.Context, s *lifecycle.Server) {
	rc := s.Spec.ResourceClass
	now := sc.clock.Now()
	sc.mu.Lock()
	last, seen := sc.waiting[rc]
	sc.waiting[rc] = now
	sc.mu.Unlock()
	if !seen || now.Sub(last) >= burstGap {
		sc.opts.Logger.InfoContext(ctx, "builds wait for a free node; each retries every tick (further waits logged at debug)",
			"resource_class", rc, "server", s.ID)
		return
	}
	sc.opts.Logger.DebugContext(ctx, "build waits for a free node", "resource_class", rc, "server", s.ID)
}

func (sc *Scheduler) pickCached(s *lifecycle.Server, fresh bool, refuse func(node string) bool) (string, bool) {
	now := sc.clock.Now()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c := sc.classes[s.Spec.ResourceClass]
	if c == nil || (!fresh && now.Sub(c.fetchedAt) > sc.opts.Refresh) {
		return "", false
	}
	if len(c.nodes) == 0 {
		return "", false
	}
	// Start at a spot given by the server id and take the first node that
	// fits: choices spread over the inventory, and a pick costs a few map
	// look-ups rather than a pass over every node (100,000 of them at scale).
	h := fnv.New32a()
	h.Write([]byte(s.ID))
	start := int(h.Sum32() % uint32(len(c.nodes)))
	physnets := sc.physnets(s)
	for k := range len(c.nodes) {
		n := c.nodes[(start+k)%len(c.nodes)]
		if c.taken[n.UUID] {
			continue
		}
		if cl, ok := sc.claims[n.UUID]; ok && cl.server != s.ID && now.Sub(cl.at) < sc.opts.ClaimTTL {
			continue
		}
		if (refuse != nil && refuse(n.UUID)) || slices.Contains(s.Excluded, n.UUID) || sc.misfit(n, s, physnets) != "" {
			continue
		}
		sc.claims[n.UUID] = claim{server: s.ID, at: now}
		return n.UUID, true
	}
	return "", false
}

// refresh reloads one resource class's candidates and reports whether it
// did. onDemand refreshes are rate-limited by MinRefresh.
func (sc *Scheduler) refresh(ctx context.Context, rc string, onDemand bool) (bool, error) {
	now := sc.clock.Now()
	lock, _ := sc.refreshing.LoadOrStore(rc, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	sc.mu.Lock()
	c := sc.classes[rc]
	if c != nil && !c.fetchedAt.Before(now) {
		// Another worker listed it while we waited for the lock.
		sc.mu.Unlock()
		return true, nil
	}
	if onDemand && c != nil && now.Sub(c.fetchedAt) < sc.opts.MinRefresh {
		sc.mu.Unlock()
		return false, nil
	}
	sc.mu.Unlock()
	nodes, err := sc.inv.ListAvailable(ctx, rc)
	if err != nil {
		return false, err
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.classes[rc] = &class{nodes: nodes, taken: map[string]bool{}, fetchedAt: sc.clock.Now()}
	for node, cl := range sc.claims {
		if now.Sub(cl.at) >= sc.opts.ClaimTTL {
			delete(sc.claims, node)
		}
	}
	return true, nil
}

// Taken drops a node from the cache: it was found held (by another server of
// ours, or by someone else in Ironic).
func (sc *Scheduler) Taken(node string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, c := range sc.classes {
		c.taken[node] = true
	}
}

// Release ends server's claim on node, so others may choose it.
func (sc *Scheduler) Release(node, server string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if cl, ok := sc.claims[node]; ok && cl.server == server {
		delete(sc.claims, node)
	}
}
