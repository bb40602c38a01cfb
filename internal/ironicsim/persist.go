package ironicsim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// stateVersion is the format of Snapshot's JSON; Restore refuses others.
const stateVersion = 1

// state is what Snapshot saves: every node (with its pending transition and
// deadline), port, volume connector and target. Fault rules and request
// counters are not kept: they belong to a test, not to the Ironic.
type state struct {
	Version    int              `json:"version"`
	SavedAt    time.Time        `json:"saved_at"`
	Seq        int64            `json:"seq"`
	Nodes      []nodeState      `json:"nodes"`
	Ports      []portState      `json:"ports"`
	Connectors []connectorState `json:"connectors"`
	Targets    []targetState    `json:"targets"`
}

// nodeState is a node's API fields (the embedded node's exported fields)
// and its simulation fields.
type nodeState struct {
	node
	Seq          int64          `json:"seq"`
	Pending      pendingKind    `json:"pending"`
	Deadline     time.Time      `json:"deadline"`
	NoDeadline   bool           `json:"no_deadline,omitempty"`
	DeployTime   *time.Duration `json:"deploy_time,omitempty"`
	UndeployTime *time.Duration `json:"undeploy_time,omitempty"`
	FailNext     *string        `json:"fail_next,omitempty"`
	Hold         bool           `json:"hold,omitempty"`
	MaintOffAt   time.Time      `json:"maint_off_at"`
	LockUntil    time.Time      `json:"lock_until"`
}

type portState struct {
	port
	Node string `json:"node"`
}

type connectorState struct {
	volConnector
	Node string `json:"node"`
}

type targetState struct {
	volTarget
	Node string `json:"node"`
}

// Snapshot returns the simulator's state as JSON: nodes with their states,
// pending transitions and deadlines, instance_uuid and instance_info,
// reservations, traits, ports and VIFs, volume connectors and targets.
// Restore reads it back.
func (s *Sim) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

func (s *Sim) snapshotLocked() ([]byte, error) {
	st := state{Version: stateVersion, SavedAt: s.now(), Seq: s.seq,
		Nodes: make([]nodeState, 0, len(s.order)), Ports: make([]portState, 0, len(s.portOrd)),
		Connectors: make([]connectorState, 0, len(s.connOrd)), Targets: make([]targetState, 0, len(s.tgtOrd))}
	for _, n := range s.order {
		st.Nodes = append(st.Nodes, nodeState{node: *n, Seq: n.seq, Pending: n.pending, Deadline: n.deadline,
			NoDeadline: n.noDeadline, DeployTime: n.deployTime, UndeployTime: n.undeployTime, FailNext: n.failNext,
			Hold: n.hold, MaintOffAt: n.maintOffAt, LockUntil: n.lockUntil})
	}
	for _, p := range s.portOrd {
		st.Ports = append(st.Ports, portState{port: *p, Node: p.nodeUUID})
	}
	for _, c := range s.connOrd {
		st.Connectors = append(st.Connectors, connectorState{volConnector: *c, Node: c.nodeUUID})
	}
	for _, t := range s.tgtOrd {
		st.Targets = append(st.Targets, targetState{volTarget: *t, Node: t.nodeUUID})
	}
	return json.Marshal(st)
}

// Restore replaces the simulator's nodes, ports and volume objects with a
// Snapshot's (fault rules and counters stay). Pending transitions keep their
// deadlines: on the real clock, a deploy that was due while the simulator
// was down has completed when the node is next read, as if the simulated
// Ironic had kept running (use Restart to model a conductor restart).
func (s *Sim) Restore(raw []byte) error {
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("ironicsim: restore: %w", err)
	}
	if st.Version != stateVersion {
		return fmt.Errorf("ironicsim: restore: state version %d, want %d", st.Version, stateVersion)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes, s.byName, s.byInstance = map[string]*node{}, map[string]*node{}, map[string]*node{}
	s.order, s.busy = nil, map[*node]struct{}{}
	s.ports, s.macs, s.portOrd = map[string]*port{}, map[string]*port{}, nil
	s.conns, s.connOrd = map[string]*volConnector{}, nil
	s.targets, s.tgtOrd = map[string]*volTarget{}, nil
	slices.SortFunc(st.Nodes, func(a, b nodeState) int { return cmp.Compare(a.Seq, b.Seq) })
	for i := range st.Nodes {
		ns := &st.Nodes[i]
		n := new(node)
		*n = ns.node
		n.pending, n.deadline, n.noDeadline = ns.Pending, ns.Deadline, ns.NoDeadline
		n.deployTime, n.undeployTime, n.failNext, n.hold = ns.DeployTime, ns.UndeployTime, ns.FailNext, ns.Hold
		n.maintOffAt, n.lockUntil = ns.MaintOffAt, ns.LockUntil
		s.seq = ns.Seq - 1
		s.insertNode(n) // sets n.seq from s.seq and the indexes
		s.markBusy(n)
	}
	s.seq = max(s.seq, st.Seq)
	for i := range st.Ports {
		p := new(port)
		*p = st.Ports[i].port
		p.nodeUUID = st.Ports[i].Node
		n := s.nodes[p.nodeUUID]
		if n == nil {
			return fmt.Errorf("ironicsim: restore: port %s of unknown node %s", p.UUID, p.nodeUUID)
		}
		s.ports[p.UUID], s.macs[p.Address] = p, p
		s.portOrd = append(s.portOrd, p)
		n.ports = append(n.ports, p)
	}
	for i := range st.Connectors {
		c := new(volConnector)
		*c = st.Connectors[i].volConnector
		c.nodeUUID = st.Connectors[i].Node
		s.conns[c.UUID] = c
		s.connOrd = append(s.connOrd, c)
	}
	for i := range st.Targets {
		t := new(volTarget)
		*t = st.Targets[i].volTarget
		t.nodeUUID = st.Targets[i].Node
		s.targets[t.UUID] = t
		s.tgtOrd = append(s.tgtOrd, t)
	}
	return nil
}

// persister keeps a Snapshot in a file; see Persist.
type persister struct {
	path  string
	onErr func(error)

	mu    sync.Mutex // one save at a time, in order
	saved uint64     // the change count the file holds
}

// Persist keeps the simulator's state in the file at path, so a process that
// restarts on the same file finds its nodes as they were. If the file
// exists, its state replaces the simulator's (restored is true). From then
// on every change is saved before it is answered: each Ironic API request
// other than GET and HEAD, and each call of the Go fault API (so the admin
// API too), writes a temporary file beside path, syncs it and renames it
// over path, so a kill -9 loses at most the request in flight and never
// leaves a torn file. Concurrent changes share one write. The file is mode
// 0600 (instance_info holds config drives). onErr, when not nil, hears of a
// failed save (the request is answered anyway). Call Persist once, before
// serving. Meant for development-sized inventories: each save writes every
// node.
func (s *Sim) Persist(path string, onErr func(error)) (restored bool, err error) {
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := s.Restore(raw); err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		restored = true
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("ironicsim: %w", err)
	}
	s.mu.Lock()
	s.persist = &persister{path: path, onErr: onErr}
	s.changes++
	s.mu.Unlock()
	return restored, s.save()
}

// StopPersisting waits for a save in flight, then saves no more: after it
// returns nothing writes the state file (a caller may remove its directory).
func (s *Sim) StopPersisting() {
	s.mu.Lock()
	p := s.persist
	s.persist = nil
	s.mu.Unlock()
	if p != nil {
		p.mu.Lock() // a save in flight holds it
		p.mu.Unlock()
	}
}

// changed records a change and saves it when persisting. Caller does not hold s.mu.
func (s *Sim) changed() {
	s.mu.Lock()
	s.changes++
	p := s.persist
	s.mu.Unlock()
	if p == nil {
		return
	}
	if err := s.save(); err != nil && p.onErr != nil {
		p.onErr(err)
	}
}

// save writes the state unless the file already holds every change so far.
func (s *Sim) save() error {
	s.mu.Lock()
	p := s.persist
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s.mu.Lock()
	n := s.changes
	if n == p.saved {
		s.mu.Unlock()
		return nil
	}
	raw, err := s.snapshotLocked()
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("ironicsim: save: %w", err)
	}
	if err := writeAtomic(p.path, raw); err != nil {
		return fmt.Errorf("ironicsim: save: %w", err)
	}
	p.saved = n
	return nil
}

// writeAtomic replaces path with raw: write a temporary file in the same
// directory, sync it, rename it over path, sync the directory.
func writeAtomic(path string, raw []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(raw)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// heldResponse holds an answer until the change it reports is saved.
type heldResponse struct {
	w    http.ResponseWriter
	code int
	body bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.w.Header() }

func (h *heldResponse) WriteHeader(code int) {
	if h.code == 0 {
		h.code = code
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if h.code == 0 {
		h.code = http.StatusOK
	}
	return h.body.Write(b)
}

func (h *heldResponse) flush() {
	if h.code == 0 {
		h.code = http.StatusOK
	}
	h.w.WriteHeader(h.code)
	_, _ = h.w.Write(h.body.Bytes())
}

// serveChange runs a handler that may change state, saving the change before
// the answer leaves when persisting.
func (s *Sim) serveChange(w http.ResponseWriter, handle func(w http.ResponseWriter)) {
	s.mu.Lock()
	persisting := s.persist != nil
	s.mu.Unlock()
	if !persisting {
		handle(w)
		return
	}
	held := &heldResponse{w: w}
	handle(held)
	s.changed()
	held.flush()
}
