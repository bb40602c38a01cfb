package ironicsim

import (
	"errors"
	"math/rand"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/clock"
)

// VIFMode chooses how VIF attachment behaves by default: it sets the
// network_interface that new nodes get, and each node then behaves like its
// network_interface (noop or flat).
type VIFMode string

const (
	// VIFModeNoop is Ironic's network_interface=noop: every attach and detach
	// answers 204, nothing is stored, and the list is always empty (docs/ironic.md §4).
	VIFModeNoop VIFMode = "noop"
	// VIFModeStore is like network_interface=flat: an attach needs a free
	// port on the node and is recorded on it (internal_info.tenant_vif_port_id),
	// duplicates and unknown detaches are refused with Ironic's texts, and
	// undeploy detaches the VIFs.
	VIFModeStore VIFMode = "store"
)

// Options configure a simulator. The zero value is usable: real clock,
// instant deploys and undeploys, Ironic's default 30-minute callback timeout,
// noop VIFs.
type Options struct {
	// Clock is the source of time (default clock.Real{}). With a
	// *clock.Manual, nothing moves until the test advances the clock: every
	// transition is evaluated lazily from the clock when a node is read.
	Clock clock.Clock
	// DeployTime is how long a node stays `deploying` (locked) before it
	// becomes `active`. 0 means the deploy is over at the next read.
	DeployTime time.Duration
	// UndeployTime is how long a node stays `deleting` (locked) after
	// `deleted` before it is `available` again.
	UndeployTime time.Duration
	// CallbackTimeout is Ironic's [conductor]deploy_callback_timeout: how long a
	// custom-agent node waits in `wait call-back` before `deploy failed`.
	// 0 means Ironic's default, 30 minutes.
	CallbackTimeout time.Duration
	// VerifyTime is how long `manage` keeps an enrolled node `verifying`,
	// CleanTime how long `provide` (and cleaning after undeploy) keeps it
	// `cleaning`. Both default to 0 (the fake interfaces take about 0.15 s).
	VerifyTime time.Duration
	CleanTime  time.Duration
	// VIFMode is the default network behaviour (default VIFModeNoop).
	VIFMode VIFMode
	// Seed seeds the generator of node, port and volume UUIDs and the
	// fault-injection fractions, so a run is reproducible (0: seeded from
	// the time).
	Seed int64
	// Host is the conductor name shown in `reservation` (default "localhost").
	Host string
	// LockLinger is how long the conductor keeps a node's reservation
	// after a deploy step ends in `active`, `wait call-back` or
	// `deploy failed`: the real Ironic shows the new state tens of
	// milliseconds before it lets go of the lock, and a call made then gets
	// 409 NodeLocked. 0 (the default) releases the lock with the
	// transition. Evaluated lazily from the clock like the transitions.
	LockLinger time.Duration
}

// agentPrepareTime is how long a custom-agent (or held) deploy stays
// `deploying` and locked before it reaches `wait call-back` (measured 0.14–0.45 s, docs/ironic.md §8).
const agentPrepareTime = 200 * time.Millisecond

// defaultCallbackTimeout is Ironic's [conductor]deploy_callback_timeout default.
const defaultCallbackTimeout = 30 * time.Minute

// ErrNodeNotFound is returned by the Go fault API for an unknown node.
var ErrNodeNotFound = errors.New("ironicsim: node not found")

// ErrInvalidState is returned by the Go fault API when the node is not in a
// state the requested action applies to.
var ErrInvalidState = errors.New("ironicsim: node not in a state for this action")

// Sim is a simulated Ironic 21.4 (API 1.1–1.82) with fake-hardware nodes.
// All methods are safe for concurrent use; one mutex guards everything.
type Sim struct {
	opts Options
	clk  clock.Clock

	mu     sync.Mutex
	rng    *rand.Rand
	seq    int64
	nodes  map[string]*node // by UUID
	byName map[string]*node
	// byInstance indexes nodes by instance_uuid; every write of
	// node.InstanceUUID goes through setInstance to keep it right.
	byInstance map[string]*node
	order      []*node // creation order (Ironic sorts by internal id)
	busy       map[*node]struct{}
	ports      map[string]*port
	portOrd    []*port
	macs       map[string]*port
	conns      map[string]*volConnector
	connOrd    []*volConnector
	targets    map[string]*volTarget
	tgtOrd     []*volTarget

	faults []*faultRule
	counts map[string]int

	// changes counts state changes; persist, when set, saves them (Persist).
	changes uint64
	persist *persister

	handler http.Handler
}

// New returns a simulator with no nodes.
func New(opts Options) *Sim {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.CallbackTimeout <= 0 {
		opts.CallbackTimeout = defaultCallbackTimeout
	}
	if opts.VIFMode == "" {
		opts.VIFMode = VIFModeNoop
	}
	if opts.Host == "" {
		opts.Host = "localhost"
	}
	seed := opts.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	s := &Sim{
		opts:       opts,
		clk:        opts.Clock,
		rng:        rand.New(rand.NewSource(seed)),
		nodes:      map[string]*node{},
		byName:     map[string]*node{},
		byInstance: map[string]*node{},
		busy:       map[*node]struct{}{},
		ports:      map[string]*port{},
		macs:       map[string]*port{},
		conns:      map[string]*volConnector{},
		targets:    map[string]*volTarget{},
		counts:     map[string]int{},
	}
	s.handler = s.newHandler()
	return s
}

// Handler serves the Ironic API (/, /v1/...) and the admin API (/_sim/...).
func (s *Sim) Handler() http.Handler { return s.handler }

// now reads the clock in UTC. Callers hold s.mu or not; the clock is safe.
func (s *Sim) now() time.Time { return s.clk.Now().UTC() }

// newUUID draws a UUID from the seeded generator, skipping any already in
// use (a restored state holds UUIDs drawn by an earlier run with the same
// seed). Caller holds s.mu.
func (s *Sim) newUUID() string {
	for {
		u, err := uuid.NewRandomFromReader(s.rng)
		id := u.String()
		if err != nil { // cannot happen with math/rand
			id = uuid.NewString()
		}
		if s.nodes[id] == nil && s.ports[id] == nil && s.conns[id] == nil && s.targets[id] == nil {
			return id
		}
	}
}

// lookup finds a node by UUID or name and brings it up to date. Caller holds s.mu.
func (s *Sim) lookup(ident string, now time.Time) *node {
	n := s.nodes[ident]
	if n == nil {
		n = s.byName[ident]
	}
	if n != nil {
		s.advance(n, now)
	}
	return n
}

// settle brings every node with a pending transition up to date, so that
// lists and filters see the states the clock implies. Caller holds s.mu.
func (s *Sim) settle(now time.Time) {
	for n := range s.busy {
		s.advance(n, now)
	}
}

// insertNode adds a node at the end of the creation order. Caller holds s.mu.
func (s *Sim) insertNode(n *node) {
	s.seq++
	n.seq = s.seq
	s.nodes[n.UUID] = n
	if n.Name != "" {
		s.byName[n.Name] = n
	}
	if n.InstanceUUID != "" {
		s.byInstance[n.InstanceUUID] = n
	}
	s.order = append(s.order, n)
}

// setInstance sets a stored node's instance_uuid and keeps byInstance right.
func (s *Sim) setInstance(n *node, instance string) {
	if n.InstanceUUID != "" && s.byInstance[n.InstanceUUID] == n {
		delete(s.byInstance, n.InstanceUUID)
	}
	n.InstanceUUID = instance
	if instance != "" {
		s.byInstance[instance] = n
	}
}

// indexAfter returns the position in s.order just after the node with the
// given sequence number (binary search: s.order is sorted by seq).
func (s *Sim) indexAfter(seq int64) int {
	return sort.Search(len(s.order), func(i int) bool { return s.order[i].seq > seq })
}

// removeNode deletes a node and everything hanging off it: ports (with their
// VIFs), volume connectors and targets. Caller holds s.mu.
func (s *Sim) removeNode(n *node) {
	delete(s.nodes, n.UUID)
	if n.Name != "" && s.byName[n.Name] == n {
		delete(s.byName, n.Name)
	}
	if n.InstanceUUID != "" && s.byInstance[n.InstanceUUID] == n {
		delete(s.byInstance, n.InstanceUUID)
	}
	delete(s.busy, n)
	i := sort.Search(len(s.order), func(i int) bool { return s.order[i].seq >= n.seq })
	if i < len(s.order) && s.order[i] == n {
		s.order = append(s.order[:i], s.order[i+1:]...)
	}
	for _, p := range append([]*port(nil), n.ports...) {
		s.removePort(p)
	}
	keepC := s.connOrd[:0]
	for _, c := range s.connOrd {
		if c.nodeUUID == n.UUID {
			delete(s.conns, c.UUID)
			continue
		}
		keepC = append(keepC, c)
	}
	s.connOrd = keepC
	keepT := s.tgtOrd[:0]
	for _, t := range s.tgtOrd {
		if t.nodeUUID == n.UUID {
			delete(s.targets, t.UUID)
			continue
		}
		keepT = append(keepT, t)
	}
	s.tgtOrd = keepT
	n.deleted = true
}

// NodeSpec describes nodes created by AddNodes.
type NodeSpec struct {
	// NamePrefix names the nodes NamePrefix-0, NamePrefix-1, … (default "node").
	NamePrefix string
	// ResourceClass of the nodes (default none, like Ironic).
	ResourceClass string
	// Properties, copied to each node.
	Properties map[string]any
	// Traits of each node.
	Traits []string
	// DeployInterface, e.g. "custom-agent" (default "fake").
	DeployInterface string
	// RescueInterface, "fake" to allow rescue (default "no-rescue", which refuses it).
	RescueInterface string
	// NetworkInterface (default from Options.VIFMode: noop or flat).
	NetworkInterface string
	// Ports is the number of ports (with generated MACs) per node (default 0).
	Ports int
	// DeployTime and UndeployTime override the Options for these nodes when > 0.
	DeployTime   time.Duration
	UndeployTime time.Duration
}

// AddNodes creates n nodes directly in `available` with power_state
// "power off" (the fast path; a real Ironic needs enroll, manage, provide and
// a power call). It returns their UUIDs in creation order. Names that would
// collide get a numeric suffix from the running node count instead.
func (s *Sim) AddNodes(count int, spec NodeSpec) []string {
	defer s.changed()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.reserve(count, spec.Ports)
	prefix := spec.NamePrefix
	if prefix == "" {
		prefix = "node"
	}
	ids := make([]string, 0, count)
	for i := 0; i < count; i++ {
		n := s.newNode(now)
		n.Name = uniqueName(s, prefix, i)
		n.ProvisionState = stateAvailable
		n.ProvisionUpdatedAt = now
		n.PowerState = powerOff
		if spec.ResourceClass != "" {
			rc := spec.ResourceClass
			n.ResourceClass = &rc
		}
		if len(spec.Properties) > 0 {
			n.Properties = cloneMap(spec.Properties)
		}
		if len(spec.Traits) > 0 {
			n.Traits = append([]string(nil), spec.Traits...)
		}
		if spec.RescueInterface != "" {
			n.RescueInterface = spec.RescueInterface
		}
		if spec.DeployInterface != "" {
			n.DeployInterface = spec.DeployInterface
		}
		if spec.NetworkInterface != "" {
			n.NetworkInterface = spec.NetworkInterface
		}
		if spec.DeployTime > 0 {
			d := spec.DeployTime
			n.deployTime = &d
		}
		if spec.UndeployTime > 0 {
			d := spec.UndeployTime
			n.undeployTime = &d
		}
		s.insertNode(n)
		for j := 0; j < spec.Ports; j++ {
			s.addPortLocked(n, fakeMAC(n.seq, j), now)
		}
		ids = append(ids, n.UUID)
	}
	return ids
}

// reserve pre-sizes the indexes for count more nodes (less garbage when
// 10,000 nodes are added at once). Caller holds s.mu.
func (s *Sim) reserve(count, portsPerNode int) {
	if len(s.nodes) == 0 && count > 64 {
		s.nodes = make(map[string]*node, count)
		s.byName = make(map[string]*node, count)
	}
	if len(s.ports) == 0 && count*portsPerNode > 64 {
		s.ports = make(map[string]*port, count*portsPerNode)
		s.macs = make(map[string]*port, count*portsPerNode)
	}
	s.order = slices.Grow(s.order, count)
	s.portOrd = slices.Grow(s.portOrd, count*portsPerNode)
}

// uniqueName returns prefix-i, or the first free prefix-k from the node
// count up when that name is taken. Caller holds s.mu.
func uniqueName(s *Sim, prefix string, i int) string {
	name := prefix + "-" + itoa(i)
	for k := int(s.seq) + 1; s.byName[name] != nil; k++ {
		name = prefix + "-" + itoa(k)
	}
	return name
}

// fakeMAC makes a locally administered MAC unique per node and port index.
func fakeMAC(seq int64, j int) string {
	const hexd = "0123456789abcdef"
	b := []byte{0x52, 0x54, byte(seq >> 16), byte(seq >> 8), byte(seq), byte(j)}
	out := make([]byte, 0, 17)
	for i, x := range b {
		if i > 0 {
			out = append(out, ':')
		}
		out = append(out, hexd[x>>4], hexd[x&15])
	}
	return string(out)
}

// Counts returns the number of Ironic API requests served per operation,
// keyed by method and route template ("GET /v1/nodes",
// "PATCH /v1/nodes/{node}", "PUT /v1/nodes/{node}/states/provision", …).
// Requests that matched no route count as "<METHOD> (unmatched)". The admin
// API is not counted. The map is a copy.
func (s *Sim) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// ResetCounts sets every request counter back to zero.
func (s *Sim) ResetCounts() {
	s.mu.Lock()
	s.counts = map[string]int{}
	s.mu.Unlock()
}

// Restart simulates killing and restarting Ironic's conductor: every node in
// a state that cannot be resumed moves to its fail state with Ironic's
// last_error ("The deploying state can't be resumed by conductor localhost.
// Moving to fail state.") and every reservation is cleared. deploying → deploy
// failed (target stays active), cleaning → clean failed, verifying → enroll,
// deleting → error. Nodes in wait call-back stay there. Idempotent.
func (s *Sim) Restart() {
	defer s.changed()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.settle(now)
	for _, n := range s.order {
		s.restartNode(n, now)
	}
}
