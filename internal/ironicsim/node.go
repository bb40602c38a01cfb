package ironicsim

import (
	"strconv"
	"time"
)

// Provision states used by the simulator (Ironic's names).
const (
	stateEnroll       = "enroll"
	stateVerifying    = "verifying"
	stateManageable   = "manageable"
	stateAvailable    = "available"
	stateDeploying    = "deploying"
	stateWaitCallback = "wait call-back"
	stateActive       = "active"
	stateDeployFailed = "deploy failed"
	stateDeleting     = "deleting"
	stateCleaning     = "cleaning"
	stateCleanFailed  = "clean failed"
	stateError        = "error"
)

const (
	powerOn  = "power on"
	powerOff = "power off"
)

// pendingKind is a transition that completes on its own when the clock
// reaches its deadline.
type pendingKind int

const (
	pendNone     pendingKind = iota
	pendVerify               // verifying → manageable
	pendClean                // cleaning → available
	pendDeploy               // deploying → active | deploy failed | wait call-back
	pendCallback             // wait call-back → deploy failed (callback timeout)
	pendUndeploy             // deleting → (cleaning →) available
	pendRescue               // rescuing → rescue
	pendUnrescue             // unrescuing → active
)

// node is one Ironic node. Optional strings use "" for JSON null; nil maps
// and slices show as {} and [] (10,000 nodes are created without them).
type node struct {
	seq     int64
	deleted bool

	UUID                 string
	Name                 string
	Driver               string
	ResourceClass        *string
	ProvisionState       string
	TargetProvisionState string
	PowerState           string
	TargetPowerState     string
	Maintenance          bool
	MaintenanceReason    string
	Fault                string
	LastError            string
	Reservation          string
	InstanceUUID         string
	InstanceInfo         map[string]any
	DriverInfo           map[string]any
	DriverInternalInfo   map[string]any
	Properties           map[string]any
	Extra                map[string]any
	NetworkData          map[string]any
	Traits               []string
	Description          string
	Owner                string
	Lessee               string
	ConductorGroup       string
	Shard                string
	ChassisUUID          string
	AutomatedClean       *bool
	Protected            bool
	ProtectedReason      string
	Retired              bool
	RetiredReason        string
	ConsoleEnabled       bool

	BIOSInterface       string
	BootInterface       string
	ConsoleInterface    string
	DeployInterface     string
	InspectInterface    string
	ManagementInterface string
	NetworkInterface    string
	PowerInterface      string
	RAIDInterface       string
	RescueInterface     string
	StorageInterface    string
	VendorInterface     string

	CreatedAt          time.Time
	UpdatedAt          time.Time // zero: null
	ProvisionUpdatedAt time.Time // zero: null

	ports []*port // in creation order

	// Simulation state.
	pending      pendingKind
	deadline     time.Time
	noDeadline   bool // pending transition waits for an event (held deploy)
	deployTime   *time.Duration
	undeployTime *time.Duration
	failNext     *string
	hold         bool
	maintOffAt   time.Time // when maintenance was last turned off
	lockUntil    time.Time // a lingering reservation ends then (Options.LockLinger)
}

// newNode returns a fake-hardware node in enroll with Ironic's default
// interfaces for the measured configuration. Caller holds s.mu.
func (s *Sim) newNode(now time.Time) *node {
	n := s.newNodeDefaults()
	n.UUID = s.newUUID()
	n.Driver = "fake-hardware"
	n.ProvisionState = stateEnroll
	n.CreatedAt = now
	return n
}

// Interface types and the implementations the simulator enables, in the
// order Ironic lists them in errors.
var enabledInterfaces = map[string][]string{
	"bios":       {"no-bios", "fake"},
	"boot":       {"fake"},
	"console":    {"no-console", "fake"},
	"deploy":     {"fake", "custom-agent"},
	"inspect":    {"no-inspect", "fake"},
	"management": {"fake"},
	"network":    {"flat", "noop"},
	"power":      {"fake"},
	"raid":       {"no-raid", "fake"},
	"rescue":     {"no-rescue", "fake"},
	"storage":    {"external", "fake", "noop"},
	"vendor":     {"no-vendor", "fake"},
}

// ifaceField returns a pointer to the node's <kind>_interface field.
func (n *node) ifaceField(kind string) *string {
	switch kind {
	case "bios":
		return &n.BIOSInterface
	case "boot":
		return &n.BootInterface
	case "console":
		return &n.ConsoleInterface
	case "deploy":
		return &n.DeployInterface
	case "inspect":
		return &n.InspectInterface
	case "management":
		return &n.ManagementInterface
	case "network":
		return &n.NetworkInterface
	case "power":
		return &n.PowerInterface
	case "raid":
		return &n.RAIDInterface
	case "rescue":
		return &n.RescueInterface
	case "storage":
		return &n.StorageInterface
	case "vendor":
		return &n.VendorInterface
	}
	return nil
}

var interfaceKinds = []string{"bios", "boot", "console", "deploy", "inspect", "management",
	"network", "power", "raid", "rescue", "storage", "vendor"}

// defaultInterface is what Ironic fills in when an interface is unset.
func (s *Sim) defaultInterface(kind string) string {
	return *s.newNodeDefaults().ifaceField(kind)
}

// newNodeDefaults returns a node holding only the default interfaces:
// fake-hardware with fake boot/deploy/management/power, noop network (flat in
// store mode) and noop storage (docs/ironic.md §1, §5).
func (s *Sim) newNodeDefaults() *node {
	network := "noop"
	if s.opts.VIFMode == VIFModeStore {
		network = "flat"
	}
	return &node{BIOSInterface: "no-bios", BootInterface: "fake", ConsoleInterface: "no-console",
		DeployInterface: "fake", InspectInterface: "no-inspect", ManagementInterface: "fake",
		NetworkInterface: network, PowerInterface: "fake", RAIDInterface: "no-raid",
		RescueInterface: "no-rescue", StorageInterface: "noop", VendorInterface: "no-vendor"}
}

// touch records a change at t.
func (n *node) touch(t time.Time) { n.UpdatedAt = t }

// setProvision moves the node to a provision state at t.
func (n *node) setProvision(state, target string, t time.Time) {
	n.ProvisionState = state
	n.TargetProvisionState = target
	n.ProvisionUpdatedAt = t
	n.UpdatedAt = t
}

// NodeSnapshot is a copy of a node's state for tests (maps are copies).
type NodeSnapshot struct {
	UUID                 string
	Name                 string
	ResourceClass        string
	ProvisionState       string
	TargetProvisionState string
	PowerState           string
	Maintenance          bool
	MaintenanceReason    string
	LastError            string
	Reservation          string
	InstanceUUID         string
	InstanceInfo         map[string]any
	DriverInternalInfo   map[string]any
	Properties           map[string]any
	Extra                map[string]any
	Traits               []string
	DeployInterface      string
	NetworkInterface     string
	StorageInterface     string
	ProvisionUpdatedAt   time.Time
	// VIFs attached (store mode); always empty for noop nodes.
	VIFs []string
	// Held reports a HoldDeploy that has not been released yet.
	Held bool
}

func (s *Sim) snapshot(n *node) NodeSnapshot {
	snap := NodeSnapshot{
		UUID: n.UUID, Name: n.Name, ProvisionState: n.ProvisionState,
		TargetProvisionState: n.TargetProvisionState, PowerState: n.PowerState,
		Maintenance: n.Maintenance, MaintenanceReason: n.MaintenanceReason,
		LastError: n.LastError, Reservation: n.Reservation, InstanceUUID: n.InstanceUUID,
		InstanceInfo: cloneMap(n.InstanceInfo), DriverInternalInfo: cloneMap(n.DriverInternalInfo),
		Properties: cloneMap(n.Properties), Extra: cloneMap(n.Extra),
		Traits:          append([]string(nil), n.Traits...),
		DeployInterface: n.DeployInterface, NetworkInterface: n.NetworkInterface,
		StorageInterface: n.StorageInterface, ProvisionUpdatedAt: n.ProvisionUpdatedAt,
		VIFs: s.nodeVIFs(n), Held: n.hold,
	}
	if n.ResourceClass != nil {
		snap.ResourceClass = *n.ResourceClass
	}
	return snap
}

// Node returns a snapshot of the node with this UUID or name, brought up to
// date with the clock.
func (s *Sim) Node(id string) (NodeSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookup(id, s.now())
	if n == nil {
		return NodeSnapshot{}, false
	}
	return s.snapshot(n), true
}

// Nodes returns snapshots of all nodes in creation order.
func (s *Sim) Nodes() []NodeSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(s.now())
	out := make([]NodeSnapshot, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.snapshot(n))
	}
	return out
}

// VIFs returns the VIF ids attached to a node (store mode), in port order.
// Nil for an unknown node or a noop node.
func (s *Sim) VIFs(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.lookup(id, s.now())
	if n == nil {
		return nil
	}
	return s.nodeVIFs(n)
}

// setKey sets m[k] = v, creating the map when nil, and returns it.
func setKey(m map[string]any, k string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

func itoa(i int) string { return strconv.Itoa(i) }

// pyTime formats a time like Python's datetime.isoformat() on a UTC value:
// microseconds only when non-zero, "+00:00" offset.
func pyTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return pyTime(t)
}

func strOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
