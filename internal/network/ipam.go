package network

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/store"
)

var (
	// ErrPoolExhausted: every allocatable address of the network is taken.
	ErrPoolExhausted = errors.New("network: address pool exhausted")
	// ErrUnknownNetwork: no configured network has that id (or name).
	ErrUnknownNetwork = errors.New("network: unknown network")
	// ErrRefused: the network service will not give the server this port
	// (the address or the user's port is someone else's, the network is
	// gone, policy forbids it): the build fails on any node.
	ErrRefused = errors.New("network: port refused")
)

// maxPool bounds the addresses one network may offer (a /8), which bounds
// the bitmap (2 MiB).
const maxPool = 1 << 24

// Defaults fills what a Network leaves unset from its CIDR: Gateway = the
// first host, RangeStart = the second host, RangeEnd = the last host
// (network and broadcast addresses excluded, except in a /31 or /32).
// Only IPv4 networks are filled; others are returned unchanged.
func Defaults(n Network) Network {
	if n.Given || !n.CIDR.IsValid() || !n.CIDR.Addr().Is4() {
		return n
	}
	first, last := hosts(n.CIDR)
	if !n.Gateway.IsValid() {
		n.Gateway = first
	}
	if !n.RangeStart.IsValid() {
		n.RangeStart = first.Next()
		if !n.CIDR.Contains(n.RangeStart) { // a /32
			n.RangeStart = first
		}
	}
	if !n.RangeEnd.IsValid() {
		n.RangeEnd = last
	}
	return n
}

// hosts returns the first and last host addresses of an IPv4 prefix.
func hosts(p netip.Prefix) (first, last netip.Addr) {
	p = p.Masked()
	lo := u32(p.Addr())
	hi := lo | (1<<(32-p.Bits()) - 1)
	if p.Bits() <= 30 {
		lo, hi = lo+1, hi-1
	}
	return addr(lo), addr(hi)
}

func u32(a netip.Addr) uint32 { b := a.As4(); return binary.BigEndian.Uint32(b[:]) }

func addr(v uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

// MAC derives a port's MAC address from its id: the OpenStack prefix
// fa:16:3e and three bytes of the id's SHA-256. Stable for a given id.
func MAC(portID string) string {
	h := sha256.Sum256([]byte(portID))
	return fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", h[0], h[1], h[2])
}

// IPAM allocates one port (address + MAC) per server per network.
//
// The store's UNIQUE(network, ip) is the fence: several IPAMs (processes,
// replicas) may share a store and never hand out one address twice. Each
// IPAM keeps, per network, a bitmap of the addresses it believes taken,
// loaded lazily from the store's UsedAddresses; a stale bit costs one
// ErrAddressInUse and a retry on the next address, and an apparently full
// pool is reloaded once before ErrPoolExhausted. Safe for concurrent use;
// no lock is held across a store call but the initial load.
type IPAM struct {
	st   store.Store
	nets Networks
	now  func() time.Time

	mu    sync.Mutex
	pools map[string]*pool // by network id
}

// NewIPAM returns an IPAM over st for nets (Defaults applied to each).
func NewIPAM(st store.Store, nets Networks) *IPAM {
	ns := make(Networks, len(nets))
	for i, n := range nets {
		ns[i] = Defaults(n)
	}
	return &IPAM{st: st, nets: ns, now: time.Now, pools: map[string]*pool{}}
}

// Allocate returns the server's port on the network, creating it if there
// is none: the lowest free address of the range (never the network,
// broadcast or gateway address), a new UUID as port id, a MAC derived from
// it. Idempotent per (server, network), also across IPAMs sharing a store.
// networkID may be a network's id or name. ErrUnknownNetwork,
// ErrPoolExhausted, or the store's error.
func (m *IPAM) Allocate(ctx context.Context, serverID, networkID string) (store.Port, error) {
	return m.AllocateSlot(ctx, serverID, networkID, "")
}

// AllocateSlot is Allocate of the server's port on the network in slot
// (store.Port.Slot): "" is the one port of a build's network; any other
// slot is also the new port's id.
func (m *IPAM) AllocateSlot(ctx context.Context, serverID, networkID, slot string) (store.Port, error) {
	n, ok := m.nets.Lookup(networkID)
	if !ok {
		return store.Port{}, fmt.Errorf("%w: %s", ErrUnknownNetwork, networkID)
	}
	if p, ok, err := m.existing(ctx, serverID, n.ID, slot); err != nil || ok {
		return p, err
	}
	return m.create(ctx, n, store.Port{ServerID: serverID, NetworkID: n.ID, Slot: slot})
}

// AllocateAs is AllocateSlot of a port the caller has planned: want's ID
// (a new UUID when it and the slot are ""), VIFNode, MAC (MAC of the id
// when "") and Binding go into the same write as the address, so a port
// chosen for a NIC before it exists costs one write, not two. The server's
// port in want's slot, if one is recorded already, is returned as it is
// (the caller compares); there is no read before the write — the store's
// uniqueness of (server, network, slot) finds it.
func (m *IPAM) AllocateAs(ctx context.Context, want store.Port) (store.Port, error) {
	n, ok := m.nets.Lookup(want.NetworkID)
	if !ok {
		return store.Port{}, fmt.Errorf("%w: %s", ErrUnknownNetwork, want.NetworkID)
	}
	want.NetworkID = n.ID
	return m.create(ctx, n, want)
}

// create writes want with the lowest free address of n's range.
func (m *IPAM) create(ctx context.Context, n Network, want store.Port) (store.Port, error) {
	pl, err := m.pool(ctx, n)
	if err != nil {
		return store.Port{}, err
	}
	reloaded := false
	for {
		i, ok := pl.take()
		if !ok {
			if reloaded {
				return store.Port{}, fmt.Errorf("network %s (%s): %w", n.Name, n.ID, ErrPoolExhausted)
			}
			// Other processes may have freed addresses since we loaded.
			if err := pl.load(ctx, m.st); err != nil {
				return store.Port{}, err
			}
			reloaded = true
			continue
		}
		p := want
		switch {
		case p.ID == "" && p.Slot != "":
			p.ID = p.Slot
		case p.ID == "":
			p.ID = uuid.NewString()
		}
		if p.MAC == "" {
			p.MAC = MAC(p.ID)
		}
		p.IP, p.CreatedAt = pl.addr(i).String(), m.now().UTC()
		err := m.st.CreatePort(ctx, p)
		switch {
		case err == nil:
			pl.settle(i, true)
			return p, nil
		case errors.Is(err, store.ErrAddressInUse):
			pl.settle(i, true) // someone else holds it: keep it marked, try the next
		case errors.Is(err, store.ErrExists):
			// Recorded already (a concurrent Allocate, or an earlier try).
			pl.settle(i, false)
			if p, ok, err2 := m.existing(ctx, want.ServerID, n.ID, want.Slot); err2 != nil || ok {
				return p, err2
			}
			return store.Port{}, err
		default:
			pl.settle(i, false)
			return store.Port{}, err
		}
	}
}

func (m *IPAM) existing(ctx context.Context, serverID, networkID, slot string) (store.Port, bool, error) {
	ports, err := m.st.Ports(ctx, serverID)
	if err != nil {
		return store.Port{}, false, err
	}
	for _, p := range ports {
		if p.NetworkID == networkID && p.Slot == slot {
			return p, true, nil
		}
	}
	return store.Port{}, false, nil
}

// Free deletes the port and returns its address to the pool. Idempotent:
// an unknown port is not an error.
func (m *IPAM) Free(ctx context.Context, portID string) error {
	p, err := m.st.GetPort(ctx, portID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := m.st.DeletePort(ctx, portID); err != nil {
		return err
	}
	m.mu.Lock()
	pl := m.pools[p.NetworkID]
	m.mu.Unlock()
	if pl != nil {
		if a, err := netip.ParseAddr(p.IP); err == nil {
			pl.release(a)
		}
	}
	return nil
}

// pool returns the network's pool, loading it on first use.
func (m *IPAM) pool(ctx context.Context, n Network) (*pool, error) {
	m.mu.Lock()
	pl, ok := m.pools[n.ID]
	if !ok {
		var err error
		if pl, err = newPool(n); err != nil {
			m.mu.Unlock()
			return nil, err
		}
		m.pools[n.ID] = pl
	}
	m.mu.Unlock()
	if err := pl.ensureLoaded(ctx, m.st); err != nil {
		return nil, err
	}
	return pl, nil
}

// pool is one network's view of its range: bit i stands for base+i.
type pool struct {
	networkID string
	base      uint32
	size      int
	fixed     []int // never allocatable: network, broadcast, gateway

	loadMu sync.Mutex // one load at a time

	mu       sync.Mutex
	loaded   bool
	used     []uint64     // set: taken (in the store, in flight, or fixed)
	next     int          // every index below next is set
	inflight map[int]bool // taken here, CreatePort not answered yet
}

func newPool(n Network) (*pool, error) {
	if !n.CIDR.IsValid() || !n.CIDR.Addr().Is4() {
		return nil, fmt.Errorf("network %s: only IPv4 networks can allocate addresses (cidr %v)", n.ID, n.CIDR)
	}
	p := n.CIDR.Masked()
	if !n.RangeStart.IsValid() || !n.RangeEnd.IsValid() || !p.Contains(n.RangeStart) || !p.Contains(n.RangeEnd) ||
		u32(n.RangeStart) > u32(n.RangeEnd) {
		return nil, fmt.Errorf("network %s: range %v-%v is not inside %v", n.ID, n.RangeStart, n.RangeEnd, p)
	}
	base, end := u32(n.RangeStart), u32(n.RangeEnd)
	size := uint64(end) - uint64(base) + 1
	if size > maxPool {
		return nil, fmt.Errorf("network %s: range of %d addresses is larger than %d", n.ID, size, maxPool)
	}
	pl := &pool{networkID: n.ID, base: base, size: int(size), inflight: map[int]bool{}}
	skip := []netip.Addr{n.Gateway}
	if p.Bits() <= 30 {
		network := u32(p.Addr())
		skip = append(skip, addr(network), addr(network|(1<<(32-p.Bits())-1)))
	}
	for _, a := range skip {
		if i, ok := pl.index(a); ok {
			pl.fixed = append(pl.fixed, i)
		}
	}
	return pl, nil
}

func (pl *pool) index(a netip.Addr) (int, bool) {
	if !a.IsValid() || !a.Is4() {
		return 0, false
	}
	v := u32(a)
	if v < pl.base || uint64(v-pl.base) >= uint64(pl.size) {
		return 0, false
	}
	return int(v - pl.base), true
}

func (pl *pool) addr(i int) netip.Addr { return addr(pl.base + uint32(i)) }

func (pl *pool) set(i int)        { pl.used[i/64] |= 1 << (i % 64) }
func (pl *pool) clear(i int)      { pl.used[i/64] &^= 1 << (i % 64) }
func (pl *pool) isSet(i int) bool { return pl.used[i/64]&(1<<(i%64)) != 0 }

func (pl *pool) ensureLoaded(ctx context.Context, st store.Store) error {
	pl.loadMu.Lock()
	defer pl.loadMu.Unlock()
	pl.mu.Lock()
	loaded := pl.loaded
	pl.mu.Unlock()
	if loaded {
		return nil
	}
	return pl.load(ctx, st)
}

// load (re)builds the bitmap from the store, keeping in-flight addresses.
func (pl *pool) load(ctx context.Context, st store.Store) error {
	used, err := st.UsedAddresses(ctx, pl.networkID)
	if err != nil {
		return fmt.Errorf("network %s: used addresses: %w", pl.networkID, err)
	}
	bm := make([]uint64, (pl.size+63)/64)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.used = bm
	// Bits past the end of the range are set, so a scan never returns them.
	for i := pl.size; i < len(bm)*64; i++ {
		pl.set(i)
	}
	for _, i := range pl.fixed {
		pl.set(i)
	}
	for _, s := range used {
		if a, err := netip.ParseAddr(s); err == nil {
			if i, ok := pl.index(a); ok {
				pl.set(i)
			}
		}
	}
	for i := range pl.inflight {
		pl.set(i)
	}
	pl.next = 0
	pl.loaded = true
	return nil
}

// take marks the lowest free index in flight and returns it.
func (pl *pool) take() (int, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for w := pl.next / 64; w < len(pl.used); w++ {
		if pl.used[w] == ^uint64(0) {
			continue
		}
		i := w*64 + bits.TrailingZeros64(^pl.used[w])
		pl.set(i)
		pl.inflight[i] = true
		pl.next = i + 1
		return i, true
	}
	pl.next = pl.size
	return 0, false
}

// settle ends an in-flight take: kept marks the address taken for good,
// otherwise it is free again.
func (pl *pool) settle(i int, kept bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	delete(pl.inflight, i)
	if !kept {
		pl.free(i)
	}
}

// release returns an address freed in the store to the pool.
func (pl *pool) release(a netip.Addr) {
	i, ok := pl.index(a)
	if !ok {
		return
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if !pl.loaded || pl.inflight[i] {
		return
	}
	for _, f := range pl.fixed {
		if f == i {
			return
		}
	}
	pl.free(i)
}

func (pl *pool) free(i int) {
	if pl.isSet(i) {
		pl.clear(i)
		pl.next = min(pl.next, i)
	}
}
